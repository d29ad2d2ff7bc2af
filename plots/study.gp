# study.gp: what a study without a sweep found, per variant, in one of three pictures.
#
#   gnuplot -e "kind='spread'|'share'|'paired'" [-e "metrics='M1 M2 ...'"] \
#           -c plots/study.gp DIR/FILE.csv OUT.svg|OUT.png [TITLE]
#
#   spread  runs.csv: each metric's value in every replication, one column of points per
#           variant (spread sideways by replication so equal values stay visible), with the
#           mean as a bar and the range as a thin line. Default metrics: goodput_per_s,
#           calls.attempts_per_call, latency_ms.p99.
#   share   points.csv: a proportion per variant (default recovery.recovered: P(recovered)) with
#           its Wilson interval as a bar, on 0..1.
#   paired  paired.csv: each variant minus the baseline over the same seeds, the mean difference
#           with its interval as a horizontal bar and a line at zero. Default metrics:
#           goodput_per_s, calls.attempts_per_call, latency_ms.p99, recovery.recovered.
#   series  series.csv: goodput over time per variant, the mean over the replications as a
#           line and the band from their 10th to their 90th percentile in each bucket, the
#           mean offered load dotted (drawn by study-series.gp, which this loads).
# One panel per metric that the file has (metrics without a value are left out). Only the
# study's first point is drawn. In spread and share the variants keep the colours of sweep.gp
# and compare.gp (paired.csv does not list the baseline, so its bars are all one colour).

me = "study.gp"
usage = "usage: gnuplot -e \"kind='spread|share|paired|series'\" [-e \"metrics='M ...'\"] -c plots/study.gp FILE.csv OUT.svg|OUT.png [TITLE]"

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
if (!exists("kind")) { kind = "spread" }
if (kind ne "spread" && kind ne "share" && kind ne "paired" && kind ne "series") {
    print me . ": kind must be spread, share, paired or series, got '" . kind . "'"
    exit status 2
}
if (system("test -f " . q(datafile) . " && test -r " . q(datafile) . " && echo ok") ne "ok") {
    print me . ": cannot read data file '" . datafile . "'"
    exit status 1
}
pdir = system("dirname -- " . q(ARG0))
pa(args) = "awk -v kind=" . kind . " " . args . " -f " . q(pdir . "/csv.awk") . " -f " . q(pdir . "/study.awk") . " " . q(datafile)
lines(args) = system(pa(args) . " | tr '\\n' ' '")
check = system(pa("-v mode=check"))
if (check ne "ok") {
    print me . ": '" . datafile . "' cannot be drawn (" . check . ")"
    exit status 1
}
if (kind eq "series") {
    # load gives the loaded file its own ARGC and ARGn: the title goes by name
    title_arg = ARGC >= 3 ? ARG3 : ""
    load pdir . "/study-series.gp"
    exit
}
if (!exists("metrics")) {
    metrics = kind eq "spread" ? "goodput_per_s calls.attempts_per_call latency_ms.p99" : \
              kind eq "share" ? "recovery.recovered" : \
              "goodput_per_s calls.attempts_per_call latency_ms.p99 recovery.recovered"
}
M(m) = " -v m=" . q(m)
drawn = ""
do for [i = 1:words(metrics)] {
    if (system(pa("-v mode=has" . M(word(metrics, i)))) eq "1") { drawn = drawn . " " . word(metrics, i) }
}
nm = words(drawn)
if (nm == 0) {
    print me . ": '" . datafile . "' has none of the metrics '" . metrics . "'"
    exit status 1
}
variants = lines("-v mode=variants")
nv = words(variants)
base = kind eq "paired" ? system(pa("-v mode=baseline")) : ""
if (ARGC >= 3 && strlen(ARG3) > 0) {
    title = ARG3
} else {
    title = system("f=" . q(datafile) . "; d=$(basename -- \"$(dirname -- \"$f\")\"); " . \
                   "b=$(basename -- \"$f\"); if [ \"$d\" = . ]; then printf %s \"$b\"; " . \
                   "else printf %s \"$d/$b\"; fi")
}

# ---------------------------------------------------------------- labels
label_of(m) = m eq "recovery.recovered" ? "P(recovered)" : \
    m eq "goodput_per_s" ? "goodput (calls/s)" : \
    m eq "calls.attempts_per_call" ? "front-door attempts/call" : \
    m eq "latency_ms.p99" ? "p99 latency (ms)" : \
    m eq "recovery.recovery_s" ? "recovery time (s)" : m
