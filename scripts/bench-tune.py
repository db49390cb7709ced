#!/usr/bin/env python3
"""Does `--tune`'s suggestion reproduce its gain? Side by side, in one run.

1. `zmqperf run --patterns P --find max-rate --tune` once: the gain it measured for the
   setting it suggests (the ratio of the two limits, with its interval), and the tuned
   topology it printed, saved to a file.
2. Then --rounds N rounds, each a search of the untuned pattern and a search of the saved
   topology, in turn (which goes first alternates): the ratio tuned / untuned of each round.
It prints every round's two limits and their ratio, the median ratio with its range, how
many rounds fall inside the gain interval tune stated, and whether every tuned limit lies
above every untuned band (the gain is real even where its size moves with the machine).

    python3 scripts/bench-tune.py                       # pubsub-lossy over tcp, 3 rounds
    python3 scripts/bench-tune.py --rounds 5 --rate 20000
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("ZMQPERF", os.path.join(HERE, "..", "target", "release", "zmqperf"))
num = lambda t: float(t.replace(",", ""))


def search(target, a, tune=False):
    """One --find max-rate of `target` (a pattern name or a topology file)."""
    what = ["--patterns", target] if not target.endswith(".toml") else [target]
    cmd = [BIN, "run", *what, "--transports", a.transport, "--sizes", str(a.size),
           "--rate", str(a.rate), "--find", "max-rate", "--slo", a.slo, "--no-history"]
    if tune:
        cmd.append("--tune")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(cmd), r.stderr[-800:]))
    return r.stdout


def limit(out):
    """The first limit in `out` and its band."""
    m = re.search(r"max rate ([\d,]+) msg/s", out)
    b = re.search(r"uncertainty: between ([\d,]+) msg/s and ([\d,]+) msg/s", out)
    if not m:
        raise RuntimeError("no limit found:\n" + out)
    v = num(m.group(1))
    return v, (num(b.group(1)), num(b.group(2))) if b else (v, v)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pattern", default="pubsub-lossy")
    p.add_argument("--transport", default="tcp")
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--rate", type=int, default=20000)
    p.add_argument("--slo", default="loss=0")
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    if not os.path.exists(BIN):
        sys.exit("no zmqperf at %s: cargo build --release, or set ZMQPERF" % BIN)

    print("tuning %s over %s, %d B (once)..." % (a.pattern, a.transport, a.size), flush=True)
    out = search(a.pattern, a, tune=True)
    best = re.search(r"^  (.+?)\s{2,}([\d,]+) msg/s  x([\d.]+) \[([\d.]+) \.\. ([\d.]+)\]: raises it",
                     out, re.M)
    if not best:
        sys.exit("tune suggested nothing:\n" + out)
    setting, gain, lo, hi = best.group(1).strip(), float(best.group(3)), float(best.group(4)), float(best.group(5))
    print("tune: %s  x%.2f [%.2f .. %.2f]" % (setting, gain, lo, hi))
    text = re.search(r"^# --- tuned topology ---\n(.*?)^# --- end ---$", out, re.M | re.S)
    if not text:
        sys.exit("no tuned topology in the output")
    fd, path = tempfile.mkstemp(suffix=".toml", prefix="zmqperf-tuned-")
    with os.fdopen(fd, "w") as f:
        f.write(text.group(1))

    rows = []
    try:
        for r in range(a.rounds):
            order = ["base", "tuned"] if r % 2 == 0 else ["tuned", "base"]
            got = {}
            for which in order:
                got[which] = limit(search(a.pattern if which == "base" else path, a))
            ratio = got["tuned"][0] / got["base"][0]
            rows.append((got["base"], got["tuned"], ratio))
            print("round %d: untuned %9s [%s .. %s]  tuned %9s [%s .. %s]  ratio %.2f  %s" % (
                r + 1, f"{got['base'][0]:,.0f}", f"{got['base'][1][0]:,.0f}", f"{got['base'][1][1]:,.0f}",
                f"{got['tuned'][0]:,.0f}", f"{got['tuned'][1][0]:,.0f}", f"{got['tuned'][1][1]:,.0f}",
                ratio, "inside tune's interval" if lo <= ratio <= hi else "outside tune's interval"),
                flush=True)
    finally:
        os.unlink(path)
    ratios = [x[2] for x in rows]
    inside = sum(1 for x in ratios if lo <= x <= hi)
    above = min(t[1][0] for _, t, _ in rows) > max(b[1][1] for b, _, _ in rows)
    print("\nratio tuned / untuned: median %.2f, range %.2f .. %.2f over %d rounds; tune said x%.2f [%.2f .. %.2f]" % (
        statistics.median(ratios), min(ratios), max(ratios), len(ratios), gain, lo, hi))
    print("rounds inside tune's interval: %d of %d" % (inside, len(ratios)))
    print("every tuned band above every untuned band: %s" % ("yes" if above else "no"))


if __name__ == "__main__":
    main()
