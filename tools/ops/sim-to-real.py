#!/usr/bin/python3
"""sim-to-real: retrysim checked against real gRPC on loopback (docs/sim-to-real.md).

Every case in tests/sim-to-real/*.json runs three ways, with its service config JSON verbatim
in all three:
  libretry  examples/grpc/grpc_client --mode libretry (gRPC's retries off, libretry's on)
  grpc      the same client with --mode grpc (the service config given to gRPC C-core 1.51)
  retrysim  build/retrysim on a scenario written from the case (the same script as faults)
against tools/ops/grpc_flaky_server.py, which counts the attempts of each logical call and records
when each arrived. One table, a tolerance per row; exit 1 when a row is outside it.

A row may state a known difference between real gRPC and retrysim ("known"): the real value
is then checked against the value the case states for it (within the row's tolerance), and
the row also fails when the difference has gone (retrysim now agrees: the note is stale).

Usage: sim-to-real.py --client PATH --retrysim PATH [--work DIR] [--cases DIR] [--only NAME]
                      [--target HOST:PORT]   (--target: an already running flaky server)
"""

import argparse
import glob
import json
import math
import os
import statistics
import subprocess
import sys
import time

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
METHOD_DEFAULT = "/flaky.v1.Flaky/Do"
# The profile of the real stack compared here (retry/retry_profile.c).
PROFILE = "grpc-core-1.51"


def die(msg):
    print("sim-to-real: " + msg, file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------- the server

class FlakyServer:
    def __init__(self, target=None):
        self.proc = None
        if target is None:
            self.proc = subprocess.Popen(
                ["/usr/bin/python3", os.path.join(HERE, "grpc_flaky_server.py"), "--port", "0",
                 "--max-seconds", "900"], stdout=subprocess.PIPE, text=True)
            line = self.proc.stdout.readline()
            if not line.startswith("PORT "):
                die("the flaky server did not start")
            target = "127.0.0.1:" + line.split()[1]
        self.target = target
        self.channel = grpc.insecure_channel(target)

    def control(self, name, payload=b"{}"):
        return self.channel.unary_unary("/retrysim.Control/" + name)(payload, timeout=10)

    def load(self, spec):
        self.control("Load", json.dumps(spec).encode())

    def dump(self):
        return json.loads(self.control("Dump").decode())["attempts"]

    def close(self):
        if self.proc is not None:
            try:
                self.control("Quit")
            except grpc.RpcError:
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.channel.close()


# ---------------------------------------------------------------- statistics

def mean(xs):
    return statistics.fmean(xs) if xs else float("nan")


def std(xs):
    return statistics.pstdev(xs) if len(xs) > 1 else 0.0


def drop_stalls(xs):
    """Leaves out the gaps a stall of the shared machine stretched: farther from the median than
    3 interquartile ranges plus 5 ms. A jitter of +-20 % never is; a 50 ms stall of the Python
    server or the scheduler is."""
    if len(xs) < 4:
        return xs
    q = statistics.quantiles(xs, n=4)
    med = statistics.median(xs)
    lim = 3 * (q[2] - q[0]) + 5.0
    return [x for x in xs if abs(x - med) <= lim]


def status_text(counts):
    """{"UNAVAILABLE": 15, "OK": 5} -> "UNAVAILABLE 75% OK 25%", most frequent first."""
    n = sum(counts.values())
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return " ".join("%s %.0f%%" % (k, 100.0 * v / n) for k, v in items) if items else "-"


def real_metrics(case, calls, attempts):
    """calls: client lines; attempts: server records. Returns metric -> value."""
    per_call = {}
    for rec in attempts:
        per_call.setdefault(rec[0], []).append(rec)
    m = {}
    n = len(calls)
    m["calls"] = n
    m["attempts_total"] = sum(len(per_call.get(c["id"], [])) for c in calls)
    m["attempts_per_call"] = m["attempts_total"] / n if n else 0.0
    st = {}
    for c in calls:
        st[c["status"]] = st.get(c["status"], 0) + 1
    m["status"] = status_text(st)
    lat = [c["latency_ms"] for c in calls]
    m["latency_mean_ms"] = mean(lat)
    m["latency_p50_ms"] = statistics.median(lat) if lat else float("nan")
    m["success_ratio"] = st.get("OK", 0) / n if n else 0.0
    m["amplification"] = m["attempts_per_call"]
    for k in range(1, 8):
        gaps = []
        for c in calls:
            recs = sorted(per_call.get(c["id"], []), key=lambda r: r[1])
            if len(recs) > k:
                gaps.append(recs[k][2] - recs[k - 1][2])
        if gaps:
            gaps = drop_stalls(gaps)
            m["gap%d_mean_ms" % k] = mean(gaps)
            m["gap%d_std_ms" % k] = std(gaps)
    return m


def run_real(case, server, client, mode, work):
    spec = case["server"]
    server.load(spec)
    r = case.get("real", {})
    cmd = [client, "--target", server.target, "--config", case["_policy_path"], "--method",
           case.get("method", METHOD_DEFAULT), "--mode", mode, "--calls", str(r.get("calls", 10)),
           "--threads", str(r.get("threads", 1)), "--think-ms", str(r.get("think_ms", 0)),
           "--duration-ms", str(r.get("duration_ms", 0)), "--seed", str(r.get("seed", 1)),
           "--deadline-ms", str(r.get("deadline_ms", 0)),
           "--id", mode]
    t0 = time.monotonic()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=r.get("timeout_s", 120))
    except subprocess.TimeoutExpired:
        die("%s: the %s client ran for more than %s s" % (case["name"], mode, r.get("timeout_s", 120)))
    if out.returncode != 0:
        die("%s: %s client failed (%d): %s" % (case["name"], mode, out.returncode, out.stderr.strip()))
    calls = []
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) == 6 and f[0] == "call":
            calls.append({"id": f[1], "status": f[2], "latency_ms": float(f[3]),
                          "attempts": f[4], "reason": f[5]})
    attempts = server.dump()
    with open(os.path.join(work, "%s-%s.txt" % (case["name"], mode)), "w") as fh:
        fh.write(out.stdout)
        json.dump(attempts, fh)
        fh.write("\n")
    m = real_metrics(case, calls, attempts)
    m["_wall_s"] = time.monotonic() - t0
    return m


