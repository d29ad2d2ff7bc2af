# variants.gp: the variants of a scenario side by side, from variants.csv.
#
#   gnuplot -c plots/variants.gp DIR/variants.csv OUT.svg|OUT.png [TITLE]
#
# Input: variants.csv of `retrysim run --out DIR` (one row per variant: variant, calls, ok,
# failed, success_ratio, attempts, amplification, goodput_per_s, latency_p50_ms,
# latency_p99_ms, latency_p999_ms, duplicates, wasted_work_s, recovered, recovery_s).
# Four bar charts, one bar per variant in the file's order: front-door attempts/call (the
# amplification column: attempts per call the clients started), goodput (calls/s), p99
# latency (ms) and success ratio. Values are written above
# the bars (vertically when the bars are narrow); an empty field leaves its bar out and
# writes n/a.

me = "variants.gp"
usage = "usage: gnuplot -c plots/variants.gp DIR/variants.csv OUT.svg|OUT.png [TITLE]"

# ---------------------------------------------------------------- arguments and checks
if (ARGC < 2) { print me . ": " . usage; exit status 2 }
datafile = ARG1
outfile = ARG2
sq(s) = strstrt(s, "'") == 0 ? s : s[1:strstrt(s, "'") - 1] . "'\\''" . sq(s[strstrt(s, "'") + 1:])
q(s) = "'" . sq(s) . "'"
ext = strlen(outfile) > 4 ? outfile[strlen(outfile) - 3:] : ""
if (ext ne ".svg" && ext ne ".SVG" && ext ne ".png" && ext ne ".PNG") {
    print me . ": output file must end in .svg or .png, got '" . outfile . "'"
    print me . ": " . usage
    exit status 2
}
if (system("test -f " . q(datafile) . " && test -r " . q(datafile) . " && echo ok") ne "ok") {
    print me . ": cannot read data file '" . datafile . "'"
    exit status 1
}
header = system("head -n 1 " . q(datafile) . " | tr -d '\\r' | tr ',' ' '")
has(c) = strstrt(" " . header . " ", " " . c . " ") > 0
if (word(header, 1) ne "variant") {
    print me . ": '" . datafile . "' is not a variants CSV (its header must start with variant)"
    exit status 1
}
if (!has("amplification") && !has("goodput_per_s") && !has("latency_p99_ms") && !has("success_ratio")) {
    print me . ": '" . datafile . "' is not a variants CSV (it has none of the columns " . \
          "amplification, goodput_per_s, latency_p99_ms, success_ratio)"
    exit status 1
}
# variant names (letters, digits, _ . -), one per row, in the file's order
variants = system("tail -n +2 " . q(datafile) . " | tr -d '\\r' | cut -d, -f1 | awk 'NF' | tr '\\n' ' '")
nv = words(variants)
if (nv < 1) {
    print me . ": no data rows in '" . datafile . "'"
    exit status 1
}
if (ARGC >= 3 && strlen(ARG3) > 0) {
    title = ARG3
} else {
    title = system("f=" . q(datafile) . "; d=$(basename -- \"$(dirname -- \"$f\")\"); " . \
                   "b=$(basename -- \"$f\"); if [ \"$d\" = . ]; then printf %s \"$b\"; " . \
                   "else printf %s \"$d/$b\"; fi")
}

# ---------------------------------------------------------------- scan the data
set datafile separator comma
set datafile columnheaders          # the first line names the columns
# the panels: column, panel title, y label, value format
cols = "amplification goodput_per_s latency_p99_ms success_ratio"
ptitle(c) = c eq "amplification" ? "front-door attempts/call" : c eq "goodput_per_s" ? "goodput" : \
            c eq "latency_p99_ms" ? "latency p99" : "success ratio"
plabel(c) = c eq "amplification" ? "attempts per client call" : c eq "goodput_per_s" ? "calls/s (ok within deadline)" : \
            c eq "latency_p99_ms" ? "latency (ms)" : "ok calls / calls"
pfmt(c) = (c eq "success_ratio" || c eq "amplification") ? "%.3f" : ""

