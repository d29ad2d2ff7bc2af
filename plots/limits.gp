# limits.gp: every concurrency limit of a run over time, labelled by where it applies.
#
#   gnuplot -c plots/limits.gp DIR/timeseries.csv OUT.svg|OUT.png [TITLE]
#
# The limits are the time series' columns FROM->TO_limit (a concurrency limiter on an edge,
# the mean limit over the caller instances that hold one, with FROM->TO_limit_in_flight, the
# calls holding a permit) and SERVICE_concurrency_limit (Envoy's adaptive concurrency filter,
# the limits summed over the service's replicas). Input, either:
#   - a wide timeseries CSV of one run (timeseries.csv without variants, timeseries-VARIANT.csv):
#     one panel, one line per limit in its own colour, the edge's permits held dashed in the
#     same colour;
#   - the long timeseries.csv of a scenario with variants (first column `variant`): one panel
#     per limit, one line per variant that has values for it.
# Each value is drawn over its bucket [t_s, t_s + bucket); buckets with faults_active > 0 in
# every variant are shaded, or, given -e "trigger='START END'" (seconds), the trigger the
# recovery rule names instead. A file without any limit column, or whose limit columns hold no value, is an error
# (exit status 1): there is nothing to draw.

me = "limits.gp"
usage = "usage: gnuplot [-e \"trigger='START END'\"] -c plots/limits.gp DATA.csv OUT.svg|OUT.png [TITLE]"

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
if (!has("t_s")) {
    print me . ": no t_s column in '" . datafile . "' (is it a retrysim timeseries CSV?)"
    exit status 1
}
long = word(header, 1) eq "variant"
if (ARGC >= 3 && strlen(ARG3) > 0) {
    title = ARG3
} else {
    title = "concurrency limits: " . system("f=" . q(datafile) . "; d=$(basename -- \"$(dirname -- \"$f\")\"); " . \
                   "b=$(basename -- \"$f\"); if [ \"$d\" = . ]; then printf %s \"$b\"; " . \
                   "else printf %s \"$d/$b\"; fi")
}
variants = long ? system("tail -n +2 " . q(datafile) . " | tr -d '\\r' | cut -d, -f1 | awk '!seen[$0]++' | tr '\\n' ' '") : "run"
nv = words(variants)

# The limit columns, in the file's order: an edge's FROM->TO_limit, a service's
# SERVICE_concurrency_limit.
ends(c, s) = strlen(c) > strlen(s) && c[strlen(c) - strlen(s) + 1:] eq s
islimit(c) = (ends(c, "_limit") && strstrt(c, "->") > 0) || ends(c, "_concurrency_limit")
cands = ""
do for [i = 1:words(header)] { if (islimit(word(header, i))) { cands = cands . " " . word(header, i) } }
if (words(cands) == 0) {
    print me . ": no concurrency limit column (FROM->TO_limit, SERVICE_concurrency_limit) in '" . datafile . "'"
    exit status 1
}

# ---------------------------------------------------------------- scan the data
set datafile separator comma
set datafile columnheaders

# bucket, time range and fault windows ("start end ..."), every variant together; a window
# still open when a variant's rows end is closed there
bucket = 0; tprev = NaN; tmin = NaN; tmax = NaN; inw = 0; ws = 0; wins = ""; vprev = ""
hasfa = has("faults_active")
fa(dummy) = hasfa ? column("faults_active") : 0
vname(dummy) = long ? strcol("variant") : "run"
step(t) = (t - tprev > 0 && (bucket == 0 || t - tprev < bucket)) ? (bucket = t - tprev) : 0
closew(e) = inw ? (inw = 0, wins = wins . sprintf(" %.12g %.12g", ws, e)) : 0
restart(v) = v ne vprev ? (closew(tprev + (bucket > 0 ? bucket : 1)), tprev = NaN, vprev = v) : 0
win(t, f) = (f > 0) ? (inw ? 0 : (inw = 1, ws = t)) : closew(t)
scan(v, t, f) = (t == t) ? (restart(v), step(t), win(t, f), \
              tmin = (tmin == tmin && tmin < t) ? tmin : t, \
              tmax = (tmax == tmax && tmax > t) ? tmax : t, tprev = t, 0) : 0
