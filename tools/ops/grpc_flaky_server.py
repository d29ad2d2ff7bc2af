#!/usr/bin/python3
"""A scripted flaky gRPC server on loopback, for tools/ops/sim-to-real.py.

Generic handlers, raw bytes, no generated code: every method except the control ones below is
served by one handler. The request payload is the logical call's id (the same bytes on every
attempt, whoever retries), so the server counts attempts per logical call and records when
each arrived.

Per attempt it fails with a chosen status, attaches grpc-retry-pushback-ms, sleeps, or
succeeds, following the loaded case:

  {"script": [{"status": "UNAVAILABLE", "pushback": "100", "delay_ms": 0, "headers": true}, ...,
              {"status": "OK"}],
   "random": {"seed": 7, "rate": 0.3, "status": "UNAVAILABLE"},
   "service_ms": 1, "service_spread_ms": 0, "seed": 1,
   "workers": 4, "overflow": "refuse", "refuse_status": "UNAVAILABLE",
   "window": {"start_s": 8, "end_s": 14, "workers": 2}}

- script: attempt k (as this server counts them for the call id) follows entry k, the last
  entry repeating. "pushback" may be a string (sent verbatim) or a list (several values).
  A failure sleeps delay_ms, then ends the call with trailers only (context.abort), or, with
  "headers": true, sends the response headers first (initial metadata with one entry,
  retrysim-headers: 1), then sleeps and ends it with trailers: a failure after headers, which
  commits a gRPC call (A6); "headers": "bare" sends headers with no application metadata. OK sleeps
  delay_ms (a stall, default 0) plus service_ms (+- service_spread_ms, uniform, seeded) and
  returns the payload.
- random: instead of a script, each attempt fails with `status` with probability `rate`
  (a seeded generator; the draws follow arrival order).
- workers: at most that many attempts are handled at once (the window's count during
  [start_s, end_s) after the case was loaded); the others are refused at once with
  refuse_status ("refuse") or wait for a worker ("queue", bounded by the attempt's deadline).

Control methods (raw JSON bytes): /retrysim.Control/Load (a case as above; clears the
records), /retrysim.Control/Dump (returns {"attempts": [[call_id, k, t_ms, status,
previous_attempts_header], ...]}), /retrysim.Control/Quit.

Usage: grpc_flaky_server.py [--port N] [--max-seconds S] [--threads N]
Prints "PORT <n>" on stdout once it listens on 127.0.0.1 (port 0: a free one). It exits after
--max-seconds whatever happens (default 600), so a lost driver never leaves it running.
"""

import argparse
import json
import random
import sys
import threading
import time
from concurrent import futures

import grpc

CONTROL = "/retrysim.Control/"


class Case:
    def __init__(self, spec):
        self.script = spec.get("script") or [{"status": "OK"}]
        rnd = spec.get("random")
        self.random = None
        if rnd is not None:
            self.random = (random.Random(int(rnd.get("seed", 1))), float(rnd["rate"]),
                           rnd.get("status", "UNAVAILABLE"))
        self.service_s = float(spec.get("service_ms", 0)) / 1000.0
        self.spread_s = float(spec.get("service_spread_ms", 0)) / 1000.0
        self.service_rng = random.Random(int(spec.get("seed", 1)))
        self.workers = spec.get("workers")
        self.overflow = spec.get("overflow", "refuse")
        self.refuse_status = spec.get("refuse_status", "UNAVAILABLE")
        self.window = spec.get("window")
        self.t0 = time.monotonic()

    def capacity(self, now):
        if self.workers is None:
            return None
        w = self.window
        if w is not None and w["start_s"] <= now - self.t0 < w["end_s"]:
            return int(w["workers"])
        return int(self.workers)


