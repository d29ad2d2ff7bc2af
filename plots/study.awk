# study.awk: reads a study's runs.csv, points.csv or paired.csv for plots/study.gp.
#
#   awk -v mode=MODE -v kind=KIND [-v m=METRIC] -f csv.awk -f study.awk FILE
#
# kind: spread (runs.csv: one value per replication), share (points.csv: a proportion with its
# Wilson interval), paired (paired.csv: each variant minus the baseline, with its interval),
# series (series.csv: per variant and bucket the mean goodput and its 10-90 % band; modes check,
# variants, and data with -v v=INDEX: "t_s mean p10 p90 offered" of that variant).
# Columns are found by name in the header; only the first point is read (the pictures are of a
# study without a sweep). Modes, each printing one item a line:
#   check     "ok", or what is wrong with the file for this kind
#   variants  the variants, in the file's order
#   baseline  paired: the baseline's name
#   has       1 when metric m has a value in some row, else 0
#   data      spread: "i r value" (i the variant's index from 0, r the replication);
#             share: "i p lo hi"; paired: "i mean_diff lo hi"; of metric m
#   summary   spread: "i mean min max" of metric m per variant
#   range     the smallest and the largest number drawn of metric m (values, lo and hi)
BEGIN { nrows = 0; lo_m = ""; hi_m = ""; nvar = 0 }
{ sub(/\r$/, "") }
NR == 1 {
    nh = split_csv($0, h)
    for (i = 1; i <= nh; i++) col[h[i]] = i
    if (kind == "spread") need = "point variant replication metric value"
    else if (kind == "series") need = "variant t_s n goodput_mean goodput_p10 goodput_p90 offered_mean"
    else if (kind == "share") need = "point variant metric mean lo hi"
    else need = "point variant baseline metric mean_diff lo hi"
    what = kind == "spread" ? "runs.csv" : kind == "share" ? "points.csv" : \
           kind == "series" ? "series.csv" : "paired.csv"
    nn = split(need, nd, " ")
    bad = ""
    for (i = 1; i <= nn; i++) if (!(nd[i] in col)) { bad = "it has no column " nd[i] ": not a " what; break }
    if (mode == "check" && bad != "") { print bad; exit }
    if (bad != "") exit 1
    vcol = kind == "paired" ? col["mean_diff"] : kind == "share" ? col["mean"] : col["value"]
    next
}
NF == 0 { next }
kind == "series" {
    n = split_csv($0, f)
    nrows++
    vr = f[col["variant"]]
    if (!(vr in vi)) { vi[vr] = nvar++; if (mode == "variants") print vr }
    if (mode == "data" && vi[vr] == v)
        print f[col["t_s"]], f[col["goodput_mean"]], f[col["goodput_p10"]], \
              f[col["goodput_p90"]], f[col["offered_mean"]]
    next
}
{
    n = split_csv($0, f)
    if (f[col["point"]] != "0") next
    nrows++
    vr = f[col["variant"]]
    if (!(vr in vi)) { vi[vr] = nvar++; if (mode == "variants") print vr }
    if (mode == "baseline" && nrows == 1) print f[col["baseline"]]
    if (f[col["metric"]] != m || f[vcol] == "") next
    x = f[vcol] + 0
    seen_m = 1
    lo = kind == "spread" || f[col["lo"]] == "" ? x : f[col["lo"]] + 0
    hi = kind == "spread" || f[col["hi"]] == "" ? x : f[col["hi"]] + 0
    if (lo_m == "" || lo < lo_m) lo_m = lo
    if (hi_m == "" || hi > hi_m) hi_m = hi
    if (x < lo_m) lo_m = x
    if (x > hi_m) hi_m = x
    if (mode == "data") {
        if (kind == "spread") print vi[vr], f[col["replication"]], x
        else print vi[vr], x, lo, hi
    }
    if (mode == "summary") {
        k = vi[vr]; sum[k] += x; cnt[k]++
        if (!(k in mn) || x < mn[k]) mn[k] = x
        if (!(k in mx) || x > mx[k]) mx[k] = x
    }
}
END {
    if (mode == "check" && bad == "") print (nrows == 0 ? "it has no data rows" : "ok")
    if (mode == "has") print seen_m ? 1 : 0
    if (mode == "range" && lo_m != "") print lo_m, hi_m
    if (mode == "summary") for (k = 0; k < nvar; k++) if (k in cnt) print k, sum[k] / cnt[k], mn[k], mx[k]
}
