#!/usr/bin/python3
"""bench/mm1_simpy.py: the M/M/1 of bench/mm1.json in SimPy, written the way SimPy's users
write it: a source process that starts one process per customer, each requesting a Resource
of capacity 1, holding it for an exponential service time and releasing it.

Usage: mm1_simpy.py [CUSTOMERS] [RHO]   (defaults 1,000,000 and 0.9; mean service 1 ms)
Prints CPU time per customer (time.process_time, the run only) and the mean sojourn time
against theory, then a "result key=value" line for bench/bench.sh.
"""
import random
import sys
import time

import simpy


def main():
    customers = int(float(sys.argv[1])) if len(sys.argv) > 1 else 1000000
    rho = float(sys.argv[2]) if len(sys.argv) > 2 else 0.9
    service = 1e-3  # seconds
    interarrival = service / rho
    rng = random.Random(1)
    env = simpy.Environment()
    server = simpy.Resource(env, capacity=1)
    stats = {"n": 0, "sum": 0.0}

    def customer(env, server):
        arrived = env.now
        with server.request() as req:
            yield req
            yield env.timeout(rng.expovariate(1.0 / service))
        stats["n"] += 1
        stats["sum"] += env.now - arrived

    def source(env, server):
        for _ in range(customers):
            yield env.timeout(rng.expovariate(1.0 / interarrival))
            env.process(customer(env, server))

    env.process(source(env, server))
    t0 = time.process_time()
    env.run()
    secs = time.process_time() - t0
    mean_ms = stats["sum"] / stats["n"] * 1e3
    theory_ms = service / (1.0 - rho) * 1e3
    print("SimPy %s M/M/1, rho %.2f, %d customers" % (simpy.__version__, rho, customers))
    print("  cpu               %.3f s" % secs)
    print("  ns per customer   %.1f" % (secs * 1e9 / customers))
    print("  mean sojourn      %.3f ms (theory %.3f ms)" % (mean_ms, theory_ms))
    print("result customers=%d cpu_s=%.6f ns_per_customer=%.3f mean_ms=%.6f theory_ms=%.6f"
          % (customers, secs, secs * 1e9 / customers, mean_ms, theory_ms))
    return 0 if stats["n"] == customers else 3


if __name__ == "__main__":
    sys.exit(main())
