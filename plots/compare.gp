# compare.gp: the runs of a scenario with variants, side by side over time.
#
#   gnuplot [-e "trigger='START END'"] -c plots/compare.gp DIR/timeseries.csv OUT.svg|OUT.png [TITLE]
#
# Input: the long timeseries.csv of `retrysim run --out DIR` for a scenario with variants
# (first column `variant`, the runs' rows one after another). Top panel: goodput_rps, one
# line per variant; bottom panel: attempt_rps, one line per variant. Variants are taken from
# the data in their order; each value is drawn over its bucket [t_s, t_s + bucket). Buckets
# where every variant has faults_active > 0 (the faults they share: the trigger) are shaded in
# both panels, or, given trigger (seconds), the trigger the recovery rule names instead. A
# variant whose rows are identical to an earlier one's (drawn exactly under it) is named
# "B (= A)" in the legend.

me = "compare.gp"
usage = "usage: gnuplot [-e \"trigger='START END'\"] -c plots/compare.gp DIR/timeseries.csv OUT.svg|OUT.png [TITLE]"

# ---------------------------------------------------------------- arguments and checks
if (ARGC < 2) { print me . ": " . usage; exit status 2 }
datafile = ARG1
outfile = ARG2
if (exists("trigger")) {
    if (words(trigger) != 2 || real(word(trigger, 2)) <= real(word(trigger, 1))) {
        print me . ": trigger must be 'START END' in seconds, START < END, got '" . trigger . "'"
        exit status 2
    }
}
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
if (int(system("tail -n +2 " . q(datafile) . " | grep -c .")) < 1) {
    print me . ": no data rows in '" . datafile . "'"
    exit status 1
}
header = system("head -n 1 " . q(datafile) . " | tr -d '\\r' | tr ',' ' '")
has(c) = strstrt(" " . header . " ", " " . c . " ") > 0
if (word(header, 1) ne "variant" || !has("t_s")) {
    print me . ": '" . datafile . "' is not a long timeseries CSV (its header must start " . \
          "with variant,t_s); for one run's timeseries use plots/timeseries.gp"
    exit status 1
}
if (ARGC >= 3 && strlen(ARG3) > 0) {
    title = ARG3
} else {
    title = system("f=" . q(datafile) . "; d=$(basename -- \"$(dirname -- \"$f\")\"); " . \
                   "b=$(basename -- \"$f\"); if [ \"$d\" = . ]; then printf %s \"$b\"; " . \
                   "else printf %s \"$d/$b\"; fi")
}
# variant names (letters, digits, _ . -), in order of first appearance
variants = system("tail -n +2 " . q(datafile) . " | tr -d '\\r' | cut -d, -f1 | awk '!seen[$0]++' | tr '\\n' ' '")
nv = words(variants)

# ---------------------------------------------------------------- scan the data
set datafile separator comma
set datafile columnheaders          # the first line names the columns

# bucket, time range and fault windows ("start end ..."), all variants together; a window
# still open when a variant's rows end is closed there
bucket = 0; tprev = NaN; tmin = NaN; tmax = NaN; inw = 0; ws = 0; wins = ""; vprev = ""
hasfa = has("faults_active")
fa(dummy) = hasfa ? column("faults_active") : 0
step(t) = (t - tprev > 0 && (bucket == 0 || t - tprev < bucket)) ? (bucket = t - tprev) : 0
closew(e) = inw ? (inw = 0, wins = wins . sprintf(" %.12g %.12g", ws, e)) : 0
restart(v) = v ne vprev ? (closew(tprev + (bucket > 0 ? bucket : 1)), tprev = NaN, vprev = v) : 0
win(t, f) = (f > 0) ? (inw ? 0 : (inw = 1, ws = t)) : closew(t)
scan(v, t, f) = (t == t) ? (restart(v), step(t), win(t, f), \
              tmin = (tmin == tmin && tmin < t) ? tmin : t, \
              tmax = (tmax == tmax && tmax > t) ? tmax : t, tprev = t, 0) : 0
stats datafile using (scan(strcol("variant"), column("t_s"), fa(0))) nooutput
if (bucket <= 0) { bucket = 1 }
if (inw) { wins = wins . sprintf(" %.12g %.12g", ws, tprev + bucket) }
# Shaded: the buckets where every variant has a fault active, the faults they share (the
# trigger), not the union of each variant's own faults (plots/faults.awk).
pdir = system("dirname -- " . q(ARG0))
if (hasfa) { wins = system("awk -v mode=shared -f " . q(pdir . "/faults.awk") . " " . q(datafile)) }
# A trigger the recovery rule names ("recovery": {"trigger": ...}), given as
# -e "trigger='START END'" in seconds, is shaded instead: the window the judgement starts from.
if (exists("trigger")) { wins = trigger }