sub_of = kind eq "spread" ? "each replication's value; bar: the mean, thin line: the range" : \
         kind eq "share" ? "the share of replications, with its Wilson interval" : \
         "each variant minus " . base . " over the same seeds, with its interval"

# ---------------------------------------------------------------- output
cols = nm <= 1 ? 1 : 2
rows = (nm + cols - 1) / cols
height = rows <= 1 ? 600 : 420 * rows + 80
if (ext eq ".svg" || ext eq ".SVG") {
    set terminal svg size 1200,height dynamic font "Sans,10" background "white"
} else {
    set terminal pngcairo size 1200,height font "Sans,10"
}
set termoption noenhanced
set output outfile
palette = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf"
do for [i = 1:10] { set linetype i lc rgb word(palette, i) lw 1.5 pt 7 ps 0.6 }
do for [i = 11:20] { set linetype i lc rgb word(palette, i - 10) lw 1.5 dt 2 pt 5 ps 0.6 }
set linetype cycle 20
set datafile separator whitespace
set grid xtics ytics lc rgb "#e0e0e0" lt 1 lw 1
set border 3 lc rgb "#404040"
set tics nomirror out scale 0.6
set bars small
unset key

# the variants as categories on the axis that is not the metric's
set_categories(axis) = 0
if (kind eq "paired") {
    set ytics ()
    do for [i = 1:nv] { if (word(variants, i) ne base) { set ytics add (word(variants, i) i - 1) } }
    set yrange [-0.6 : nv - 0.4] reverse
} else {
    set xtics () rotate by -20
    do for [i = 1:nv] { set xtics add (word(variants, i) i - 1) }
    set xrange [-0.6 : nv - 0.4]
}
# a replication's place beside its variant's column: the golden-ratio sequence, so equal values
# spread evenly whatever the number of replications, the same for the same file
jit(r) = ((r * 0.6180339887) - floor(r * 0.6180339887) - 0.5) * 0.5

TOP = 0.90; BOT = 0.02
PW = 1.0 / cols
PH = (TOP - BOT) / rows
set multiplot title title . "\n" . sub_of font "Sans,12"
do for [p = 1:nm] {
    m = word(drawn, p)
    r = (p - 1) / cols; c = (p - 1) % cols
    set lmargin at screen c * PW + (kind eq "paired" ? 0.14 : 0.07)
    set rmargin at screen (c + 1) * PW - 0.04
    set tmargin at screen TOP - r * PH - 0.04
    set bmargin at screen TOP - (r + 1) * PH + (kind eq "paired" ? 0.06 : 0.10)
    set title label_of(m) font ",11"
    rg = system(pa("-v mode=range" . M(m)))
    lo = real(word(rg, 1)); hi = real(word(rg, 2))
    pad = hi > lo ? 0.06 * (hi - lo) : (hi != 0 ? 0.06 * abs(hi) : 1)
    D = "< " . pa("-v mode=data" . M(m))
    unset arrow
    if (kind eq "spread") {
        set yrange [(lo >= 0 && lo - pad < 0) ? 0 : lo - pad : hi + pad]
        S = "< " . pa("-v mode=summary" . M(m))
        plot D using ($1 + jit($2)):3:($1 + 1) with points pt 7 ps 0.5 lc variable, \
             S using ($1 - 0.3):2:(0.6):(0) with vectors nohead lw 3 lc rgb "#202020", \
             S using ($1 + 0.36):3:(0):($4 - $3) with vectors nohead lw 1 lc rgb "#808080"
    }
    if (kind eq "share") {
        set yrange [-0.02 : 1.02]; set ytics 0, 0.1, 1
        plot D using 1:2:3:4:($1 + 1) with yerrorbars pt 7 ps 1.2 lw 2 lc variable
    }
    if (kind eq "paired") {
        xl = lo < 0 ? lo : 0; xh = hi > 0 ? hi : 0
        pad = xh > xl ? 0.06 * (xh - xl) : 1
        set xrange [xl - pad : xh + pad]
        set arrow 1 from first 0, graph 0 to first 0, graph 1 nohead dt 2 lc rgb "#606060" front
        plot D using 2:1:3:4 with xerrorbars pt 7 ps 1 lw 2 lc rgb "#404040"
    }
}
unset multiplot
set output
