# timeseries.gp: one run's time series (a wide timeseries CSV from `retrysim run --out DIR`).
#
#   gnuplot -c plots/timeseries.gp DIR/timeseries.csv OUT.svg|OUT.png [TITLE]
#   gnuplot -c plots/timeseries.gp DIR/timeseries-VARIANT.csv OUT.svg|OUT.png [TITLE]
#
# Panels sharing the time axis: (1) offered, attempts, goodput, errors (requests/s);
# (2) in-flight calls and the queue of every service; (3) latency p50/p99 (ms, log scale) of
# the calls that ended OK (latency_ok_*), with the failed calls' (latency_failed_*) dashed; a
# file without those columns shows latency_p50_ms/latency_p99_ms, every finished call;
# (4) only if the columns exist: retry-throttle tokens, retry budget, breaker open share and
# adaptive reject probability (of client populations and of edges, FROM->TO_tokens...);
# (5) only if the columns exist: replicas in force and in service (SERVICE_replicas,
# SERVICE_replicas_in_service); (6) only if they exist: the hit ratio of each look-aside cache
# (SERVICE_cache_hit_ratio, 0..1, a gap where no lookup was made); (7) only if they exist: the
# service-time multiplier of each service whose work grows (SERVICE_work_factor, 1 = its
# normal service time, below 1 when a work.size profile shrinks it; a log axis past 20x).
# Every value is drawn over its whole bucket [t_s, t_s + bucket). The fault window (buckets
# with faults_active > 0) is shaded in every panel. Columns are found by name in the header;
# missing optional columns are skipped. Panel 1 also draws the on_failure firings per second of
# each handler or client population that has an on_failure (CALLER_on_failure_rps); panel 2,
# each herded population's clients up (<pop>_clients_up). With -e "marks='T1 T2 ...'"
# (retrysim passes the times its operators and scheduled actions fired, from summary.json),
# each time gets a dashed vertical line.

me = "timeseries.gp"
if (!exists("marks")) { marks = "" }
usage = "usage: gnuplot -c plots/timeseries.gp DATA.csv OUT.svg|OUT.png [TITLE]"