class Server:
    def __init__(self):
        self.mu = threading.Condition()
        self.case = Case({})
        self.counts = {}
        self.records = []
        self.busy = 0
        self.quit = threading.Event()

    def load(self, spec):
        with self.mu:
            self.case = Case(spec)
            self.counts = {}
            self.records = []
            self.mu.notify_all()

    def dump(self):
        with self.mu:
            return json.dumps({"attempts": self.records}).encode()

    def _plan(self, call_id, now, prev):
        """Counts the attempt and returns (k, entry); under self.mu."""
        k = self.counts.get(call_id, 0) + 1
        self.counts[call_id] = k
        case = self.case
        if case.random is not None:
            rng, rate, status = case.random
            entry = {"status": status} if rng.random() < rate else {"status": "OK"}
        else:
            entry = case.script[min(k, len(case.script)) - 1]
        rec = [call_id, k, round((now - case.t0) * 1000.0, 3), entry.get("status", "OK"), prev]
        self.records.append(rec)
        return k, entry, rec

    def handle(self, request, context):
        now = time.monotonic()
        call_id = request.decode("utf-8", "replace")
        prev = None
        for key, value in context.invocation_metadata():
            if key == "grpc-previous-rpc-attempts":
                prev = value
        with self.mu:
            k, entry, rec = self._plan(call_id, now, prev)
            case = self.case
            cap = case.capacity(now)
            if cap is not None:
                if case.overflow == "queue":
                    # Wait for a worker, never past the attempt's deadline nor 30 s.
                    limit = now + min(30.0, context.time_remaining() or 30.0)
                    while self.busy >= case.capacity(time.monotonic()):
                        left = limit - time.monotonic()
                        if left <= 0:
                            break
                        self.mu.wait(min(left, 0.05))
                if self.busy >= case.capacity(time.monotonic()):
                    rec[3] = case.refuse_status
                    refused = True
                else:
                    self.busy += 1
                    refused = False
            else:
                refused = False
        if refused:
            context.abort(getattr(grpc.StatusCode, case.refuse_status), "no worker")
        try:
            status = entry.get("status", "OK")
            if status == "OK":
                # delay_ms on an OK entry holds the reply first (a stall), then the service time.
                with self.mu:
                    spread = case.service_rng.uniform(-case.spread_s, case.spread_s)
                time.sleep(float(entry.get("delay_ms", 0)) / 1000.0 + case.service_s + spread)
                return request
            hd = entry.get("headers")
            if hd:
                # Headers on their own frame, before the failure's trailers.
                context.send_initial_metadata(() if hd == "bare" else (("retrysim-headers", "1"),))
            time.sleep(float(entry.get("delay_ms", 0)) / 1000.0)
            pb = entry.get("pushback")
            if pb is not None:
                values = pb if isinstance(pb, list) else [pb]
                context.set_trailing_metadata(tuple(("grpc-retry-pushback-ms", str(v)) for v in values))
            # abort sends trailers only: setting a code and returning a value would send a
            # message, which commits the call and prevents any retry.
            context.abort(getattr(grpc.StatusCode, status), "scripted failure")
        finally:
            if cap is not None:
                with self.mu:
                    self.busy -= 1
                    self.mu.notify_all()

    def control(self, method, request):
        name = method[len(CONTROL):]
        if name == "Load":
            self.load(json.loads(request.decode()))
            return b"{}"
        if name == "Dump":
            return self.dump()
        if name == "Quit":
            self.quit.set()
            return b"{}"
        raise ValueError("unknown control method " + method)


class Handler(grpc.GenericRpcHandler):
    def __init__(self, srv):
        self.srv = srv

    def service(self, handler_call_details):
        method = handler_call_details.method
        if method.startswith(CONTROL):
            return grpc.unary_unary_rpc_method_handler(
                lambda req, ctx: self.srv.control(method, req))
        return grpc.unary_unary_rpc_method_handler(self.srv.handle)


def main():
    ap = argparse.ArgumentParser(description="scripted flaky gRPC server (loopback)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--max-seconds", type=float, default=600.0)
    ap.add_argument("--threads", type=int, default=64)
    args = ap.parse_args()
    srv = Server()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=args.threads),
                         handlers=(Handler(srv),))
    port = server.add_insecure_port("127.0.0.1:%d" % args.port)
    if port == 0:
        print("grpc_flaky_server: cannot listen on 127.0.0.1:%d" % args.port, file=sys.stderr)
        return 1
    server.start()
    print("PORT %d" % port, flush=True)
    srv.quit.wait(args.max_seconds)
    server.stop(0.5).wait(2.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
