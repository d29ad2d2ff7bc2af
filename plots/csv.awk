# csv.awk: split_csv(line, out), the CSV field splitter that plots/points.awk and plots/study.awk
# load before themselves (awk -f csv.awk -f points.awk): fields in double quotes may hold commas
# and doubled quotes, as the program writes them (docs/cli.md). Returns the number of fields.

function split_csv(line, out,    n, i, c, f, inq) {
    if (index(line, "\"") == 0) return split(line, out, ",")
    n = 0; f = ""; inq = 0
    for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (inq) {
            if (c == "\"") {
                if (substr(line, i + 1, 1) == "\"") { f = f "\""; i++ } else inq = 0
            } else f = f c
        } else if (c == "\"") inq = 1
        else if (c == ",") { out[++n] = f; f = "" }
        else f = f c
    }
    out[++n] = f
    return n
}
