# sweep.gp: one metric of a study against one of its axes, from points.csv.
#
#   gnuplot [-e "metric='M'; axis='PATH'; logx=0|1; hline=P"] -c plots/sweep.gp \
#           DIR/points.csv OUT.svg|OUT.png [TITLE]
#
# Input: points.csv of a study (`retrysim run ... --sweep ... --out DIR`): point,<axis columns
# named by path>,variant,metric,n,mean,sd,lo,hi,half_width. One line per variant (the file's
# order and colours), its mean at each value of the axis, with the interval [lo, hi] as a bar.
#   metric  the metric drawn (default: goodput_per_s when the file has it, else its first metric)
#   axis    the x axis (default: the first axis column); with other axes, one panel per
#           combination of their values
#   logx    1: log x axis, 0: linear (default: log when every value is > 0 and the largest is at
#           least 50 times the smallest)
#   hline   draws a dashed horizontal line at this value (the p of a search, say 0.95)
#   only    the variants drawn, separated by spaces (default: every variant); each keeps the
#           colour of its place in the file, so pictures of subsets of one file agree
#   axislabel  the name of the x axis (default: the axis's column, its path); its unit is added
# Values such as 400/s or 250ms are drawn as their number, the unit in the axis label; an axis
# whose values are not numbers (fifo, lifo) is drawn as categories in the file's order.

me = "sweep.gp"
usage = "usage: gnuplot [-e \"metric='M'; axis='PATH'\"] -c plots/sweep.gp DIR/points.csv OUT.svg|OUT.png [TITLE]"

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
pdir = system("dirname -- " . q(ARG0))
pa(args) = "awk " . args . " -f " . q(pdir . "/csv.awk") . " -f " . q(pdir . "/points.awk") . " " . q(datafile)
lines(args) = system(pa(args) . " | tr '\\n' ' '")
check = system(pa("-v mode=check"))
if (check ne "ok") {
    print me . ": '" . datafile . "' is not a points.csv (" . check . ")"
    exit status 1
}
axes = lines("-v mode=axes")
if (words(axes) < 1) {
    print me . ": '" . datafile . "' has no axis column (a study without a sweep has one point: nothing to draw)"
    exit status 1
}
metrics = lines("-v mode=metrics")
has_metric(x) = strstrt(" " . metrics . " ", " " . x . " ") > 0
if (!exists("metric")) { metric = has_metric("goodput_per_s") ? "goodput_per_s" : word(metrics, 1) }
if (!has_metric(metric)) {
    print me . ": '" . datafile . "' has no metric '" . metric . "' (it has " . \
          (words(metrics) > 12 ? "for example " : "") . metrics[1:(strlen(metrics) > 400 ? 400 : strlen(metrics))] . ")"
    exit status 1
}
if (!exists("axis")) { axis = word(axes, 1) }
if (strstrt(" " . axes . " ", " " . axis . " ") == 0) {
    print me . ": '" . datafile . "' has no axis '" . axis . "' (its axes: " . axes . ")"
    exit status 1
}
A = " -v ax=" . q(axis)
M = " -v m=" . q(metric)
variants = lines("-v mode=variants")
nv = words(variants)
if (!exists("only")) { only = variants }
drawn(v) = strstrt(" " . only . " ", " " . v . " ") > 0
ndrawn = 0
do for [i = 1:nv] { ndrawn = ndrawn + (drawn(word(variants, i)) ? 1 : 0) }
if (ndrawn == 0) {
    print me . ": none of the variants '" . only . "' is in '" . datafile . "' (it has " . variants . ")"
    exit status 1
}
facets = lines("-v mode=facets" . A)
nf = words(facets)
numx = system(pa("-v mode=numeric" . A)) eq "1"
intx = numx && system(pa("-v mode=integer" . A)) eq "1"
unit = system(pa("-v mode=unit" . A))
xvals = lines("-v mode=values" . A . M)
nxv = words(xvals)
isprop = system(pa("-v mode=isprop" . M)) eq "1"
yr = system(pa("-v mode=range" . M))
if (nv < 1 || strlen(yr) == 0) {
    print me . ": no values of '" . metric . "' in '" . datafile . "'"
    exit status 1
}
ymin = real(word(yr, 1)); ymax = real(word(yr, 2))
if (numx) {
    xr = system(pa("-v mode=xrange" . A))
    xmin = real(word(xr, 1)); xmax = real(word(xr, 2))
    if (!exists("logx")) { logx = (xmin > 0 && xmax >= 50 * xmin) ? 1 : 0 }
    if (logx && !(xmin > 0)) { logx = 0 }
} else {
    logx = 0; xmin = 0; xmax = nxv - 1
}
if (ARGC >= 3 && strlen(ARG3) > 0) {
    title = ARG3
} else {
    title = system("f=" . q(datafile) . "; d=$(basename -- \"$(dirname -- \"$f\")\"); " . \
                   "b=$(basename -- \"$f\"); if [ \"$d\" = . ]; then printf %s \"$b\"; " . \
                   "else printf %s \"$d/$b\"; fi")
}

