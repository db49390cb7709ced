#!/usr/bin/env python3
"""`run --find max-rate` against a brute-force sweep, side by side.

For each case (PUSH/PULL and lossy PUB/SUB over tcp, 64 B by default) this runs, in turn:
  - the search: `zmqperf run --find max-rate` (doubling, bisection to 5%, each boundary
    value run 3 times);
  - the sweep: the same step (1 s of messages at one rate, one repetition) at rates 5% apart
    from the same start, each its own `zmqperf run`, judged by the same service level,
    until a rate breaks it; a rate that broke runs twice more, as the search's boundary
    does, and the sweep ends at the first rate that broke in 2 of its 3 runs (one that held
    in 2 of 3 counts as held: on a shared machine a single step breaks by chance). The
    highest rate held before the end is the sweep's limit.
It prints both limits, their ratio, the time each took and the ratio of the times, and
whether the sweep's limit lies inside the uncertainty the search stated.
With --rounds N the pair runs N times, alternating which goes first. With --sweeps 2 the
sweep runs twice in each round (search between them), and the two sweeps' limits are
printed with their ratio: how far the reference itself moves from one minute to the next.

    python3 scripts/bench-limit.py                 # pushpull and pubsub-lossy, 1 round
    python3 scripts/bench-limit.py --patterns pushpull --rounds 2
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("ZMQPERF", os.path.join(HERE, "..", "target", "release", "zmqperf"))
STEP_S = 1.0


def results(text):
    v = json.loads(text)
    return v["results"] if isinstance(v, dict) and "kind" in v else v


def search(pattern, transport, size, start, slo):
    t = time.monotonic()
    r = subprocess.run([BIN, "run", "--patterns", pattern, "--transports", transport,
                        "--sizes", str(size), "--rate", str(start), "--find", "max-rate",
                        "--slo", slo, "--no-history"],
                       capture_output=True, text=True, timeout=1800)
    took = time.monotonic() - t
    if r.returncode != 0:
        raise RuntimeError("search failed: %s" % r.stderr[-800:])
    m = re.search(r"max rate ([\d,]+) msg/s", r.stdout)
    if not m:
        raise RuntimeError("no limit found:\n" + r.stdout)
    steps = len([l for l in r.stdout.splitlines() if " step " in l])
    # The search's stated uncertainty: "between A msg/s and B msg/s", or "from A msg/s up".
    num = lambda t: float(t.replace(",", ""))
    b = re.search(r"uncertainty: between ([\d,]+) msg/s and ([\d,]+) msg/s", r.stdout)
    u = re.search(r"uncertainty: from ([\d,]+) msg/s up", r.stdout)
    band = (num(b.group(1)), num(b.group(2))) if b else ((num(u.group(1)), float("inf")) if u else None)
    return float(m.group(1).replace(",", "")), took, steps, band


def holds(case, rate, max_lost, min_delivered):
    if case.get("error"):
        return False
    s = case["summary"]
    delivered = (s.get("msgs_per_sec") or {}).get("median", 0.0)
    return s["lost"] <= max_lost and delivered >= rate * min_delivered


def sweep(pattern, transport, size, start, max_lost, min_delivered, max_steps):
    t = time.monotonic()
    rate, held, steps = start, None, 0

    def step(rate):
        count = max(500, int(rate * STEP_S))
        r = subprocess.run([BIN, "run", "--patterns", pattern, "--transports", transport,
                            "--sizes", str(size), "--rate", "%.0f" % rate, "--count", str(count),
                            "--repetitions", "1", "--no-history", "--format", "json"],
                           capture_output=True, text=True, timeout=600)
        cases = results(r.stdout)["cases"] if r.stdout.strip() else []
        return bool(cases) and holds(cases[0], rate, max_lost, min_delivered)

    while steps < max_steps:
        steps += 1
        if not step(rate):
            # Broken once: twice more; broken in 2 of 3 ends the sweep.
            again = [step(rate), step(rate)]
            steps += 2
            if again.count(False) >= 1:
                break
        held = rate
        rate *= 1.05
    return held, time.monotonic() - t, steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--patterns", default="pushpull,pubsub-lossy")
    ap.add_argument("--transport", default="tcp")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--start", type=float, default=1000.0)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--max-steps", type=int, default=400)
    ap.add_argument("--sweeps", type=int, default=1, choices=[1, 2])
    args = ap.parse_args()
    if not os.path.exists(BIN):
        sys.exit("no %s: build it first (cargo build --release) or set ZMQPERF" % BIN)
    slo = "loss=0,delivered>=95%"
    print("service level: %s; steps of %.0f s; sweep at 5%% steps from %.0f msg/s" % (
        slo, STEP_S, args.start))
    print("%-14s %5s %14s %14s %7s %9s %9s %7s" % (
        "pattern", "round", "search msg/s", "sweep msg/s", "ratio", "search s", "sweep s",
        "time"))
    for pattern in args.patterns.split(","):
        for k in range(args.rounds):
            order = ["search", "sweep"] if k % 2 == 0 else ["sweep", "search"]
            if args.sweeps == 2:
                order = ["sweep", "search", "sweep2"]
            got = {}
            for what in order:
                if what == "search":
                    got[what] = search(pattern, args.transport, args.size, args.start, slo)
                else:
                    got[what] = sweep(pattern, args.transport, args.size, args.start, 0, 0.95,
                                      args.max_steps)
            (s_rate, s_time, s_steps, band), (w_rate, w_time, w_steps) = got["search"], got["sweep"]
            ratio = s_rate / w_rate if w_rate else float("nan")
            inside = band is not None and w_rate is not None and band[0] <= w_rate <= band[1]
            print("%-14s %5d %14s %14s %7.3f %9.1f %9.1f %7.3f   (%d vs %d steps; the sweep's "
                  "limit is %s the search's band %s)" % (
                      pattern, k + 1, "{:,.0f}".format(s_rate),
                      "{:,.0f}".format(w_rate) if w_rate else "none", ratio, s_time, w_time,
                      s_time / w_time, s_steps, w_steps, "inside" if inside else "OUTSIDE",
                      "%s..%s" % ("{:,.0f}".format(band[0]), "{:,.0f}".format(band[1]))
                      if band else "(none)"))
            if "sweep2" in got:
                a, b = got["sweep"][0], got["sweep2"][0]
                r2 = b / a if a and b else float("nan")
                ratio2 = s_rate / b if b else float("nan")
                print("%-14s %5d %14s %14s %7.3f   (the second sweep: sweep 2 / sweep 1 = %.3f; "
                      "the two sweeps differ by %.1f%%)" % (
                          pattern, k + 1, "", "{:,.0f}".format(b) if b else "none", ratio2, r2,
                          100.0 * (max(a, b) / min(a, b) - 1.0) if a and b else float("nan")))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
