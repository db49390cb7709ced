#!/usr/bin/env python3
"""Runner overhead: the same measurement through `zmqperf run` and through the compatible
commands (local_lat/remote_lat, local_thr/remote_thr), interleaved, repeated, as ratios.

  latency   reqrep over tcp and ipc, 64 B: runner's mean one-way latency / remote_lat's
            average latency (both round trip / 2, both instrumented)
  throughput pushpull over tcp and ipc, 64 B: runner's delivered msg/s / local_thr's msg/s

Each repetition runs both ways back to back (alternating which goes first); the figure is
the median of the per-repetition ratios. Also prints the peak RSS of each role process the
runner reported, and the wall time of a default `zmqperf run` if --suite is given.

usage: scripts/bench-runner.py [--reps N] [--suite]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "zmqperf")
TIMEOUT = 120



def results(text):
    """The results of zmqperf's JSON: inside the envelope (version 3 on), or the whole
    object (older builds, compared side by side)."""
    v = json.loads(text)
    return v["results"] if isinstance(v, dict) and "kind" in v else v

def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, **kw)


def compat(kind, transport, size, count):
    ep = "tcp://127.0.0.1:*" if transport == "tcp" else "ipc://%s/zp-bench-%d.sock" % (
        tempfile.gettempdir(), os.getpid())
    local, remote = ("local_lat", "remote_lat") if kind == "lat" else ("local_thr", "remote_thr")
    lp = subprocess.Popen([BIN, local, ep, str(size), str(count), "--json"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    bound = ep
    if transport == "tcp":
        line = lp.stderr.readline()
        bound = line.split("listening on ")[1].strip()
    else:
        time.sleep(0.1)
    try:
        r = sh([BIN, remote, bound, str(size), str(count), "--json"])
        out, _ = lp.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        lp.kill()
        raise
    if kind == "lat":
        return results(r.stdout)["average_latency_us"]
    d = results(out)["delivered"]
    return d["messages"] * 1e9 / (d["end_ns"] - d["start_ns"])


def runner(kind, transport, size, count, db):
    pattern = "reqrep" if kind == "lat" else "pushpull"
    r = sh([BIN, "run", "--patterns", pattern, "--transports", transport, "--sizes", str(size),
            "--count", str(count), "--warmup", "0", "--repetitions", "1", "--no-floor",
            "--format", "json", "--db", db])
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    case = results(r.stdout)["cases"][0]
    rep = case["repetitions"][0]
    value = (rep["latency"]["mean_ns"] / 1000.0 if kind == "lat"
             else rep["delivered"]["messages"] * 1e9 / (rep["delivered"]["end_ns"] - rep["delivered"]["start_ns"]))
    return value, rep["roles"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--suite", action="store_true", help="also time `zmqperf run` (default suite)")
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    db = os.path.join(tempfile.gettempdir(), "zmqperf-bench-runner-%d.db" % os.getpid())
    cells = [("lat", "tcp", 64, 5000), ("lat", "ipc", 64, 5000),
             ("thr", "tcp", 64, 500000), ("thr", "ipc", 64, 500000)]
    ratios = {c: [] for c in cells}
    rss = {}
    for rep in range(args.reps):
        for cell in cells:
            kind, transport, size, count = cell
            if rep % 2 == 0:
                a = compat(*cell)
                b, roles = runner(kind, transport, size, count, db)
            else:
                b, roles = runner(kind, transport, size, count, db)
                a = compat(*cell)
            ratios[cell].append(b / a)
            for role in roles:
                key = (kind, transport, role["role"])
                rss[key] = max(rss.get(key, 0), role["peak_rss_kib"])
            print("rep %d %s %-3s: compat %.3f runner %.3f ratio %.3f" % (
                rep + 1, kind, transport, a, b, b / a), file=sys.stderr, flush=True)
    print("runner / compat, median of %d paired repetitions (latency: lower is better; "
          "throughput: higher is better)" % args.reps)
    for cell in cells:
        rs = sorted(ratios[cell])
        print("  %-10s %-4s %6d B  ratio %.3f  (min %.3f, max %.3f)" % (
            "latency" if cell[0] == "lat" else "throughput", cell[1], cell[2],
            statistics.median(rs), rs[0], rs[-1]))
    print("peak RSS per role process (KiB):")
    for (kind, transport, role), kib in sorted(rss.items()):
        print("  %-10s %-4s %-9s %6d" % ("latency" if kind == "lat" else "throughput",
                                          transport, role, kib))
    if args.suite:
        for extra in ([], ["--full"]):
            t = time.monotonic()
            r = subprocess.run([BIN, "run", "--format", "json", "--db", db] + extra,
                               capture_output=True, text=True, timeout=3600)
            n = len(results(r.stdout)["cases"]) if r.returncode == 0 else 0
            print("wall time of `zmqperf run %s`: %.1f s (%d cases, exit %d)" % (
                " ".join(extra), time.monotonic() - t, n, r.returncode))
    try:
        os.remove(db)
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
