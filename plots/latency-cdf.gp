# latency-cdf.gp: latency distribution of every run, from latency.csv.
#
#   gnuplot -c plots/latency-cdf.gp DIR/latency.csv OUT.svg|OUT.png [TITLE]
#
# Input: latency.csv of `retrysim run --out DIR` (variant,lo_ms,hi_ms,count,
# cumulative_fraction: one histogram per run). Left: the CDF of each variant on a log time
# axis. Right: the tail, 1 - F (the share of calls slower than x), on log-log axes, so that
# p99 and p99.9 differences show; dashed reference lines at 0.01 (p99) and 0.001 (p99.9).
# One line per variant, in the file's order. Each histogram bucket is drawn as a rise from
# (lo_ms, F before it) to (hi_ms, F after it), joined by flat segments between buckets; the
# last drop of the tail goes down to the axis. Calls of 0 ms (refused locally, e.g. by an
# open breaker) cannot sit on a log axis: their share is given in the legend.

me = "latency-cdf.gp"
usage = "usage: gnuplot -c plots/latency-cdf.gp DIR/latency.csv OUT.svg|OUT.png [TITLE]"

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
if (!has("variant") || !has("lo_ms") || !has("hi_ms") || !has("cumulative_fraction")) {
    print me . ": '" . datafile . "' is not a latency CSV (it needs the columns " . \
          "variant, lo_ms, hi_ms and cumulative_fraction)"
    exit status 1
}
if (ARGC >= 3 && strlen(ARG3) > 0) {
    title = ARG3
} else {
    title = system("f=" . q(datafile) . "; d=$(basename -- \"$(dirname -- \"$f\")\"); " . \
                   "b=$(basename -- \"$f\"); if [ \"$d\" = . ]; then printf %s \"$b\"; " . \
                   "else printf %s \"$d/$b\"; fi")
}
# variant names (letters, digits, _ . -), in order of first appearance; the first column
# is `variant` in every latency.csv
variants = system("tail -n +2 " . q(datafile) . " | tr -d '\\r' | cut -d, -f1 | awk 'NF && !seen[$0]++' | tr '\\n' ' '")
nv = words(variants)

# ---------------------------------------------------------------- scan the data
set datafile separator comma
set datafile columnheaders          # the first line names the columns
# the x range (bucket bounds > 0), the smallest positive 1 - F (bottom of the tail panel),
# and xmed, the smallest median of the variants, where the tail panel starts
npos = 0; xmin = NaN; xmax = NaN; xmed = NaN; tmin = NaN
mn(a, b) = (a == a && a < b) ? a : b
mx(a, b) = (a == a && a > b) ? a : b
scan(lo, hi, f) = (hi > 0 && f == f) ? (npos = npos + 1, \
             xmin = mn(xmin, lo > 0 ? lo : hi), xmax = mx(xmax, hi), \
             xmed = (f >= 0.5) ? mn(xmed, hi) : xmed, \
             tmin = (1 - f > 0) ? mn(tmin, 1 - f) : tmin, 0) : 0
