# heatmap.gp: one metric of a two-axis study as a map, one panel per variant, from points.csv.
#
#   gnuplot [-e "metric='M'; x='PATH'; y='PATH'"] -c plots/heatmap.gp \
#           DIR/points.csv OUT.svg|OUT.png [TITLE]
#
# Input: points.csv of a study with two axes (`--sweep A=... --sweep B=...`): point,<axis columns
# named by path>,variant,metric,n,mean,sd,lo,hi,half_width. Each cell is one point of the grid,
# coloured by the metric's mean over the replications and with that mean written in it.
#   metric  the metric (default: recovery.recovered when the file has it, else goodput_per_s,
#           else its first metric). A proportion (recovery.recovered: the share of replications
#           that recovered) is coloured red (0: every replication stayed down) through white to
#           blue (1); any other metric on one scale from its smallest to its largest mean, the
#           same in every panel.
#   x, y    the axes across and up (default: the first and the second axis column). A file with
#           more than two axes is refused: draw a two-axis sweep.
#   xname, yname  the names of the axes across and up (default: their paths); units are added
# The cells are the grid's values in the file's order (equal steps on the page whatever the
# values' spacing); the tic labels are the values as written (400/s, 12s).

me = "heatmap.gp"
usage = "usage: gnuplot [-e \"metric='M'; x='PATH'; y='PATH'\"] -c plots/heatmap.gp DIR/points.csv OUT.svg|OUT.png [TITLE]"

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
if (words(axes) != 2) {
    print me . ": '" . datafile . "' has " . words(axes) . " axes (" . axes . "); a heat map needs exactly two"
    exit status 1
}
metrics = lines("-v mode=metrics")
has_metric(s) = strstrt(" " . metrics . " ", " " . s . " ") > 0
if (!exists("metric")) {
    metric = has_metric("recovery.recovered") ? "recovery.recovered" : \
             has_metric("goodput_per_s") ? "goodput_per_s" : word(metrics, 1)
}
if (!has_metric(metric)) {
    print me . ": '" . datafile . "' has no metric '" . metric . "' (it has " . \
          metrics[1:(strlen(metrics) > 400 ? 400 : strlen(metrics))] . ")"
    exit status 1
}
if (!exists("x")) { x = word(axes, 1) }
if (!exists("y")) { y = (x eq word(axes, 1)) ? word(axes, 2) : word(axes, 1) }
isaxis(s) = strstrt(" " . axes . " ", " " . s . " ") > 0
if (!isaxis(x) || !isaxis(y) || x eq y) {
    print me . ": x and y must be the file's two axes (" . axes . "), got x='" . x . "', y='" . y . "'"
    exit status 1
}
M = " -v m=" . q(metric)
XY = " -v ax=" . q(x) . " -v ay=" . q(y)
variants = lines("-v mode=variants")
nv = words(variants)
xvals = lines("-v mode=values -v ax=" . q(x) . M)
yvals = lines("-v mode=values -v ax=" . q(y) . M)
nx = words(xvals); ny = words(yvals)
isprop = system(pa("-v mode=isprop" . M)) eq "1"
yr = system(pa("-v mode=range" . M))
if (nv < 1 || strlen(yr) == 0) {
    print me . ": no values of '" . metric . "' in '" . datafile . "'"
    exit status 1
}
vmin = real(word(yr, 1)); vmax = real(word(yr, 2))
xunit = system(pa("-v mode=unit -v ax=" . q(x)))
yunit = system(pa("-v mode=unit -v ax=" . q(y)))
if (ARGC >= 3 && strlen(ARG3) > 0) {
    title = ARG3
} else {
    title = system("f=" . q(datafile) . "; d=$(basename -- \"$(dirname -- \"$f\")\"); " . \
                   "b=$(basename -- \"$f\"); if [ \"$d\" = . ]; then printf %s \"$b\"; " . \
                   "else printf %s \"$d/$b\"; fi")
}

