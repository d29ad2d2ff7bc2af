# study-series.gp: the kind 'series' of plots/study.gp, which loads it with datafile, outfile,
# ext, q, pa, lines and title_arg (study.gp's ARG3) set: goodput over time per variant from a
# study's series.csv, the mean over the replications as a line, the band from the 10th to the
# 90th percentile of the replications in each bucket shaded in the variant's colour, the mean
# offered load dotted. One panel; the variants keep the colours of sweep.gp and compare.gp.

check = system(pa("-v mode=check"))
if (check ne "ok") {
    print me . ": '" . datafile . "' cannot be drawn (" . check . ")"
    exit status 1
}
variants = lines("-v mode=variants")
nv = words(variants)
if (strlen(title_arg) > 0) {
    title = title_arg
} else {
    title = system("f=" . q(datafile) . "; d=$(basename -- \"$(dirname -- \"$f\")\"); " . \
                   "b=$(basename -- \"$f\"); if [ \"$d\" = . ]; then printf %s \"$b\"; " . \
                   "else printf %s \"$d/$b\"; fi")
}
if (ext eq ".svg" || ext eq ".SVG") {
    set terminal svg size 1200,600 dynamic font "Sans,10" background "white"
} else {
    set terminal pngcairo size 1200,600 font "Sans,10"
}
set termoption noenhanced
set output outfile
palette = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf"
do for [i = 1:10] { set linetype i lc rgb word(palette, i) lw 1.5 }
set linetype cycle 10
set datafile separator whitespace
set grid xtics ytics lc rgb "#e0e0e0" lt 1 lw 1
set border 3 lc rgb "#404040"
set tics nomirror out scale 0.6
set xlabel "time (s)"
set ylabel "calls/s"
set yrange [0 : *]
set lmargin at screen 0.07
set rmargin at screen 0.80
set key at screen 0.99, 0.9 right top vertical Left reverse samplen 2 spacing 1.1 box lc rgb "#c0c0c0" opaque title "variant"
set title title . "\ngoodput per bucket: the mean over the replications, shaded from their 10th to their 90th percentile; dotted: offered" font "Sans,12"
set style fill transparent solid 0.18 noborder
D(i) = "< " . pa("-v mode=data -v v=" . (i - 1))
cmd = ""
do for [i = 1:nv] {
    cmd = cmd . (i > 1 ? ", " : "") . \
        sprintf("\"%s\" using 1:3:4 with filledcurves lt %d notitle, ", D(i), i) . \
        sprintf("\"%s\" using 1:2 with lines lt %d title word(variants, %d), ", D(i), i, i) . \
        sprintf("\"%s\" using 1:5 with lines lt %d dt 3 lw 1 notitle", D(i), i)
}
eval "plot " . cmd
set output
