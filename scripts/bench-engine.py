#!/usr/bin/env python3
"""Before / after: two zmqperf binaries measured side by side on the same cases.

Each pair runs the same command with binary A and binary B back to back (alternating which
goes first), and the figure is the median of the per-pair ratios B/A with a bootstrap 95%
interval. Ratios near 1.00 whose interval holds 1.00 are "within noise".

  suite cases   `zmqperf run --patterns P --transports T --sizes 64 --repetitions 1`:
                latency (mean us) of reqrep, msg/s of pushpull, pubsub and fanin
  compat        local_thr/remote_thr and local_lat/remote_lat over tcp, 64 B
  fanout        `zmqperf fanout` (C processes x S subscribers, 1 message per tick): mean
                delivery latency, the subscriber processes' CPU per delivery (user + system
                over their whole run / deliveries), and the delivered count, which must be
                exact

usage: scripts/bench-engine.py --before OLD_BIN [--after NEW_BIN] [--pairs N]
                               [--fanout 8x1000] [--only suite,compat,fanout]
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 300

SUITE = [
    ("reqrep", "inproc", "latency", 2000),
    ("reqrep", "ipc", "latency", 2000),
    ("reqrep", "tcp", "latency", 2000),
    ("pushpull", "inproc", "msgs", 200000),
    ("pushpull", "ipc", "msgs", 200000),
    ("pushpull", "tcp", "msgs", 200000),
    ("pubsub", "tcp", "msgs", 200000),
    ("fanin", "ipc", "msgs", 100000),
]


# Each binary records into a history of its own (an older build refuses a newer layout):
# nothing here is meant to be recorded, but no run may touch the user's history.
os.environ["ZMQPERF_DB"] = os.path.join(tempfile.mkdtemp(prefix="bench-engine-"), "history.db")



def results(text):
    """The results of zmqperf's JSON: inside the envelope (version 3 on), or the whole
    object (older builds, compared side by side)."""
    v = json.loads(text)
    return v["results"] if isinstance(v, dict) and "kind" in v else v

def sh(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)


def suite_case(binary, pattern, transport, what, count):
    r = sh([binary, "run", "--patterns", pattern, "--transports", transport, "--sizes", "64",
            "--count", str(count), "--repetitions", "1", "--no-floor", "--no-history",
            "--format", "json"])
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (binary, r.stderr[-500:]))
    case = results(r.stdout)["cases"][0]
    if case.get("error"):
        raise RuntimeError("%s: %s" % (binary, case["error"]))
    s = case["summary"]
    return s["latency_us"]["median"] if what == "latency" else s["msgs_per_sec"]["median"]


def compat_pair(binary, kind, count):
    ep = "tcp://127.0.0.1:*"
    local, remote = ("local_lat", "remote_lat") if kind == "lat" else ("local_thr", "remote_thr")
    lp = subprocess.Popen([binary, local, ep, "64", str(count), "--json"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    bound = None
    for line in lp.stderr:
        if "listening on" in line:
            bound = line.strip().split("listening on ")[1]
            break
    if bound is None:
        lp.kill()
        raise RuntimeError("no endpoint from %s" % local)
    rp = subprocess.run([binary, remote, bound, "64", str(count), "--json"],
                        capture_output=True, text=True, timeout=TIMEOUT)
    out, _ = lp.communicate(timeout=TIMEOUT)
    side = results(rp.stdout if kind == "lat" else out)
    return side["average_latency_us"] if kind == "lat" else side["mean_throughput_msgs"]


def fanout(binary, procs, subs):
    r = sh([binary, "fanout", "-c", str(procs), "-s", str(subs), "-t", "500", "-n", "1",
            "-p", "6", "--no-history", "--json"])
    if r.returncode != 0:
        raise RuntimeError("%s fanout: %s" % (binary, r.stderr[-500:]))
    v = results(r.stdout)
    return v


def bootstrap(ratios, n=2000):
    if len(ratios) < 2:
        return (ratios[0], ratios[0]) if ratios else (float("nan"), float("nan"))
    meds = sorted(statistics.median(random.choices(ratios, k=len(ratios))) for _ in range(n))
    return meds[int(0.025 * n)], meds[int(0.975 * n)]


def pairs(label, fa, fb, n, higher_better):
    ratios, a_vals, b_vals = [], [], []
    for i in range(n):
        if i % 2 == 0:
            a, b = fa(), fb()
        else:
            b, a = fb(), fa()
        a_vals.append(a)
        b_vals.append(b)
        ratios.append(b / a)
        sys.stderr.write(".")
        sys.stderr.flush()
    med = statistics.median(ratios)
    lo, hi = bootstrap(ratios)
    noise = lo <= 1.0 <= hi
    better = (med >= 1.0) == higher_better
    verdict = "within noise" if noise else ("better" if better else "WORSE")
    return (label, statistics.median(a_vals), statistics.median(b_vals), med, lo, hi, verdict)


def find(v, *keys):
    for k in keys:
        if isinstance(v, dict) and k in v:
            v = v[k]
        else:
            return None
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="the binary before the change")
    ap.add_argument("--after", default=os.path.join(ROOT, "target", "release", "zmqperf"))
    ap.add_argument("--pairs", type=int, default=6)
    ap.add_argument("--fanout", default="8x1000", help="PROCSxSUBS for the fan-out case")
    ap.add_argument("--only", default="suite,compat,fanout")
    a = ap.parse_args()
    only = set(a.only.split(","))
    rows = []
    if "suite" in only:
        for pattern, transport, what, count in SUITE:
            label = "run %s %s 64 B %s" % (pattern, transport, "latency us" if what == "latency" else "msg/s")
            rows.append(pairs(label,
                              lambda p=pattern, t=transport, w=what, c=count: suite_case(a.before, p, t, w, c),
                              lambda p=pattern, t=transport, w=what, c=count: suite_case(a.after, p, t, w, c),
                              a.pairs, what != "latency"))
    if "compat" in only:
        rows.append(pairs("compat local/remote_lat tcp 64 B us",
                          lambda: compat_pair(a.before, "lat", 20000),
                          lambda: compat_pair(a.after, "lat", 20000), a.pairs, False))
        rows.append(pairs("compat local/remote_thr tcp 64 B msg/s",
                          lambda: compat_pair(a.before, "thr", 1000000),
                          lambda: compat_pair(a.after, "thr", 1000000), a.pairs, True))
    if "fanout" in only:
        procs, subs = (int(x) for x in a.fanout.split("x"))
        exact = []
        cpu = {a.before: [], a.after: []}

        def fan(binary):
            v = fanout(binary, procs, subs)
            got = find(v, "delivery", "received")
            want = find(v, "delivery", "expected")
            exact.append((binary, got, want))
            ms = sum(p["usage"]["cpu_user_ms"] + p["usage"]["cpu_sys_ms"] for p in v["process_list"])
            cpu[binary].append(ms * 1000.0 / max(1, got))
            return find(v, "latency", "mean_ns") / 1000.0

        rows.append(pairs("fanout %dx%d mean latency us" % (procs, subs),
                          lambda: fan(a.before), lambda: fan(a.after), max(2, a.pairs // 2), False))
        # The CPU figures of the same runs, paired in the order they ran.
        ca, cb = cpu[a.before], cpu[a.after]
        if ca and len(ca) == len(cb):
            ratios = [y / x for x, y in zip(ca, cb)]
            lo, hi = bootstrap(ratios)
            med = statistics.median(ratios)
            rows.append(("fanout %dx%d sub CPU us/delivery" % (procs, subs), statistics.median(ca),
                         statistics.median(cb), med, lo, hi,
                         "within noise" if lo <= 1.0 <= hi else ("better" if med < 1.0 else "WORSE")))
        bad = [e for e in exact if e[1] != e[2]]
        rows.append(("fanout delivered == expected", len(exact) - len(bad), len(exact), 1.0, 1.0, 1.0,
                     "exact" if not bad else "SHORT %s" % bad[:2]))
    sys.stderr.write("\n")
    print("%-42s %14s %14s %7s %17s  %s" % ("case", "before", "after", "ratio", "95% CI", "verdict"))
    print("-" * 110)
    for label, av, bv, med, lo, hi, verdict in rows:
        print("%-42s %14.2f %14.2f %7.3f   [%5.3f-%5.3f]  %s" % (label, av, bv, med, lo, hi, verdict))


if __name__ == "__main__":
    main()