if (nv > 0) {
    stats datafile using (scan(column("lo_ms"), column("hi_ms"), column("cumulative_fraction"))) nooutput
}
# the share of 0 ms calls of each variant goes into its legend entry
keyt = ""
do for [i = 1:nv] {
    z = 0
    stats datafile using ((strcol("variant") eq word(variants, i) && column("hi_ms") <= 0) ? \
          (z = column("cumulative_fraction"), 0) : 0) nooutput
    keyt = keyt . sprintf(" \"%s%s\"", word(variants, i), z > 0 ? sprintf(" (%.3g%% at 0 ms)", 100 * z) : "")
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
vcol(i) = word(palette, (i - 1) % 10 + 1)
vdt(i) = 1 + int((i - 1) / 10) % 4          # beyond 10 variants, dashed lines

# Per row, st() sets Fp and hp, the cumulative fraction and upper bound of the previous
# bucket of the same variant (0 and NaN at a variant's first bucket). pos() drops x <= 0.
Fl = 0; hl = NaN; pv = ""; Fp = 0; hp = NaN
st(dummy) = (first = (column(0) == 0 || strcol("variant") ne pv), \
             Fp = first ? 0 : Fl, hp = first ? NaN : hl, \
             Fl = column("cumulative_fraction"), hl = column("hi_ms"), pv = strcol("variant"), 0)
pos(x) = x > 0 ? x : NaN
is(i) = strcol("variant") eq word(variants, i)
# y of the tail: 1 - F, and below the panel's bottom ybot when it is 0
# (a decade below the data, and never above 1e-4, so that the p99.9 line shows)
ybot = (tmin == tmin && tmin < 1e-3) ? 10 ** floor(log10(tmin)) : 1e-4
tl(f) = 1 - f > 0 ? 1 - f : ybot / 10
# one plot per variant and panel: the flat segment from the previous bucket, then the rise
# (G: y of a cumulative fraction, CDF or tail)
RISE = "for [i = 1:nv] datafile using (st(0) + (is(i) ? pos(column('lo_ms')) : NaN)):(G(Fp))" . \
       ":(column('hi_ms') - column('lo_ms')):(G(column('cumulative_fraction')) - G(Fp)) " . \
       "with vectors nohead lw 1.5 lc rgb vcol(i) dt vdt(i) title word(keyt, i)"
FLAT = "for [i = 1:nv] datafile using (st(0) + (is(i) ? pos(hp) : NaN)):(G(Fp))" . \
       ":(column('lo_ms') - hp):(0) with vectors nohead lw 1.5 lc rgb vcol(i) dt vdt(i) notitle"

# room on the right for the legend: as wide as the longest entry needs
maxlen = 12
do for [i = 1:nv] { maxlen = strlen(word(keyt, i)) > maxlen ? strlen(word(keyt, i)) : maxlen }
R = 1 - 0.03 - (maxlen * 6.6 + 50) / 1200.0
R = R < 0.55 ? 0.55 : R > 0.85 ? 0.85 : R
L = 0.07; TOP = 0.90; BOT = 0.09; MID = 0.08
W = (R - L - MID) / 2

# x axes from whole decades; the top one, unless the largest bucket is just past a decade
# (1000.5 ms), then a little past it
xtop = xmax == xmax ? (xmax <= 1.1 * 10 ** floor(log10(xmax)) ? xmax * 1.1 : 10 ** ceil(log10(xmax))) : 1000
set grid xtics ytics lc rgb "#e0e0e0" lt 1 lw 1
set border 3 lc rgb "#404040"
set tics nomirror out scale 0.6
set logscale x
set format x "%g"
set xlabel "latency (ms)"
if (npos > 0) {
    set xrange [10 ** floor(log10(xmin)) : xtop]
} else {
    set xrange [1:1000]
}
set multiplot title title font "Sans,12"
set tmargin at screen TOP
set bmargin at screen BOT
set key at screen R + 0.02, screen TOP left top Left reverse samplen 2.5 spacing 1.15 \
    nobox title "variant" font ",10"
if (nv == 0) { unset key }

# ---- left: CDF
set lmargin at screen L
set rmargin at screen L + W
set title "CDF" font ",11"
set ylabel "fraction of calls at or below"
set yrange [0:1]
set ytics 0, 0.1, 1
set arrow 1 from graph 0, first 0.5 to graph 1, first 0.5 nohead dt 2 lc rgb "#909090" back
set arrow 2 from graph 0, first 0.99 to graph 1, first 0.99 nohead dt 2 lc rgb "#909090" back
set label 1 "p50" at graph 0.01, first 0.5 offset 0, 0.6 tc rgb "#606060" font ",9"
set label 2 "p99" at graph 0.01, first 0.99 offset 0, -0.7 tc rgb "#606060" font ",9"
G(f) = f
if (npos > 0) {
    plot @RISE, @FLAT
} else {
    set label 99 "no latency values" at graph 0.5, 0.3 center
    plot NaN notitle
    unset label 99
}
unset arrow; unset label

# ---- right: tail, 1 - F
set lmargin at screen L + W + MID
set rmargin at screen R
set title "tail: 1 - CDF (log-log)" font ",11"
set ylabel "fraction of calls slower than"
set logscale y
set format y "%g"
set ytics autofreq
set yrange [ybot : 1]
# the tail starts at the smallest median
if (xmed == xmed && xmed < xmax) { set xrange [10 ** floor(log10(xmed)) : xtop] }
set arrow 1 from graph 0, first 0.01 to graph 1, first 0.01 nohead dt 2 lc rgb "#909090" back
set arrow 2 from graph 0, first 0.001 to graph 1, first 0.001 nohead dt 2 lc rgb "#909090" back
set label 1 "p99" at graph 0.01, first 0.01 offset 0, 0.6 tc rgb "#606060" font ",9"
set label 2 "p99.9" at graph 0.01, first 0.001 offset 0, 0.6 tc rgb "#606060" font ",9"
unset key
G(f) = tl(f)
if (npos > 0) {
    plot @RISE, @FLAT
} else {
    set label 99 "no latency values" at graph 0.5, 0.3 center
    plot NaN notitle
    unset label 99
}
unset multiplot
set output
