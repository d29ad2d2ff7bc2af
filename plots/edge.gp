# edge.gp: one edge (caller -> callee) over time, the edge named on the command line.
#
#   gnuplot -e "edge='checkout->payments'" -c plots/edge.gp DIR/timeseries.csv OUT.svg|OUT.png [TITLE]
#
# The edge is FROM->TO, as the text summary and the time series name it; its columns are
# FROM->TO_attempt_rps, _retry_rps and _failure_rps, and when the edge has shared retry state,
# FROM->TO_tokens, _budget, _limit, _limit_in_flight, _breaker_open and _reject_p.
# Input, either:
#   - the long timeseries.csv of a scenario with variants (first column `variant`): three
#     panels, attempts/s, retries/s and failures/s on the edge, one line per variant;
#   - a wide timeseries CSV of one run (timeseries.csv without variants, timeseries-VARIANT.csv):
#     one panel with the edge's attempts/s, retries/s and failures/s, then, when the columns
#     exist, one with its shared state (throttle tokens, retry budget, concurrency limit and
#     calls holding a permit on the left axis,
#     breaker open share and adaptive reject probability, 0..1, dashed on the right).
# Each value is drawn over its bucket [t_s, t_s + bucket); buckets with faults_active > 0 in
# every variant are shaded, or, given -e "trigger='START END'" (seconds), the trigger the
# recovery rule names instead. A column that is missing leaves its line out; a panel without any value says so.

me = "edge.gp"
usage = "usage: gnuplot -e \"edge='FROM->TO'\" [-e \"trigger='START END'\"] -c plots/edge.gp DATA.csv OUT.svg|OUT.png [TITLE]"

# ---------------------------------------------------------------- arguments and checks
if (ARGC < 2) { print me . ": " . usage; exit status 2 }
if (!exists("edge")) { print me . ": which edge? set it with -e \"edge='FROM->TO'\""; print me . ": " . usage; exit status 2 }
if (strstrt(edge, "->") < 2 || strstrt(edge, "->") > strlen(edge) - 2) {
    print me . ": the edge is FROM->TO (a caller and a callee), got '" . edge . "'"
    exit status 2
}
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
    title = edge . ": " . system("f=" . q(datafile) . "; d=$(basename -- \"$(dirname -- \"$f\")\"); " . \
                   "b=$(basename -- \"$f\"); if [ \"$d\" = . ]; then printf %s \"$b\"; " . \
                   "else printf %s \"$d/$b\"; fi")
}
variants = long ? system("tail -n +2 " . q(datafile) . " | tr -d '\\r' | cut -d, -f1 | awk '!seen[$0]++' | tr '\\n' ' '") : "run"
nv = words(variants)

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