# ---------------------------------------------------------------- labels and colours
unitname(u) = u eq "/s" ? "per s" : u
label_of(a, u) = a . (strlen(u) > 0 ? " (" . unitname(u) . ")" : "")
mname = metric eq "recovery.recovered" ? "P(recovered): share of replications that recovered" : \
        metric eq "p_storm" ? "P(storm): share of replications that never recovered" : metric
if (isprop) {
    lo = 0; hi = 1
    set palette defined (0 "#b2182b", 0.25 "#ef8a62", 0.5 "#f7f7f7", 0.75 "#67a9cf", 1 "#2166ac")
} else {
    lo = vmin; hi = vmax > vmin ? vmax : vmin + 1
    set palette defined (0 "#fff5eb", 0.35 "#fdae6b", 0.7 "#e6550d", 1 "#7f2704")
}
set cbrange [lo : hi]
frac(v) = (v - lo) / (hi - lo)
# dark text on light cells, white on dark ones
ink(v) = isprop ? (abs(frac(v) - 0.5) > 0.33 ? 0xffffff : 0x202020) : (frac(v) > 0.6 ? 0xffffff : 0x202020)
cellfmt(v) = isprop ? sprintf("%.2f", v) : abs(v) >= 1000 ? sprintf("%.0f", v) : sprintf("%.3g", v)

# ---------------------------------------------------------------- output
cols = nv <= 1 ? 1 : nv <= 4 ? 2 : nv <= 9 ? 3 : 4
rows = (nv + cols - 1) / cols
height = rows <= 1 ? 700 : 340 * rows + 120
if (ext eq ".svg" || ext eq ".SVG") {
    set terminal svg size 1200,height dynamic font "Sans,10" background "white"
} else {
    set terminal pngcairo size 1200,height font "Sans,10"
}
set termoption noenhanced
set output outfile

set datafile separator whitespace
unset key
set border 15 lc rgb "#404040"
set tics out scale 0.5 nomirror
set xrange [-0.5 : nx - 0.5]
set yrange [-0.5 : ny - 0.5]
set xtics () rotate by 30 right
do for [i = 1:nx] { set xtics add (word(xvals, i) i - 1) }
set ytics ()
do for [i = 1:ny] { set ytics add (word(yvals, i) i - 1) }
fs = nx * cols > 24 ? ",7" : ",9"
set style fill solid 1.0 noborder

# the panels on the left; one colour bar on the right, for every panel
CBW = 0.1
TOP = 0.90; BOT = 0.02
PW = (1.0 - CBW - 0.02) / cols
PH = (TOP - BOT) / rows
set multiplot title title . "\n" . mname . ", per variant" font "Sans,12"
do for [p = 1:nv] {
    vn = word(variants, p)
    r = (p - 1) / cols; c = (p - 1) % cols
    set lmargin at screen 0.02 + c * PW + 0.07
    set rmargin at screen 0.02 + (c + 1) * PW - 0.01
    set tmargin at screen TOP - r * PH - 0.035
    set bmargin at screen TOP - (r + 1) * PH + 0.085
    set title vn font ",11"
    xl = (r == rows - 1 || p + cols > nv) ? label_of(exists("xname") ? xname : x, xunit) : ""
    yl = c == 0 ? label_of(exists("yname") ? yname : y, yunit) : ""
    set xlabel xl
    set ylabel yl
    if (p == nv) {
        set colorbox user origin screen 1.0 - CBW + 0.02, screen BOT + 0.1 size screen 0.02, screen TOP - BOT - 0.2
        if (isprop) { set cbtics 0.1 } else { set cbtics autofreq }
        set cblabel metric
    } else {
        unset colorbox
    }
    src = "< " . pa("-v mode=cells" . M . XY . " -v v=" . q(vn))
    plot src using 1:2:(0.5):(0.5):3 with boxxyerror fc palette, \
         src using 1:2:(cellfmt($3)):(ink($3)) with labels tc rgb variable font fs
}
unset multiplot
set output
