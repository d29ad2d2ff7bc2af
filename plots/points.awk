# points.awk: reads a study's points.csv for plots/sweep.gp and plots/heatmap.gp.
#
#   awk -v mode=MODE [-v m=METRIC -v v=VARIANT -v ax=PATH -v ay=PATH -v fk=FACET] \
#       -f csv.awk -f points.awk FILE
#
# points.csv has the columns point,<one column per axis, named by its path>,variant,metric,n,
# mean,sd,lo,hi,half_width (docs/cli.md); they are found by name in the header, and fields in
# double quotes may hold commas. Modes, each printing one item a line:
#   check     "ok", or what is wrong with the file
#   axes      the axis columns (between point and variant)
#   metrics   the metrics, in the file's order
#   variants  the variants, in the file's order
#   values    the distinct values of axis ax, in order of first appearance (in the rows of
#             metric m when m is given, as sweep and cells count them)
#   numeric   1 when every value of ax starts with a number (400/s, 0.25, 12s, 50%), else 0
#   integer   1 when every value of ax is a whole number (with or without a unit), else 0
#   unit      what follows the number in the first value of ax (/s, s, ms, %), or nothing
#   facets    the distinct combinations of the other axes, as path=value|path=value ("-" with none)
#   xrange    the smallest and the largest number of axis ax
#   range     the smallest and the largest mean of metric m (over lo and hi too)
#   isprop    1 when metric m has an empty sd everywhere and its means lie in [0, 1] (a proportion)
#   sweep     rows "x mean lo hi" of metric m, variant v and facet fk; x is the number of the
#             value of ax, or its index (0, 1, ...) among the rows of m when ax is not numeric;
#             an empty lo or hi is the mean
#   cells     rows "ix iy mean" of metric m and variant v: the indices of the values of ax and ay
#             among the rows of m

function num(s) { return s + 0 }
function isnum(s) { return s ~ /^[ ]*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?/ }
function unitof(s) {
    sub(/^[ ]*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?/, "", s)
    return s
}
function facet(f,    k, i) {
    k = ""
    for (i = 1; i <= nax; i++) {
        if (axname[i] == ax) continue
        k = k (k == "" ? "" : "|") axname[i] "=" f[axcol[i]]
    }
    return k == "" ? "-" : k
}
BEGIN { nbad = 0; lo_m = ""; hi_m = ""; allnum = 1; prop = 1; nrows = 0 }
{ sub(/\r$/, "") }
NR == 1 {
    nh = split_csv($0, h)
    for (i = 1; i <= nh; i++) col[h[i]] = i
    nax = 0
    if (h[1] == "point" && ("variant" in col))
        for (i = 2; i < col["variant"]; i++) { axname[++nax] = h[i]; axcol[nax] = i }
    bad = ""
    if (h[1] != "point") bad = "its header must start with point"
    else {
        split("variant metric n mean sd lo hi", need, " ")
        for (i = 1; i <= 7; i++) if (!(need[i] in col)) { bad = "it has no column " need[i]; break }
    }
    if (mode == "check") { if (bad != "") { print bad; exit } }
    else if (bad != "") exit 1
    if (mode == "axes") for (i = 1; i <= nax; i++) print axname[i]
    if (ax != "" && !(ax in col)) { if (mode == "check") { print "it has no axis column " ax; exit } exit 1 }
    if (ay != "" && !(ay in col)) { if (mode == "check") { print "it has no axis column " ay; exit } exit 1 }
    next
}
NF == 0 { next }
# a row of another metric cannot be one of m's: skipped before it is split
(mode == "sweep" || mode == "cells" || mode == "range" || mode == "isprop" || (mode == "values" && m != "")) && index($0, m) == 0 { next }
{
    n = split_csv($0, f)
    nrows++
    vr = f[col["variant"]]; me = f[col["metric"]]
    if (mode == "metrics" && !(me in seen)) { seen[me] = 1; print me }
    else if (mode == "variants" && !(vr in seen)) { seen[vr] = 1; print vr }
    else if (mode == "values" && (m == "" || me == m) && !(f[col[ax]] in seen)) { seen[f[col[ax]]] = 1; print f[col[ax]] }
    else if (mode == "numeric" && !isnum(f[col[ax]])) allnum = 0
    else if (mode == "integer" && (!isnum(f[col[ax]]) || num(f[col[ax]]) != int(num(f[col[ax]])))) allnum = 0
    else if (mode == "unit" && nrows == 1) print unitof(f[col[ax]])
    else if (mode == "xrange") {
        x = num(f[col[ax]])
        if (lo_m == "" || x < lo_m) lo_m = x
        if (hi_m == "" || x > hi_m) hi_m = x
    }
    else if (mode == "facets") { k = facet(f); if (!(k in seen)) { seen[k] = 1; print k } }
    else if ((mode == "range" || mode == "isprop") && me == m) {
        x = f[col["mean"]]
        if (x == "") next
        if (f[col["sd"]] != "" || num(x) < 0 || num(x) > 1) prop = 0
        if (lo_m == "" || num(x) < lo_m) lo_m = num(x)
        if (hi_m == "" || num(x) > hi_m) hi_m = num(x)
        if (f[col["lo"]] != "" && num(f[col["lo"]]) < lo_m) lo_m = num(f[col["lo"]])
        if (f[col["hi"]] != "" && num(f[col["hi"]]) > hi_m) hi_m = num(f[col["hi"]])
    }
    else if (mode == "sweep" || mode == "cells") {
        xv = f[col[ax]]
        if (!(xv in xi)) xi[xv] = nx++
        if (mode == "cells") { yv = f[col[ay]]; if (!(yv in yi)) yi[yv] = ny++ }
        if (me != m || vr != v || f[col["mean"]] == "") next
        if (mode == "cells") { print xi[xv], yi[yv], f[col["mean"]]; next }
        if (facet(f) != fk) next
        lo = f[col["lo"]] == "" ? f[col["mean"]] : f[col["lo"]]
        hi = f[col["hi"]] == "" ? f[col["mean"]] : f[col["hi"]]
        print (numx ? num(xv) : xi[xv]), f[col["mean"]], lo, hi
    }
}
END {
    if (mode == "check" && NR >= 1 && bad == "") print (nrows == 0 ? "it has no data rows" : "ok")
    if (mode == "numeric" || mode == "integer") print (allnum && nrows > 0) ? 1 : 0
    if ((mode == "range" || mode == "xrange") && lo_m != "") print lo_m, hi_m
    if (mode == "isprop") print (prop && lo_m != "") ? 1 : 0
}