# which of the edge's columns hold a value, and their largest value
nvalid = 0; vmax = NaN
countv(v) = (v == v) ? (nvalid = nvalid + 1, vmax = (vmax == vmax && vmax > v) ? vmax : v, 0) : 0
rates = ""; state = ""; shares = ""; hir = 0; his = 0
do for [k in "attempt_rps retry_rps failure_rps tokens budget limit limit_in_flight breaker_open reject_p"] {
    c = edge . "_" . k
    if (has(c)) {
        nvalid = 0; vmax = NaN
        stats datafile using (countv(column(c))) nooutput
        if (nvalid > 0) {
            if (strstrt(k, "_rps")) { rates = rates . " " . k; hir = vmax > hir ? vmax : hir }
            if (k eq "tokens" || k eq "budget" || k eq "limit" || k eq "limit_in_flight") { state = state . " " . k; his = vmax > his ? vmax : his }
            if (k eq "breaker_open" || k eq "reject_p") { shares = shares . " " . k }
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
vdt(i) = 1 + int((i - 1) / 10) % 4          # beyond 10 variants, dashed lines
label(k) = k eq "attempt_rps" ? "attempts" : k eq "retry_rps" ? "retries" : \
           k eq "failure_rps" ? "failures" : k eq "tokens" ? "throttle tokens" : \
           k eq "budget" ? "retry budget" : k eq "breaker_open" ? "breaker open (right)" : \
           k eq "reject_p" ? "adaptive reject p (right)" : k eq "limit" ? "concurrency limit" : \
           k eq "limit_in_flight" ? "calls holding a permit" : k
kcol(k) = k eq "attempt_rps" ? "#ff7f0e" : k eq "retry_rps" ? "#9467bd" : \
          k eq "failure_rps" ? "#d62728" : k eq "tokens" ? "#1f77b4" : \
          k eq "budget" ? "#2ca02c" : k eq "breaker_open" ? "#8c564b" : k eq "limit" ? "#17becf" : \
          k eq "limit_in_flight" ? "#7f7f7f" : "#e377c2"

# Column C of variant i (or the run), drawn bucket by bucket: horizontal segments over
# [t_s, t_s + bucket) and verticals joining consecutive buckets of the same variant.
yl = NaN; yp = NaN; tv = NaN
vert(t, y) = (t == tmin || !(t > tv)) ? (tv = t, yl = y, NaN) : (tv = t, yp = yl, yl = y, yp)
sel(i, y) = !long || strcol("variant") eq word(variants, i) ? y : NaN
# one line per variant of column C
VSTEPS = "for [i = 1:nv] datafile using (column('t_s')):(sel(i, column(C))):(bucket):(0) " . \
         "with vectors nohead lw 1.5 lc rgb vcol(i) dt vdt(i) title word(variants, i), " . \
         "for [i = 1:nv] datafile using (column('t_s')):(vert(column('t_s'), sel(i, column(C)))):(0):(yl - yp) " . \
         "with vectors nohead lw 1.5 lc rgb vcol(i) dt vdt(i) notitle"
# one line per column of the edge listed in S (one run) on the left axis, solid, and per
# column listed in S2 on the right axis (0..1), dashed
KSTEPS1 = "for [j = 1:words(S)] datafile using (column('t_s')):(column(edge . '_' . word(S, j))):(bucket):(0) " . \
          "with vectors nohead lw 1.5 lc rgb kcol(word(S, j)) title label(word(S, j)), " . \
          "for [j = 1:words(S)] datafile using (column('t_s')):(vert(column('t_s'), column(edge . '_' . word(S, j)))):(0):(yl - yp) " . \
          "with vectors nohead lw 1.5 lc rgb kcol(word(S, j)) notitle"
KSTEPS2 = "for [j = 1:words(S2)] datafile using (column('t_s')):(column(edge . '_' . word(S2, j))):(bucket):(0) axes x1y2 " . \
          "with vectors nohead lw 1.2 dt 2 lc rgb kcol(word(S2, j)) title label(word(S2, j)), " . \
          "for [j = 1:words(S2)] datafile using (column('t_s')):(vert(column('t_s'), column(edge . '_' . word(S2, j)))):(0):(yl - yp) axes x1y2 " . \
          "with vectors nohead lw 1.2 dt 2 lc rgb kcol(word(S2, j)) notitle"
S = ""; S2 = ""

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

maxlen = 26
do for [i = 1:nv] { maxlen = strlen(word(variants, i)) > maxlen ? strlen(word(variants, i)) : maxlen }
R = 1 - 0.03 - (maxlen * 6.6 + 50) / 1200.0 - 0.05
R = R < 0.55 ? 0.55 : R > 0.8 ? 0.8 : R
L = 0.075; TOP = 0.935; BOT = 0.075; GAP = 0.03
set multiplot title title font "Sans,12"
set lmargin at screen L
set rmargin at screen R
set key left top Left reverse samplen 2.5 spacing 1.15 nobox

if (long) {
    # ---- three panels, one line per variant
    H = (TOP - BOT - 2 * GAP) / 3
    set key at screen R + 0.05, screen TOP title "variant" font ",10"
    do for [p = 1:3] {
        k = word("attempt_rps retry_rps failure_rps", p)
        C = edge . "_" . k
        set tmargin at screen TOP - (p - 1) * (H + GAP); set bmargin at screen TOP - (p - 1) * (H + GAP) - H
        if (p == 3) { set format x "%g"; set xlabel "time (s)" } else { set format x ""; unset xlabel }
        set ylabel label(k) . "/s on the edge"
        if (strstrt(rates, k)) {
            if (hir > 0) { set yrange [0:*] } else { set yrange [0:1] }
            if (p == 1) { plot @VSTEPS, @faultkey } else { plot @VSTEPS }
        } else {
            set yrange [0:1]; set label 99 "no " . C . " values" at graph 0.5, 0.5 center
            if (p == 1) { plot NaN notitle, @faultkey } else { plot NaN notitle }
            unset label 99
        }
        unset key
    }
} else {
    # ---- one run: rates, then the shared state when there is any
    np = (strlen(state) > 0 || strlen(shares) > 0) ? 2 : 1
    H = (TOP - BOT - (np - 1) * GAP) / np
    set tmargin at screen TOP; set bmargin at screen TOP - H
    set key at screen R + 0.05, screen TOP
    if (np == 1) { set format x "%g"; set xlabel "time (s)" } else { set format x ""; unset xlabel }
    set ylabel "requests/s on the edge"
    if (strlen(rates) > 0) {
        S = rates
        if (hir > 0) { set yrange [0:*] } else { set yrange [0:1] }
        plot @KSTEPS1, @faultkey
    } else {
        set yrange [0:1]; set label 99 "no values for the edge " . edge at graph 0.5, 0.5 center
        plot NaN notitle, @faultkey
        unset label 99
    }
    if (np == 2) {
        set tmargin at screen BOT + H; set bmargin at screen BOT
        set key at screen R + 0.05, screen BOT + H
        set format x "%g"; set xlabel "time (s)"
        set ylabel (strstrt(state, "limit") ? (strstrt(state, "tokens") || strstrt(state, "budget") ? "shared state" : "concurrency limit, calls") : strstrt(state, "tokens") ? (strstrt(state, "budget") ? "tokens, budget" : "throttle tokens") : "retry budget")
        if (his > 0) { set yrange [0:*] } else { set yrange [0:1] }
        # the right axis only for the shares (breaker open, reject probability)
        if (strlen(shares) > 0) {
            set y2range [-0.05:1.05]; set y2tics 0, 0.25, 1 out scale 0.6; set y2label "share (0..1)"
            set border 11 lc rgb "#404040"
        }
        S = state; S2 = shares
        if (strlen(state) > 0 && strlen(shares) > 0) {
            plot @KSTEPS1, @KSTEPS2
        } else {
            if (strlen(state) > 0) { plot @KSTEPS1 } else { plot @KSTEPS2 }
        }
    }
}
unset multiplot
set output