# the largest value of each column (0 when it has none)
nvalid = 0; vmax = NaN
countv(v) = (v == v) ? (nvalid = nvalid + 1, vmax = (vmax == vmax && vmax > v) ? vmax : v, 0) : 0
maxes = ""
do for [c in cols] {
    nvalid = 0; vmax = NaN
    if (has(c)) { stats datafile using (countv(column(c))) nooutput }
    maxes = maxes . sprintf(" %.12g", nvalid > 0 ? vmax : NaN)
}

# ---------------------------------------------------------------- output
if (ext eq ".svg" || ext eq ".SVG") {
    set terminal svg size 1200,800 dynamic font "Sans,10" background "white"
} else {
    set terminal pngcairo size 1200,800 font "Sans,10"
}
set termoption noenhanced
set output outfile

palette = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf"
do for [i = 1:10] { set linetype i lc rgb word(palette, i) lw 1 }
set linetype cycle 10

# names: rotated when they do not fit under their bar; room below each row for them
maxlen = 1
do for [i = 1:nv] { maxlen = strlen(word(variants, i)) > maxlen ? strlen(word(variants, i)) : maxlen }
slot = 500.0 / nv                            # pixels per bar, roughly
if (maxlen * 6.5 > slot * 0.95) {
    set xtics rotate by 35 right offset 0.3, 0
    labh = (maxlen * 6.3 * sin(35 * pi / 180) + 30) / 800.0
} else {
    set xtics norotate
    labh = 24 / 800.0
}
labh = labh > 0.3 ? 0.3 : labh
nz(v) = v == v ? v : 0                      # an empty value: "n/a" at the bottom
# values above the bars: horizontal when they fit, else vertical (with more headroom)
vrot = slot < 36
head = vrot ? 1.3 : 1.15
vtext(v, f) = v != v ? "n/a" : f ne "" ? sprintf(f, v) : abs(v) >= 1000 ? sprintf("%.0f", v) : sprintf("%.4g", v)

set style fill solid 0.85 border lc rgb "#404040"
set boxwidth 0.7
set xrange [-0.6 : nv - 0.4]
set grid ytics lc rgb "#e0e0e0" lt 1 lw 1
set border 3 lc rgb "#404040"
set tics nomirror out scale 0.6
set xtics scale 0
set ytics
unset key

# 2 x 2 panels; each row leaves labh below it for the names and a line above for its title
TOP = 0.90; ROWTITLE = 0.05
H = (TOP - ROWTITLE - 2 * labh) / 2
set multiplot title title font "Sans,12"
do for [p = 1:4] {
    c = word(cols, p)
    row = (p - 1) / 2; colm = (p - 1) % 2
    ptop = TOP - row * (H + labh + ROWTITLE)
    set tmargin at screen ptop
    set bmargin at screen ptop - H
    set lmargin at screen 0.075 + colm * 0.5
    set rmargin at screen 0.475 + colm * 0.5
    m = real(word(maxes, p))
    set title ptitle(c) font ",11"
    set ylabel plabel(c)
    unset arrow; unset label
    if (c eq "amplification") {
        # 1 attempt per call: no retries
        set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "#606060" front
    }
    if (c eq "success_ratio") {
        set yrange [0 : vrot ? 1.3 : 1.12]; set ytics 0, 0.2, 1
    } else {
        set ytics autofreq
        if (m == m && m > 0) { set yrange [0 : m * head] } else { set yrange [0:1] }
    }
    if (m == m) {
        if (!vrot) {
            plot datafile using 0:(column(c)):(column(0) + 1):xtic(strcol("variant")) with boxes lc variable, \
                 datafile using 0:(nz(column(c))):(vtext(column(c), pfmt(c))) with labels offset 0, 0.7 font ",9" tc rgb "#202020"
        } else {
            plot datafile using 0:(column(c)):(column(0) + 1):xtic(strcol("variant")) with boxes lc variable, \
                 datafile using 0:(nz(column(c))):(vtext(column(c), pfmt(c))) with labels rotate by 90 left offset 0, 0.4 font ",9" tc rgb "#202020"
        }
    } else {
        set label 99 "no " . c . " values" at graph 0.5, 0.5 center
        plot datafile using 0:(0):xtic(strcol("variant")) with points pt -1 notitle
    }
}
unset multiplot
set output