# ---------------------------------------------------------------- arguments and checks
if (ARGC < 2) { print me . ": " . usage; exit status 2 }
datafile = ARG1
outfile = ARG2
# shell quoting: 'it'\''s'
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
if (word(header, 1) eq "variant") {
    print me . ": '" . datafile . "' has a variant column (several runs); plot one run's " . \
          "timeseries-VARIANT.csv with this script, or compare runs with plots/compare.gp"
    exit status 1
}
if (!has("t_s")) {
    print me . ": no t_s column in '" . datafile . "' (is it a retrysim timeseries CSV?)"
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
ends(w, s) = strlen(w) > strlen(s) && w[strlen(w) - strlen(s) + 1:] eq s
stem(w, s) = w[1:strlen(w) - strlen(s)]

# bucket width, time range and fault windows ("start end start end ...") in one pass
bucket = 0; tprev = NaN; tmin = NaN; tmax = NaN; inw = 0; ws = 0; wins = ""
hasfa = has("faults_active")
fa(dummy) = hasfa ? column("faults_active") : 0
step(t) = (t - tprev > 0 && (bucket == 0 || t - tprev < bucket)) ? (bucket = t - tprev) : 0
win(t, f) = (f > 0) ? (inw ? 0 : (inw = 1, ws = t)) : \
            (inw ? (inw = 0, wins = wins . sprintf(" %.12g %.12g", ws, t)) : 0)
scan(t, f) = (t == t) ? (step(t), win(t, f), \
              tmin = (tmin == tmin && tmin < t) ? tmin : t, \
              tmax = (tmax == tmax && tmax > t) ? tmax : t, tprev = t, 0) : 0
stats datafile using (scan(column("t_s"), fa(0))) nooutput
if (bucket <= 0) { bucket = 1 }
if (inw) { wins = wins . sprintf(" %.12g %.12g", ws, tmax + bucket) }

# does column c have a value above lo (NaN: any value)? one pass per column
nvalid = 0; vmin = NaN; vmax = NaN
okv(v, lo) = v == v && (lo != lo || v > lo)
countv(v, lo) = okv(v, lo) ? (nvalid = nvalid + 1, \
                vmin = (vmin == vmin && vmin < v) ? vmin : v, \
                vmax = (vmax == vmax && vmax > v) ? vmax : v, 0) : 0

# the columns of each panel, and the range of their values (lo*, hi*)
mn(a, b) = (a == a && a < b) ? a : b
mx(a, b) = (a == a && a > b) ? a : b
p1 = ""; p2 = ""; p3 = ""; tok = ""; bud = ""; brk = ""; rep = ""; hit = ""; wf = ""
hi1 = NaN; hi2 = NaN; lo3 = NaN; hi3 = NaN; hitok = NaN; bmin = NaN; bmax = NaN; lowf = NaN; hiwf = NaN
# OK latency when the file has it (the default); all finished calls otherwise
okl = has("latency_ok_p50_ms") || has("latency_ok_p99_ms")
lat = okl ? "latency_ok_p50_ms latency_ok_p99_ms latency_failed_p50_ms latency_failed_p99_ms" : "latency_p50_ms latency_p99_ms"
do for [c in "offered_rps attempt_rps goodput_rps error_rps in_flight " . lat] {
    if (has(c)) {
        nvalid = 0; vmin = NaN; vmax = NaN
        # latency goes on a log axis: only values > 0 count
        stats datafile using (countv(column(c), strstrt(c, "latency") ? 0 : NaN)) nooutput
        if (nvalid > 0) {
            if (ends(c, "_rps")) { p1 = p1 . " " . c; hi1 = mx(hi1, vmax) }
            if (c eq "in_flight") { p2 = p2 . " " . c; hi2 = mx(hi2, vmax) }
            if (ends(c, "_ms")) { p3 = p3 . " " . c; lo3 = mn(lo3, vmin); hi3 = mx(hi3, vmax) }
        }
    }
}
do for [c in header] {
    if (ends(c, "_queue") || ends(c, "_clients_up") || ends(c, "_tokens") || ends(c, "_budget") || ends(c, "_breaker_open") || ends(c, "_reject_p") || ends(c, "_replicas") || ends(c, "_replicas_in_service") || ends(c, "_on_failure_rps") || ends(c, "_cache_hit_ratio") || ends(c, "_work_factor")) {
        nvalid = 0; vmin = NaN; vmax = NaN
        stats datafile using (countv(column(c), NaN)) nooutput
        if (nvalid > 0) {
            if (ends(c, "_queue") || ends(c, "_clients_up")) { p2 = p2 . " " . c; hi2 = mx(hi2, vmax) }
            if (ends(c, "_tokens")) { tok = tok . " " . c; hitok = mx(hitok, vmax) }
            if (ends(c, "_budget")) { bud = bud . " " . c; bmin = mn(bmin, vmin); bmax = mx(bmax, vmax) }
            if (ends(c, "_breaker_open") || ends(c, "_reject_p")) { brk = brk . " " . c }
            if (ends(c, "_replicas") || ends(c, "_replicas_in_service")) { rep = rep . " " . c }
            if (ends(c, "_on_failure_rps")) { p1 = p1 . " " . c; hi1 = mx(hi1, vmax) }
            if (ends(c, "_cache_hit_ratio")) { hit = hit . " " . c }
            if (ends(c, "_work_factor")) { wf = wf . " " . c; lowf = mn(lowf, vmin); hiwf = mx(hiwf, vmax) }
        }
    }
}

label(c) = c eq "offered_rps" ? "offered" : c eq "attempt_rps" ? "attempts" : \
           c eq "goodput_rps" ? "goodput" : c eq "error_rps" ? "errors" : \
           c eq "in_flight" ? "in-flight calls" : \
           c eq "latency_p50_ms" ? "p50" : c eq "latency_p99_ms" ? "p99" : \
           c eq "latency_ok_p50_ms" ? "p50 OK" : c eq "latency_ok_p99_ms" ? "p99 OK" : \
           c eq "latency_failed_p50_ms" ? "p50 failed (dashed)" : \
           c eq "latency_failed_p99_ms" ? "p99 failed (dashed)" : \
           ends(c, "_queue") ? stem(c, "_queue") . " queue" : \
           ends(c, "_clients_up") ? stem(c, "_clients_up") . " clients up" : \
           ends(c, "_tokens") ? stem(c, "_tokens") . " tokens" : \
           ends(c, "_budget") ? stem(c, "_budget") . " budget" : \
           ends(c, "_breaker_open") ? stem(c, "_breaker_open") . " breaker" : \
           ends(c, "_reject_p") ? stem(c, "_reject_p") . " reject p" : \
           ends(c, "_replicas_in_service") ? stem(c, "_replicas_in_service") . " in service" : \
           ends(c, "_replicas") ? stem(c, "_replicas") . " replicas" : \
           ends(c, "_on_failure_rps") ? stem(c, "_on_failure_rps") . " on_failure firings (dash-dot)" : \
           ends(c, "_cache_hit_ratio") ? stem(c, "_cache_hit_ratio") . " cache hit ratio" : \
           ends(c, "_work_factor") ? stem(c, "_work_factor") . " work factor" : c
fixed(c) = c eq "offered_rps" ? "#7f7f7f" : c eq "attempt_rps" ? "#ff7f0e" : \
           c eq "goodput_rps" ? "#2ca02c" : c eq "error_rps" ? "#d62728" : \
           c eq "in_flight" ? "#404040" : c eq "latency_p50_ms" ? "#1f77b4" : \
           c eq "latency_p99_ms" ? "#d62728" : c eq "latency_ok_p50_ms" ? "#1f77b4" : \
           c eq "latency_ok_p99_ms" ? "#d62728" : c eq "latency_failed_p50_ms" ? "#7f7f7f" : \
           c eq "latency_failed_p99_ms" ? "#e377c2" : ""
# failed-call latency is dashed; on_failure firings are dash-dotted, as they often run along the
# errors that set them off
dtc(c) = strstrt(c, "latency_failed") ? 2 : ends(c, "_on_failure_rps") ? 4 : 1
palette = "#1f77b4 #ff7f0e #2ca02c #9467bd #8c564b #e377c2 #17becf #bcbd22 #d62728 #7f7f7f"

# shared-state panels: throttle tokens, budget; the breaker goes on the second y axis of
# the first of them, or alone on its own panel
groups = ""
if (strlen(tok) > 0) { groups = groups . " tok" }
if (strlen(bud) > 0) { groups = groups . " bud" }
if (strlen(groups) == 0 && strlen(brk) > 0) { groups = " brk" }
# replicas (in force, in service) of services whose replicas leave or change: a panel of
# their own after the shared state
if (strlen(rep) > 0) { groups = groups . " rep" }
# the caches' hit ratios (a share, 0..1) and the work factors (a multiplier, >= 1): each its
# own axis, so a panel each, last
if (strlen(hit) > 0) { groups = groups . " hit" }
if (strlen(wf) > 0) { groups = groups . " wf" }
np = 3 + words(groups)

# ---------------------------------------------------------------- output
# past six panels (the most a run without a cache or growing work can have) the picture grows,
# so that each panel keeps room for its legend
height = np > 6 ? 800 + 200 * (np - 6) : 800
if (ext eq ".svg" || ext eq ".SVG") {
    set terminal svg size 1200,height dynamic font "Sans,10" background "white"
} else {
    set terminal pngcairo size 1200,height font "Sans,10"
}
set termoption noenhanced
set output outfile

# Each bucket's value is drawn as a horizontal segment over [t_s, t_s + bucket), joined to
# the previous bucket's by a vertical one (no vertical next to an empty value). S is the
# list of columns of the current plot, OFF shifts palette colours, LOGY drops values <= 0.
LOGY = 0; OFF = 0
yv(y) = LOGY ? (y > 0 ? y : NaN) : y
yl = NaN; yp = NaN
vert(t, y) = (t == tmin) ? (yl = y, NaN) : (yp = yl, yl = y, yp)
colour(c, i) = fixed(c) ne "" ? fixed(c) : word(palette, (i - 1 + OFF) % 10 + 1)
STEPS = "for [i = 1:words(S)] datafile using (column('t_s')):(yv(column(word(S, i)))):(bucket):(0) " . \
        "with vectors nohead lw 1.5 dt dtc(word(S, i)) lc rgb colour(word(S, i), i) title label(word(S, i)), " . \
        "for [i = 1:words(S)] datafile using (column('t_s')):(vert(column('t_s'), yv(column(word(S, i))))):(0):(yl - yp) " . \
        "with vectors nohead lw 1.5 dt dtc(word(S, i)) lc rgb colour(word(S, i), i) notitle"
# the breaker share on the second y axis, dashed
BRK2 = "for [i = 1:words(brk)] datafile using (column('t_s')):(column(word(brk, i))):(bucket):(0) axes x1y2 " . \
       "with vectors nohead lw 1.2 dt 2 lc rgb word(palette, (i + 2) % 10 + 1) title label(word(brk, i)), " . \
       "for [i = 1:words(brk)] datafile using (column('t_s')):(vert(column('t_s'), column(word(brk, i)))):(0):(yl - yp) axes x1y2 " . \
       "with vectors nohead lw 1.2 dt 2 lc rgb word(palette, (i + 2) % 10 + 1) notitle"

set xrange [tmin : tmax + bucket]
set grid xtics ytics lc rgb "#e0e0e0" lt 1 lw 1
set border 3 lc rgb "#404040"
set tics nomirror out scale 0.6
nw = words(wins) / 2
do for [k = 1:nw] {
    set object k rect from first real(word(wins, 2 * k - 1)), graph 0 \
        to first real(word(wins, 2 * k)), graph 1 behind fc rgb "#ffd6d6" fs solid 1.0 noborder
}
faultkey = nw > 0 ? "keyentry with boxes fc rgb '#ffd6d6' fs solid 1.0 noborder title 'fault active'" : "NaN notitle"
# the operators' firings: a dashed vertical line each, in every panel
do for [k = 1:words(marks)] {
    set arrow 100 + k from first real(word(marks, k)), graph 0 to first real(word(marks, k)), graph 1 \
        nohead dt 2 lw 1.5 lc rgb "#6a3d9a" front
}
if (words(marks) > 0) { faultkey = faultkey . ", keyentry with lines dt 2 lw 1.5 lc rgb '#6a3d9a' title 'operator fired'" }

# room on the right for the legends: as wide as the longest entry needs
maxlen = 15
do for [c in p1 . p2 . p3 . tok . bud . brk . rep . hit . wf] { maxlen = strlen(label(c)) > maxlen ? strlen(label(c)) : maxlen }
R = 1 - 0.03 - (maxlen * 6.6 + 50) / 1200.0 - 0.06
R = R < 0.55 ? 0.55 : R > 0.8 ? 0.8 : R
L = 0.075; TOP = 0.935; BOT = 0.075; GAP = 0.025
wsum = 1.3 + (np - 1)                      # panel 1 a bit taller
unit = (TOP - BOT - GAP * (np - 1)) / wsum
ptop(p) = p == 1 ? TOP : TOP - unit * 1.3 - GAP - (p - 2) * (unit + GAP)
pbot(p) = p == 1 ? TOP - unit * 1.3 : ptop(p) - unit
KX = R + 0.06
# a round tic increment near x: 1, 2 or 5 times a power of ten
niceinc(x) = (e = 10 ** floor(log10(x)), m = x / e, (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * e)

set multiplot title title font "Sans,12"
set lmargin at screen L
set rmargin at screen R
set key left top Left reverse samplen 2.5 spacing 1.15 nobox
set format x ""; unset xlabel

# ---- panel 1: rates
set tmargin at screen ptop(1); set bmargin at screen pbot(1)
set key at screen KX, screen ptop(1)
set ylabel "requests/s"
if (words(p1) > 0) {
    S = p1
    if (hi1 > 0) { set yrange [0:*] } else { set yrange [0:1] }
    plot @STEPS, @faultkey
} else {
    set yrange [0:1]; set label 99 "no values" at graph 0.5, 0.5 center
    plot NaN notitle, @faultkey
    unset label 99
}

# ---- panel 2: in flight and queues
set tmargin at screen ptop(2); set bmargin at screen pbot(2)
set key at screen KX, screen ptop(2)
set ylabel "requests"
if (words(p2) > 0) {
    S = p2
    if (hi2 > 0) { set yrange [0:*] } else { set yrange [0:1] }
    plot @STEPS
} else {
    set yrange [0:1]; set label 99 "no values" at graph 0.5, 0.5 center; unset key
    plot NaN notitle
    unset label 99; set key
}

# ---- panel 3: latency (log y)
set tmargin at screen ptop(3); set bmargin at screen pbot(3)
set key at screen KX, screen ptop(3)
set ylabel "latency (ms)"
set logscale y
set format y "%g"
if (np == 3) { set format x "%g"; set xlabel "time (s)" }
if (words(p3) > 0) {
    S = p3; LOGY = 1
    if (lo3 < hi3) { set yrange [*:*] } else { set yrange [10 ** floor(log10(lo3)) : 10 ** (floor(log10(hi3)) + 1)] }
    plot @STEPS
} else {
    set yrange [1:10]; set label 99 "no latency values" at graph 0.5, 0.5 center; unset key
    plot NaN notitle
    unset label 99; set key
}
unset logscale y
LOGY = 0

# ---- panels 4..: shared state (throttle tokens, budget; breaker share on y2 of the first)
brkdone = 0
do for [g = 1:words(groups)] {
    grp = word(groups, g)
    p = 3 + g
    set tmargin at screen ptop(p); set bmargin at screen pbot(p)
    set key at screen KX, screen ptop(p)
    if (p == np) { set format x "%g"; set xlabel "time (s)" }
    if (grp eq "rep") {
        set ylabel "replicas"
        set yrange [0:*]
        set ytics autofreq
        S = rep; OFF = 6; plot @STEPS
    } else { if (grp eq "hit") {
        set ylabel "cache hit ratio"
        set yrange [-0.05:1.05]
        set ytics 0, 0.25, 1
        S = hit; OFF = 0; plot @STEPS
    } else { if (grp eq "wf") {
        # a multiplier: 1 is the normal service time, always in range (a size profile can take
        # it below); a log axis when it grows past 20x
        set ylabel "service time (x normal)"
        set ytics autofreq
        set format y "%gx"
        wlo = lowf < 1 ? lowf : 1
        if (hiwf > 20) {
            set logscale y; set yrange [wlo:*]
        } else {
            set yrange [(wlo < 1 ? wlo * 0.9 : 1) : (hiwf > 1 ? hiwf * 1.1 : wlo < 1 ? 1.1 : 2)]
        }
        S = wf; OFF = 1; plot @STEPS
        unset logscale y; set format y "%g"
    } else { if (grp eq "brk") {
        set ylabel "breaker open, reject p (share)"
        set yrange [-0.05:1.05]
        set ytics 0, 0.25, 1
        S = brk; OFF = 3; plot @STEPS
    } else {
        S = grp eq "tok" ? tok : bud
        OFF = grp eq "tok" ? 0 : 5
        set ylabel (grp eq "tok" ? "throttle tokens" : "retry budget available")
        set ytics autofreq
        if (grp eq "tok") {
            if (hitok > 0) { set yrange [0:*] } else { set yrange [0:1] }
        } else {
            # the budget moves little around its capacity: zoom on it, with 3 to 6 tics
            if (bmax > bmin) {
                set yrange [*:*]; set ytics niceinc((bmax - bmin) / 4)
            } else {
                set yrange [0 : bmax > 0 ? bmax * 1.15 : 1]
            }
        }
        if (!brkdone && strlen(brk) > 0) {
            brkdone = 1
            set y2label "breaker open, reject p (share), dashed"
            set y2range [-0.05:1.05]
            set y2tics 0, 0.5, 1 out scale 0.6
            set border 11 lc rgb "#404040"
            plot @STEPS, @BRK2
            unset y2tics; unset y2label; set border 3 lc rgb "#404040"
        } else {
            plot @STEPS
        }
    } } } }
}
unset multiplot
set output