# ---------------------------------------------------------------- labels
unitname(u) = u eq "/s" ? "per s" : u eq "%" ? "%" : u
xlabel = (exists("axislabel") ? axislabel : axis) . (strlen(unit) > 0 ? " (" . unitname(unit) . ")" : "")
endswith(s, t) = strlen(s) >= strlen(t) && s[strlen(s) - strlen(t) + 1:] eq t
ylabel_of(m) = m eq "recovery.recovered" ? "P(recovered)" : \
    m eq "p_storm" ? "P(storm)" : \
    strstrt(m, "amplification") == 1 || endswith(m, "attempts_per_call") || endswith(m, "arrivals_per_call") ? m . " (attempts per call)" : \
    endswith(m, "_per_s") ? m . " (per s)" : \
    strstrt(m, "latency") > 0 && strstrt(m, "_ms") > 0 ? m . " (ms)" : \
    endswith(m, "_s") ? m . " (s)" : \
    endswith(m, "ratio") || endswith(m, "utilization") ? m . " (share)" : \
    isprop ? m . " (share of replications)" : m
# a facet key path=value|path=value, readable
readable(k) = k eq "-" ? "" : strstrt(k, "|") == 0 ? k : k[1:strstrt(k, "|") - 1] . ", " . readable(k[strstrt(k, "|") + 1:])

# ---------------------------------------------------------------- output
cols = nf <= 1 ? 1 : nf <= 2 ? 2 : nf <= 4 ? 2 : 3
rows = (nf + cols - 1) / cols
height = rows <= 1 ? 700 : 400 * rows + 100
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
set xlabel xlabel
set ylabel ylabel_of(metric)
set bars small
if (logx) { set logscale x } else { unset logscale x }
# the variants side by side around each x, so that their bars do not hide each other
span = logx ? log(xmax / xmin) : xmax - xmin
span = span > 0 ? span : 1
step = nxv > 1 ? span / (nxv - 1) : 1
rank(i) = i < 1 ? 0 : rank(i - 1) + (drawn(word(variants, i)) ? 1 : 0)
dodge(i) = ndrawn > 1 ? (rank(i) - (ndrawn + 1) / 2.0) * 0.35 * step / ndrawn : 0
xat(x, i) = logx ? x * exp(dodge(i)) : x + dodge(i)
pad = 0.04 * span + (ndrawn > 1 ? 0.2 * step : 0)
if (logx) { set xrange [xmin * exp(-pad) : xmax * exp(pad)] } else { set xrange [xmin - pad : xmax + pad] }
if (!numx) {
    set xtics () 
    do for [i = 1:nxv] { set xtics add (word(xvals, i) i - 1) }
} else {
    set xtics autofreq
    # an axis of integers (workers, maxAttempts) gets integer ticks: step 1 over a short range,
    # where gnuplot's own choice would put ticks at 2.5; a longer one gets integral steps anyway
    if (intx && !logx && xmax - xmin <= 12) { set xtics 1 format "%.0f" }
    if (intx && logx) { set xtics format "%.0f" }
}
if (isprop) {
    set yrange [-0.02 : 1.02]; set ytics 0, 0.1, 1
} else {
    ypad = (ymax - ymin) > 0 ? 0.05 * (ymax - ymin) : (ymax != 0 ? 0.05 * abs(ymax) : 1)
    lowy = (ymin >= 0 && ymin - ypad < 0) ? 0 : ymin - ypad
    set yrange [lowy : ymax + ypad]; set ytics autofreq
}

# panels on the left 80 %; the legend on the right, clear of the data
KEYW = 0.2
TOP = 0.92; BOT = 0.02
PW = (1.0 - KEYW - 0.02) / cols
PH = (TOP - BOT) / rows
set multiplot title title . "\n" . metric . " against " . (exists("axislabel") ? axislabel : axis) . (nf > 1 ? ", one panel per value of the other axes" : "") font "Sans,12"
do for [p = 1:nf] {
    fk = word(facets, p)
    r = (p - 1) / cols; c = (p - 1) % cols
    set lmargin at screen 0.02 + c * PW + 0.065
    set rmargin at screen 0.02 + (c + 1) * PW - 0.01
    set tmargin at screen TOP - r * PH - (nf > 1 ? 0.04 : 0.01)
    set bmargin at screen TOP - (r + 1) * PH + 0.08
    if (nf > 1) { set title readable(fk) font ",11" } else { unset title }
    unset arrow
    if (exists("hline")) {
        set arrow 1 from graph 0, first hline to graph 1, first hline nohead dt 2 lc rgb "#606060" front
    }
    if (p == 1) {
        set key at screen 0.99, TOP - 0.01 right top vertical Left reverse samplen 2 spacing 1.1 \
            box lc rgb "#c0c0c0" opaque title "variant"
    } else {
        unset key
    }
    F = " -v fk=" . q(fk)
    src(i) = "< " . pa("-v mode=sweep -v numx=" . (numx ? 1 : 0) . A . M . F . " -v v=" . q(word(variants, i))) . " | sort -g -k1,1"
    cmd = ""
    do for [i = 1:nv] {
        if (drawn(word(variants, i))) {
            cmd = cmd . (strlen(cmd) > 0 ? ", " : "") . \
                sprintf("\"%s\" using (xat($1, %d)):2:3:4 with yerrorbars lt %d dt 1 pt -1 notitle, ", src(i), i, i) . \
                sprintf("\"%s\" using (xat($1, %d)):2 with linespoints lt %d title word(variants, %d)", src(i), i, i, i)
        }
    }
    eval "plot " . cmd
}
unset multiplot
set output