stats datafile using (scan(vname(0), column("t_s"), fa(0))) nooutput
if (bucket <= 0) { bucket = 1 }
if (inw) { wins = wins . sprintf(" %.12g %.12g", ws, tprev + bucket) }
# Shaded: the buckets where every variant has a fault active, the faults they share (the
# trigger), not the union of each variant's own faults (plots/faults.awk).
pdir = system("dirname -- " . q(ARG0))
if (hasfa) { wins = system("awk -v mode=shared -f " . q(pdir . "/faults.awk") . " " . q(datafile)) }
# A trigger the recovery rule names ("recovery": {"trigger": ...}), given as
# -e "trigger='START END'" in seconds, is shaded instead: the window the judgement starts from.
if (exists("trigger")) { wins = trigger }

# which limit columns hold a value (and, with variants, for which variants)
nvalid = 0
countv(v) = (v == v) ? (nvalid = nvalid + 1, 0) : 0
lims = ""
do for [j = 1:words(cands)] {
    C = word(cands, j)
    nvalid = 0
    stats datafile using (countv(column(C))) nooutput
    if (nvalid > 0) { lims = lims . " " . C }
}
nl = words(lims)
if (nl == 0) {
    print me . ": the concurrency limit columns of '" . datafile . "' hold no value"
    exit status 1
}
# with variants: the variants with values, per limit ("i i ..." of indices into variants)
vsel(i, v) = strcol("variant") eq word(variants, i) ? v : NaN
array vwith[nl]
if (long) {
    do for [j = 1:nl] {
        vwith[j] = ""
        do for [i = 1:nv] {
            nvalid = 0
            stats datafile using (countv(vsel(i, column(word(lims, j))))) nooutput
            if (nvalid > 0) { vwith[j] = vwith[j] . " " . i }
        }
    }
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
vdt(i) = 1 + int((i - 1) / 10) % 4          # beyond 10 colours, dashed lines
# where a limit applies, and what it is
where(C) = ends(C, "_concurrency_limit") ? C[1:strlen(C) - 18] : C[1:strlen(C) - 6]
what(C) = ends(C, "_concurrency_limit") ? "adaptive limit (replicas summed)" : "limit"
heldof(C) = C[1:strlen(C) - 6] . "_limit_in_flight"
hasheld(C) = !ends(C, "_concurrency_limit") && has(heldof(C))

# Column C drawn bucket by bucket: horizontal segments over [t_s, t_s + bucket) and verticals
# joining consecutive buckets of the same variant.
yl = NaN; yp = NaN; tv = NaN
vert(t, y) = (t == tmin || !(t > tv)) ? (tv = t, yl = y, NaN) : (tv = t, yp = yl, yl = y, yp)
sel(i, y) = !long || strcol("variant") eq word(variants, i) ? y : NaN
# one run: every limit, solid, and its permits held, dashed, each limit in its own colour
WIDE = "for [j = 1:nl] datafile using (column('t_s')):(column(word(lims, j))):(bucket):(0) " . \
       "with vectors nohead lw 1.8 lc rgb vcol(j) dt vdt(j) title where(word(lims, j)) . ' ' . what(word(lims, j)), " . \
       "for [j = 1:nl] datafile using (column('t_s')):(vert(column('t_s'), column(word(lims, j)))):(0):(yl - yp) " . \
       "with vectors nohead lw 1.8 lc rgb vcol(j) dt vdt(j) notitle"
HELD = "for [j = 1:nl] datafile using (column('t_s')):(hasheld(word(lims, j)) ? column(heldof(word(lims, j))) : NaN):(bucket):(0) " . \
       "with vectors nohead lw 1.1 dt 2 lc rgb vcol(j) title (hasheld(word(lims, j)) ? where(word(lims, j)) . ' permits held' : ''), " . \
       "for [j = 1:nl] datafile using (column('t_s')):(vert(column('t_s'), hasheld(word(lims, j)) ? column(heldof(word(lims, j))) : NaN)):(0):(yl - yp) " . \
       "with vectors nohead lw 1.1 dt 2 lc rgb vcol(j) notitle"
# variants: limit C, one line per variant listed in VS (indices, coloured as in compare.gp)
VSTEPS = "for [m = 1:words(VS)] datafile using (column('t_s')):(sel(int(word(VS, m)), column(C))):(bucket):(0) " . \
         "with vectors nohead lw 1.5 lc rgb vcol(int(word(VS, m))) dt vdt(int(word(VS, m))) title word(variants, int(word(VS, m))), " . \
         "for [m = 1:words(VS)] datafile using (column('t_s')):(vert(column('t_s'), sel(int(word(VS, m)), column(C)))):(0):(yl - yp) " . \
         "with vectors nohead lw 1.5 lc rgb vcol(int(word(VS, m))) dt vdt(int(word(VS, m))) notitle"
C = word(lims, 1); VS = ""

set xrange [tmin : tmax + bucket]
set grid xtics ytics lc rgb "#e0e0e0" lt 1 lw 1
set border 3 lc rgb "#404040"
set tics nomirror out scale 0.6
nw = words(wins) / 2
do for [k = 1:nw] {
    set object k rect from first real(word(wins, 2 * k - 1)), graph 0 \
        to first real(word(wins, 2 * k)), graph 1 behind fc rgb "#ffd6d6" fs solid 1.0 noborder
}
faultkey = nw > 0 ? "keyentry with boxes fc rgb '#ffd6d6' fs solid 1.0 noborder title '" . (exists("trigger") ? "trigger (recovery rule)" : "fault active") . "'" : "NaN notitle"

maxlen = 30
do for [i = 1:nv] { maxlen = strlen(word(variants, i)) > maxlen ? strlen(word(variants, i)) : maxlen }
do for [j = 1:nl] { maxlen = strlen(where(word(lims, j))) + 34 > maxlen ? strlen(where(word(lims, j))) + 34 : maxlen }
R = 1 - 0.03 - (maxlen * 6.6 + 50) / 1200.0 - 0.05
R = R < 0.5 ? 0.5 : R > 0.8 ? 0.8 : R
L = 0.075; TOP = 0.935; BOT = 0.075; GAP = 0.03
set multiplot title title font "Sans,12"
set lmargin at screen L
set rmargin at screen R
set key left top Left reverse samplen 2.5 spacing 1.15 nobox
set yrange [0:*]

if (long) {
    # ---- one panel per limit, one line per variant that has it
    H = (TOP - BOT - (nl - 1) * GAP) / nl
    do for [j = 1:nl] {
        C = word(lims, j); VS = vwith[j]
        set tmargin at screen TOP - (j - 1) * (H + GAP); set bmargin at screen TOP - (j - 1) * (H + GAP) - H
        set key at screen R + 0.05, screen TOP - (j - 1) * (H + GAP) title where(C) font ",10"
        if (j == nl) { set format x "%g"; set xlabel "time (s)" } else { set format x ""; unset xlabel }
        set ylabel (ends(C, "_concurrency_limit") ? "limit (replicas summed)" : "limit, calls")
        if (j == 1) { plot @VSTEPS, @faultkey } else { plot @VSTEPS }
    }
} else {
    # ---- one run: every limit in one panel
    set tmargin at screen TOP; set bmargin at screen BOT
    set key at screen R + 0.05, screen TOP
    set format x "%g"; set xlabel "time (s)"
    set ylabel "limit, calls (an edge: mean per caller instance)"
    plot @WIDE, @HELD, @faultkey
}
unset multiplot
set output
