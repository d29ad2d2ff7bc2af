# search.gp: the probes of a tipping-point search, from search.csv.
#
#   gnuplot [-e "p=0.95"] -c plots/search.gp DIR/search.csv OUT.svg|OUT.png [TITLE]
#
# Input: search.csv of a study with a "search" (`retrysim run ... --out DIR`): variant,value,x,
# n,k,p,lo,hi,verdict,undecided, one row per probe. Each variant's probes in order of their
# value: the share of replications with the metric true (P) and, as a bar, its exact
# (Clopper-Pearson) one-sided bounds lo and hi at the error split over the probe's looks
# (Bonferroni), the bounds the search decided on (expt/expt_search.c),
# filled points for the probes that passed and open ones for those that failed; a dashed line
# at the level p (default 0.95) that the search keeps. The x axis is the probed value's number
# (the unit, such as /s, is in the label).

me = "search.gp"
usage = "usage: gnuplot [-e \"p=0.95\"] -c plots/search.gp DIR/search.csv OUT.svg|OUT.png [TITLE]"

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
header = system("head -n 1 " . q(datafile) . " | tr -d '\\r'")
if (header ne "variant,value,x,n,k,p,lo,hi,verdict,undecided") {
    print me . ": '" . datafile . "' is not a search.csv (its header must be variant,value,x,n,k,p,lo,hi,verdict,undecided)"
    exit status 1
}
variants = system("tail -n +2 " . q(datafile) . " | cut -d, -f1 | awk 'NF && !seen[$0]++' | tr '\\n' ' '")
nv = words(variants)
if (nv < 1) {
    print me . ": no data rows in '" . datafile . "'"
    exit status 1
}
unit = system("sed -n 2p " . q(datafile) . " | cut -d, -f2 | sed 's/^[-+0-9.eE]*//'")
if (!exists("p")) { p = 0.95 }
if (ARGC >= 3 && strlen(ARG3) > 0) {
    title = ARG3
} else {
    title = system("f=" . q(datafile) . "; d=$(basename -- \"$(dirname -- \"$f\")\"); " . \
                   "b=$(basename -- \"$f\"); if [ \"$d\" = . ]; then printf %s \"$b\"; " . \
                   "else printf %s \"$d/$b\"; fi")
}
# the probes of variant v, sorted by value: x P lo hi passed
rows(v) = "< awk -F, -v v=" . q(v) . " 'NR > 1 && $1 == v { print $3, $6, $7, $8, ($9 ~ /^pass$/) }' " . \
          q(datafile) . " | sort -g -k1,1"

if (ext eq ".svg" || ext eq ".SVG") {
    set terminal svg size 1200,700 dynamic font "Sans,10" background "white"
} else {
    set terminal pngcairo size 1200,700 font "Sans,10"
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
set xlabel "probed value" . (strlen(unit) > 0 ? " (" . (unit eq "/s" ? "per s" : unit) . ")" : "")
set ylabel "P(metric true): share of the probe's replications"
set yrange [-0.02 : 1.05]
set ytics 0, 0.1, 1
set offsets graph 0.03, graph 0.03, 0, 0
# one probed value only (a search whose first probe already failed): a range around it
xs = system("tail -n +2 " . q(datafile) . " | cut -d, -f3 | sort -g | sed -n '1p;$p' | tr '\n' ' '")
if (words(xs) >= 1 && real(word(xs, 1)) == real(word(xs, words(xs)))) {
    x0 = real(word(xs, 1))
    set xrange [x0 - (x0 != 0 ? 0.1 * abs(x0) : 1) : x0 + (x0 != 0 ? 0.1 * abs(x0) : 1)]
}
set bars small
set lmargin at screen 0.07
set rmargin at screen 0.80
set key at screen 0.99, 0.9 right top vertical Left reverse samplen 2 spacing 1.1 box lc rgb "#c0c0c0" opaque title "variant (filled: pass)"
set title title . sprintf("\nthe probes of the search: P with its exact bounds (Clopper-Pearson, error split over the looks), the line at p = %g", p) font "Sans,12"
set arrow 1 from graph 0, first p to graph 1, first p nohead dt 2 lc rgb "#606060" front
cmd = ""
do for [i = 1:nv] {
    cmd = cmd . (i > 1 ? ", " : "") . \
        sprintf("\"%s\" using 1:2:3:4 with yerrorbars lt %d pt -1 notitle, ", rows(word(variants, i)), i) . \
        sprintf("\"%s\" using 1:2 with lines lt %d notitle, ", rows(word(variants, i)), i) . \
        sprintf("\"%s\" using 1:($5 > 0.5 ? $2 : NaN) with points lt %d pt 7 ps 1.1 title word(variants, %d), ", rows(word(variants, i)), i, i) . \
        sprintf("\"%s\" using 1:($5 > 0.5 ? NaN : $2) with points lt %d pt 6 ps 1.1 notitle", rows(word(variants, i)), i)
}
eval "plot " . cmd
set output