# does the column have any value? (a panel is drawn empty otherwise)
# and its largest value
nvalid = 0; vmax = NaN
countv(v) = (v == v) ? (nvalid = nvalid + 1, vmax = (vmax == vmax && vmax > v) ? vmax : v, 0) : 0
okg = 0; oka = 0; gmax = 0; amax = 0
if (has("goodput_rps")) {
    nvalid = 0; vmax = NaN; stats datafile using (countv(column("goodput_rps"))) nooutput
    okg = nvalid > 0; gmax = vmax
}
if (has("attempt_rps")) {
    nvalid = 0; vmax = NaN; stats datafile using (countv(column("attempt_rps"))) nooutput
    oka = nvalid > 0; amax = vmax
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

# one variant's column C, drawn bucket by bucket: horizontal segments over
# [t_s, t_s + bucket) and verticals joining consecutive buckets of the same variant
yl = NaN; yp = NaN; tv = NaN
vert(t, y) = (t == tmin || !(t > tv)) ? (tv = t, yl = y, NaN) : (tv = t, yp = yl, yl = y, yp)
sel(i, y) = strcol("variant") eq word(variants, i) ? y : NaN
steps(tt) = "for [i = 1:nv] datafile using (column('t_s')):(sel(i, column(C))):(bucket):(0) " . \
        "with vectors nohead lw 1.5 lc rgb vcol(i) dt vdt(i) " . tt . ", " . \
        "for [i = 1:nv] datafile using (column('t_s')):(vert(column('t_s'), sel(i, column(C)))):(0):(yl - yp) " . \
        "with vectors nohead lw 1.5 lc rgb vcol(i) dt vdt(i) notitle"

set xrange [tmin : tmax + bucket]
set grid xtics ytics lc rgb "#e0e0e0" lt 1 lw 1
set border 3 lc rgb "#404040"
set tics nomirror out scale 0.6
nw = words(wins) / 2
do for [k = 1:nw] {
    set object k rect from first real(word(wins, 2 * k - 1)), graph 0 \
        to first real(word(wins, 2 * k)), graph 1 behind fc rgb "#ffd6d6" fs solid 1.0 noborder
}
faultkey = nw > 0 ? "keyentry with boxes fc rgb '#ffd6d6' fs solid 1.0 noborder title '" . (exists("trigger") ? "trigger (recovery rule)" : "fault in every variant") . "'" : "NaN notitle"

# room on the right for the legend: as wide as the longest variant name needs
maxlen = 18
do for [i = 1:nv] { maxlen = strlen(word(variants, i)) > maxlen ? strlen(word(variants, i)) : maxlen }
R = 1 - 0.03 - (maxlen * 6.6 + 50) / 1200.0
R = R < 0.55 ? 0.55 : R > 0.85 ? 0.85 : R
L = 0.075; TOP = 0.935; BOT = 0.075; GAP = 0.03
H = (TOP - BOT - GAP) / 2
set multiplot title title font "Sans,12"
set lmargin at screen L
set rmargin at screen R
# one legend, right of the top panel, for both panels (same colours)
set key at screen R + 0.02, screen TOP left top Left reverse samplen 2.5 spacing 1.15 \
    nobox title "variant" font ",10"

# ---- top: goodput
set tmargin at screen TOP; set bmargin at screen TOP - H
set format x ""; unset xlabel
set ylabel "goodput (calls/s)"
# (a macro is expanded when its whole if-block is read: define it before)
# a variant whose rows equal an earlier one's is drawn exactly under it: its legend says so
same = system("awk -v mode=same -f " . q(pdir . "/faults.awk") . " " . q(datafile) . " | tr '\\n' ' '")
vtitle(i) = word(same, i) eq "-" || word(same, i) eq "" ? word(variants, i) : word(variants, i) . " (= " . word(same, i) . ")"
C = "goodput_rps"; STEPS = steps("title vtitle(i)")
if (okg) {
    if (gmax > 0) { set yrange [0:*] } else { set yrange [0:1] }
    plot @STEPS, @faultkey
} else {
    set yrange [0:1]; set label 99 "no goodput_rps values" at graph 0.5, 0.5 center
    plot NaN notitle, @faultkey
    unset label 99
}

# ---- bottom: attempts
set tmargin at screen BOT + H; set bmargin at screen BOT
set format x "%g"; set xlabel "time (s)"
set ylabel "front-door attempts/s"
unset key
C = "attempt_rps"; STEPS = steps("notitle")
if (oka) {
    if (amax > 0) { set yrange [0:*] } else { set yrange [0:1] }
    plot @STEPS
} else {
    set yrange [0:1]; set label 99 "no attempt_rps values" at graph 0.5, 0.5 center
    plot NaN notitle
    unset label 99
}
unset multiplot
set output
