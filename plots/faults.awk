# faults.awk: what compare.gp, edge.gp and limits.gp read of a timeseries.csv besides the
# lines: the trigger to shade, and which variants ran identically.
#
#   awk -v mode=shared|same -f faults.awk DIR/timeseries.csv
#
# The file is long (first column variant, the runs one after another) or wide (one run).
#   shared  the windows "start end start end ..." (on one line) of the buckets where every
#           variant has faults_active > 0: the faults the variants share, which is the trigger
#           the recovery rule judges, not the union of each variant's own faults. Consecutive
#           buckets make one window, which ends one bucket after its last start.
#   same    one line per variant, in the file's order: the first earlier variant whose rows are
#           identical to its own (it is drawn exactly under that one), or "-".
BEGIN { FS = ","; nv = 0; nt = 0 }
{ sub(/\r$/, "") }
NR == 1 {
    long = $1 == "variant"
    for (i = 1; i <= NF; i++) { if ($i == "t_s") ct = i; if ($i == "faults_active") cf = i }
    next
}
NF == 0 { next }
{
    v = long ? $1 : "-"
    if (!(v in vi)) { vi[v] = ++nv; name[nv] = v }
    t = $ct + 0
    if (!(t in seen)) { seen[t] = 1; ts[++nt] = t }
    if (cf && $cf > 0) on[t]++
    if (mode == "same") { row = $0; sub(/^[^,]*,/, "", row); body[v] = body[v] row "\n" }
}
END {
    if (mode == "shared") {
        out = ""; inw = 0
        bucket = nt > 1 ? ts[2] - ts[1] : 1
        for (k = 1; k <= nt; k++) {
            all = (ts[k] in on) && on[ts[k]] == nv
            if (all && !inw) { inw = 1; ws = ts[k] }
            if (!all && inw) { inw = 0; out = out sprintf(" %.12g %.12g", ws, ts[k]) }
        }
        if (inw) out = out sprintf(" %.12g %.12g", ws, ts[nt] + bucket)
        print out
    }
    if (mode == "same")
        for (i = 1; i <= nv; i++) {
            same = "-"
            for (j = 1; j < i && same == "-"; j++) if (body[name[j]] == body[name[i]]) same = name[j]
            print same
        }
}