# ---------------------------------------------------------------- retrysim

def faults_from_script(script, upto=None):
    """The server's script as retrysim faults: entry k for attempt k, the last one repeating. A
    failure is a refusal (trailers only), or with "headers" a handler's failure after the
    response headers (fail, after_headers), which commits the call."""
    faults = []
    n = len(script)
    for k, e in enumerate(script, start=1):
        if upto is not None and k > upto:
            break
        attempts = list(range(k, 33)) if (k == n and upto is None) else [k]
        status = e.get("status", "OK")
        if status == "OK":
            if e.get("delay_ms"):
                faults.append({"kind": "stall", "delay": "%gms" % e["delay_ms"], "attempts": attempts})
            continue
        f = {"kind": "refuse", "status": status, "attempts": attempts}
        if e.get("headers"):
            f = {"kind": "fail", "status": status, "after_headers": True, "attempts": attempts}
        if e.get("delay_ms"):
            f["delay"] = "%gms" % e["delay_ms"]
        if e.get("pushback") is not None:
            if isinstance(e["pushback"], list):
                die("a list of pushback values has no retrysim fault")
            f["pushback"] = e["pushback"]
        faults.append(f)
    return faults


def scenario_for(case, policy_file):
    spec = case["server"]
    r = case.get("real", {})
    sim = case.get("sim", {})
    svc = {"workers": spec.get("workers") or 1000, "service_time": "%gms" % spec.get("service_ms", 0)}
    if spec.get("service_spread_ms"):
        c, w = spec.get("service_ms", 0), spec["service_spread_ms"]
        svc["service_time"] = {"dist": "uniform", "min": "%gms" % (c - w), "max": "%gms" % (c + w)}
    if spec.get("random") is not None:
        rnd = spec["random"]
        svc["faults"] = [{"kind": "refuse", "status": rnd.get("status", "UNAVAILABLE"), "rate": rnd["rate"]}]
    else:
        svc["faults"] = faults_from_script(spec.get("script", [{"status": "OK"}]))
    if spec.get("workers") is not None:
        svc["queue"] = {"capacity": 0 if spec.get("overflow", "refuse") == "refuse" else 1000}
        svc["reject"] = {"status": spec.get("refuse_status", "UNAVAILABLE")}
        w = spec.get("window")
        if w is not None:
            svc["faults"].append({"kind": "capacity", "workers": w["workers"],
                                  "start": "%gs" % w["start_s"], "end": "%gs" % w["end_s"]})
    threads = r.get("threads", 1)
    client = {"target": "flaky", "methods": [case.get("method", METHOD_DEFAULT)],
              "policy": os.path.basename(policy_file)}
    if r.get("deadline_ms"):
        client["deadline"] = "%gms" % r["deadline_ms"]
    if r.get("duration_ms"):
        duration = "%gms" % r["duration_ms"]
        client["count"] = threads
        client["arrival"] = {"kind": "closed", "think": "%gms" % r.get("think_ms", 0)}
    else:
        # Calls one after the other on one client, far enough apart never to overlap.
        n = sim.get("calls", r.get("calls", 10) * threads)
        step = sim.get("spacing_s", 2.0)
        client["arrival"] = {"kind": "script", "at": ["%gs" % (i * step) for i in range(min(n, 256))]}
        client["count"] = max(1, (n + 255) // 256)
        duration = "%gs" % (min(n, 256) * step)
    scen = {"name": "sim-to-real-" + case["name"],
            "description": "sim-to-real case %s (written by tools/ops/sim-to-real.py)" % case["name"],
            "seed": sim.get("seed", 1), "duration": duration, "drain": "5s",
            "services": {"flaky": svc}, "clients": {"real": client}}
    # Gap k needs the calls whose first k attempts fail: one variant per k (see gaps_from_sim).
    gaps = sim.get("gaps", 0)
    if gaps:
        script = spec["script"]
        scen["variants"] = [{"name": "all", "set": {}}]
        for k in range(0, gaps + 1):
            scen["variants"].append({"name": "fail%d" % k, "set": {
                "services.flaky.faults": faults_from_script(script, upto=k)}})
    return scen


def hist_moments(rows):
    """Mean and variance of a latency.csv histogram (bucket midpoints)."""
    n = sum(c for _, _, c in rows)
    if n == 0:
        return float("nan"), float("nan")
    mu = sum((lo + hi) / 2 * c for lo, hi, c in rows) / n
    var = sum(((lo + hi) / 2 - mu) ** 2 * c for lo, hi, c in rows) / n
    return mu, var


def run_sim(case, retrysim, work, profile=None):
    policy_file = case["_policy_path"]
    tag = case["name"]
    if profile is not None:
        # The same policy naming the implementation it models: retrysim.profile.
        pol = json.loads(json.dumps(case["policy"]))
        pol.setdefault("retrysim", {})["profile"] = profile
        tag = case["name"] + "." + profile
        policy_file = os.path.join(work, tag + ".policy.json")
        with open(policy_file, "w") as fh:
            json.dump(pol, fh, indent=2)
            fh.write("\n")
    scen = scenario_for(case, policy_file)
    path = os.path.join(work, tag + ".scenario.json")
    with open(path, "w") as fh:
        json.dump(scen, fh, indent=2)
        fh.write("\n")
    out_dir = os.path.join(work, tag + ".out")
    p = subprocess.run([retrysim, "run", path, "--quiet", "--out", out_dir], capture_output=True,
                       text=True, timeout=300)
    if p.returncode != 0:
        die("%s: retrysim failed (%d): %s" % (case["name"], p.returncode, p.stderr.strip()))
    with open(os.path.join(out_dir, "summary.json")) as fh:
        summ = json.load(fh)
    runs = {None: summ} if summ.get("variants") is None else {v["variant"]: v for v in summ["variants"]}
    hist = {}
    with open(os.path.join(out_dir, "latency.csv")) as fh:
        next(fh)
        for line in fh:
            v, lo, hi, c, _ = line.strip().rsplit(",", 4)
            hist.setdefault(v.strip('"'), []).append((float(lo), float(hi), int(c)))
    main = runs.get("all", runs.get(None))
    calls = main["calls"]
    m = {"calls": calls["started"], "attempts_total": calls["attempts"]}
    m["attempts_per_call"] = calls["attempts"] / calls["started"] if calls["started"] else 0.0
    m["status"] = status_text(calls["by_status"])
    m["latency_mean_ms"] = main["latency_ms"]["mean"]
    m["latency_p50_ms"] = main["latency_ms"]["p50"]
    m["success_ratio"] = calls["ok"] / calls["started"] if calls["started"] else 0.0
    m["amplification"] = m["attempts_per_call"]
    gaps = case.get("sim", {}).get("gaps", 0)
    prev = None
    for k in range(0, gaps + 1):
        mu, var = hist_moments(hist.get("fail%d" % k, []))
        if prev is not None:
            m["gap%d_mean_ms" % k] = mu - prev[0]
            m["gap%d_std_ms" % k] = math.sqrt(max(0.0, var - prev[1]))
        prev = (mu, var)
    return m


# ---------------------------------------------------------------- judging

def within(a, b, tol):
    if isinstance(a, str) or isinstance(b, str) or tol == "exact":
        if isinstance(a, float) and isinstance(b, float):
            return a == b
        return a == b
    ab, rel = tol
    if any(isinstance(x, float) and math.isnan(x) for x in (a, b)):
        return False
    return abs(a - b) <= ab + rel * max(abs(a), abs(b))


def tol_text(tol):
    if tol == "exact":
        return "exact"
    ab, rel = tol
    parts = []
    if ab:
        parts.append("%g" % ab)
    if rel:
        parts.append("%g%%" % (rel * 100))
    return "±" + " + ".join(parts) if parts else "exact"


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return "[%s]" % ", ".join(fmt(x) for x in v)
    if isinstance(v, int):
        return str(v)
    if abs(v) < 1e-6:
        return "0"  # a variance difference's rounding, not a measurement
    return "%.4g" % v if abs(v) < 1000 else "%.0f" % v


def judge_profile(row, got, profile):
    """The profile column: real gRPC against retrysim with the profile of the implementation,
    which must agree unless the row states a difference that remains (known_profile)."""
    tol = row.get("tol", "exact")
    known = row.get("known_profile", {}).get("grpc")
    if known is None:
        if within(got["grpc"], got[profile], tol):
            return True, "ok"
        return False, "FAIL: grpc != %s" % profile
    if within(got["grpc"], got[profile], tol):
        return False, "FAIL: grpc difference gone under %s" % profile
    return True, "ok, known: %s" % known["why"]


def judge(row, got):
    """Returns (ok, verdict) for one row: each real way against retrysim, unless the row states
    a known difference for that way (then against the stated value, and retrysim must differ)."""
    tol = row.get("tol", "exact")
    sim = got["retrysim"]
    notes = []
    ok = True
    for way in ("libretry", "grpc"):
        known = row.get("known", {}).get(way)
        if known is None:
            if not within(got[way], sim, tol):
                ok = False
                notes.append("%s != retrysim" % way)
        else:
            v = known["value"]
            if isinstance(v, list):
                inside = not isinstance(got[way], str) and v[0] <= got[way] <= v[1]
            else:
                inside = within(got[way], v, tol)
            if not inside:
                ok = False
                notes.append("%s not the stated %s" % (way, fmt(known["value"])))
            elif within(got[way], sim, tol):
                ok = False
                notes.append("%s difference gone" % way)
            else:
                notes.append("known: %s (%s)" % (known["why"], way))
    if ok and not notes:
        return True, "ok"
    return ok, ("ok, " if ok else "FAIL: ") + "; ".join(dict.fromkeys(notes))


def self_test():
    """The judge can fail: checked on made-up rows before any real run."""
    row = {"metric": "m", "tol": [1, 0]}
    assert judge(row, {"libretry": 10, "grpc": 10.5, "retrysim": 10})[0]
    assert not judge(row, {"libretry": 10, "grpc": 12, "retrysim": 10})[0]
    known = {"metric": "m", "tol": [1, 0], "known": {"grpc": {"value": 0, "why": "w"}}}
    assert judge(known, {"libretry": 10, "grpc": 0.5, "retrysim": 10})[0]
    assert not judge(known, {"libretry": 10, "grpc": 5, "retrysim": 10})[0]   # not the stated value
    assert not judge(known, {"libretry": 10, "grpc": 0, "retrysim": 0.2})[0]  # difference gone
    rng = {"metric": "m", "tol": [1, 0], "known": {"grpc": {"value": [4, 6], "why": "w"}}}
    assert judge(rng, {"libretry": 10, "grpc": 5, "retrysim": 10})[0]
    assert not judge(rng, {"libretry": 10, "grpc": 7, "retrysim": 10})[0]
    assert not judge({"metric": "s"}, {"libretry": "OK 100%", "grpc": "OK 50% UNAVAILABLE 50%",
                                       "retrysim": "OK 100%"})[0]
    assert judge_profile(row, {"grpc": 3, PROFILE: 3.5}, PROFILE)[0]
    assert not judge_profile(row, {"grpc": 3, PROFILE: 5}, PROFILE)[0]
    gaps = [100, 101, 99, 100, 102, 98, 100, 101, 99, 160]
    assert drop_stalls(gaps) == gaps[:-1]


def main():
    self_test()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--client", required=True)
    ap.add_argument("--retrysim", required=True)
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "sim-to-real"))
    ap.add_argument("--cases", default=os.path.join(ROOT, "tests", "sim-to-real"))
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--target", default=None)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    files = sorted(glob.glob(os.path.join(args.cases, "*.json")))
    if not files:
        die("no case in " + args.cases)
    cases = []
    for f in files:
        with open(f) as fh:
            try:
                case = json.load(fh)
            except json.JSONDecodeError as e:
                die("%s:%d:%d: %s" % (f, e.lineno, e.colno, e.msg))
        case["name"] = os.path.basename(f)[:-5]
        if args.only and case["name"] not in args.only:
            continue
        for key in ("policy", "server", "rows"):
            if key not in case:
                die("%s: $.%s is required" % (f, key))
        # The policy JSON, verbatim, in one file all three ways read.
        case["_policy_path"] = os.path.join(args.work, case["name"] + ".policy.json")
        with open(case["_policy_path"], "w") as fh:
            json.dump(case["policy"], fh, indent=2)
            fh.write("\n")
        cases.append(case)

    server = FlakyServer(args.target)
    table = []
    failed = 0
    t_start = time.monotonic()
    try:
        for case in cases:
            got = {"libretry": run_real(case, server, args.client, "libretry", args.work),
                   "grpc": run_real(case, server, args.client, "grpc", args.work),
                   "retrysim": run_sim(case, args.retrysim, args.work),
                   PROFILE: run_sim(case, args.retrysim, args.work, PROFILE)}
            for row in case["rows"]:
                vals = {w: got[w].get(row["metric"], float("nan")) for w in got}
                ok, verdict = judge(row, vals)
                pok, pverdict = judge_profile(row, vals, PROFILE)
                failed += (0 if ok else 1) + (0 if pok else 1)
                table.append((case["name"], row["metric"], vals, tol_text(row.get("tol", "exact")),
                              verdict, pverdict))
    finally:
        server.close()

    head = ("case", "metric", "libretry", "grpc", "retrysim", PROFILE, "tolerance",
            "verdict (retrysim defaults)", "verdict (%s)" % PROFILE)
    lines = [(c, m, fmt(v["libretry"]), fmt(v["grpc"]), fmt(v["retrysim"]), fmt(v[PROFILE]), t, vd, pvd)
             for c, m, v, t, vd, pvd in table]
    widths = [max(len(str(x[i])) for x in [head] + lines) for i in range(len(head))]
    def out(x):
        print("| " + " | ".join(str(x[i]).ljust(widths[i]) for i in range(len(head))) + " |")
    out(head)
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for x in lines:
        out(x)
    print("sim-to-real: %d rows, %d verdicts outside their tolerance (%.0f s; gRPC %s, %d cases)" %
          (len(table), failed, time.monotonic() - t_start, grpc.__version__, len(cases)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
