#!/usr/bin/env python3
"""zmqperf's fan-out beside the least a fan-out can do in C on the same libzmq.

scripts/c-fanout.c is the reference: a C subscriber process (SUB sockets read in one poll
loop) and a C publisher (an XPUB that waits for its subscribers), both speaking zmqperf's
measurement header. Each side of zmqperf's fan-out is measured against its C counterpart
with the other side held the same:

- subscribers: `zmqperf sub-cluster -c 1` against `c-fanout sub`, both fed by `zmqperf pub`;
- publisher: `zmqperf pub` against `c-fanout pub`, both feeding `c-fanout sub`.

The figure is CPU per delivery (user + system of the measured process and its children,
from wait4), and for the subscribers the mean one-way latency. At full speed the publisher
outruns the subscribers and the queues fill to their high-water marks, so that latency is
mostly the queues' (it moves by tens of percent from run to run); --paced N adds, each
round, the subscribers' mean latency at one message per millisecond (N per subscriber),
where they keep up and the latency is the path's. Fixed costs (start, set-up,
connections, report) cancel: each round runs every variant with COUNT1 and COUNT2 messages
per subscriber, and a delivery costs (cpu(COUNT2) - cpu(COUNT1)) / ((COUNT2 - COUNT1) x
SUBS). The variants are interleaved round by round; the ratio zmqperf / C is given as the
median over rounds with a 95% bootstrap interval. With --callgrind the subscribers are
also counted in instructions per delivery under valgrind (every process of the side),
--callgrind-repeat times, with the median ratio.

usage: scripts/bench-fanout-c.py [--zmqperf target/release/zmqperf] [--subs 100]
       [--counts 500,5000] [--size 64] [--rounds 5 (0: none)] [--paced 1000 (0: none)] [--callgrind]
       [--callgrind-repeat 3]
"""
import argparse
import glob
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT_S = 600


def build(zmqperf):
    """Compiles c-fanout against the libzmq.a (and libsodium.a) the zmqperf build linked."""
    target = os.path.dirname(os.path.dirname(os.path.abspath(zmqperf)))
    profile = os.path.basename(os.path.dirname(os.path.abspath(zmqperf)))
    envs = sorted(glob.glob(f"{target}/{profile}/build/zmqperf-*/out/libzmq-build.env"),
                  key=os.path.getmtime)
    if not envs:
        sys.exit(f"bench-fanout-c: no libzmq-build.env under {target}/{profile}/build: build zmqperf first")
    env = {}
    for line in open(envs[-1]):
        k, _, v = line.strip().partition("=")
        env[k] = v.strip("'\"")
    out = os.path.join(target, "c-perf", profile, "c-fanout")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    src = os.path.join(ROOT, "scripts", "c-fanout.c")
    subprocess.run(["gcc", "-O2", "-I" + env["LIBZMQ_INCLUDE"], "-o", out, src,
                    env["LIBZMQ_A"], env["SODIUM_A"], "-lstdc++", "-lpthread", "-lm"], check=True)
    return out


def endpoint():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"tcp://127.0.0.1:{port}"


def start(cmd):
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(p, what):
    """Waits for p: its CPU seconds (its own and its children's) and its output."""
    deadline = time.time() + TIMEOUT_S
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.time() > deadline:
            p.kill()
            sys.exit(f"bench-fanout-c: {what} did not finish in {TIMEOUT_S} s")
        time.sleep(0.01)
    p.returncode = os.waitstatus_to_exitcode(status)
    out, err = p.communicate()
    if p.returncode != 0:
        sys.exit(f"bench-fanout-c: {what} failed (exit {p.returncode}):\n{out}{err[-2000:]}")
    return ru.ru_utime + ru.ru_stime, out, err


def zmqperf_pub(zp, ep, subs, count, size):
    return [zp, "pub", "-h", ep, "--subs", str(subs), "-t", "0", "--warmup", "0", "-n", "1", "-p", str(count),
            "--size", str(size), "--json"]


def zmqperf_paced_pub(zp, ep, subs, count, size):
    """One message per millisecond: a rate the subscribers keep up with, so that the
    latency is the path's, not the queues'."""
    return [zp, "pub", "-h", ep, "--subs", str(subs), "-t", "1ms", "--warmup", "0", "-n", "1",
            "-p", str(count), "--size", str(size), "--json"]


def c_pub(c, ep, subs, count, size):
    return [c, "pub", ep, str(subs), str(count), str(size)]


def zmqperf_subs(zp, ep, subs, count):
    return [zp, "sub-cluster", "-c", "1", "-n", str(subs), "-h", ep, "--expect", str(count),
            "--no-history", "--json"]


def c_subs(c, ep, subs, count):
    return [c, "sub", ep, str(subs), str(count)]


def mean_latency_us(out):
    """The subscribers' mean one-way latency from either side's output, us."""
    m = re.search(r"mean_us ([0-9.]+)", out)
    if m:
        return float(m.group(1))
    v = json.loads(out)
    lat = v["results"]["latency"]
    return lat["mean_ns"] / 1e3


def pair(measured, other, measured_binds):
    """Runs the measured side and the other side; the measured side's CPU and output."""
    if measured_binds:
        m = start(measured)
        time.sleep(0.2)
        o = start(other)
    else:
        o = start(other)
        time.sleep(0.2)
        m = start(measured)
    cpu, out, _ = finish(m, " ".join(measured[:2]))
    finish(o, " ".join(other[:2]))
    return cpu, out


def callgrind_pair(measured, other):
    """The measured subscriber side under callgrind, every process of it (the swarm's child
    processes write their counts to their own log file, not to a stderr we read):
    instructions."""
    with tempfile.TemporaryDirectory(prefix="zmqperf-fcg-") as logs:
        o = start(other)
        time.sleep(0.2)
        m = start(["valgrind", "--tool=callgrind", "--trace-children=yes",
                   "--callgrind-out-file=/dev/null", f"--log-file={logs}/cg.%p"] + measured)
        finish(m, "callgrind " + " ".join(measured[:2]))
        finish(o, " ".join(other[:2]))
        total = 0
        for f in os.listdir(logs):
            text = open(os.path.join(logs, f)).read()
            counts = re.findall(r"Collected : (\d+)", text)
            if not counts:
                # A process its runner ended by a signal leaves no count: the figure would
                # leave out the work of that process, so there is none.
                cmd = re.search(r"Command: (.*)", text)
                sys.exit("bench-fanout-c: --callgrind: a process of the measured side ended without "
                         f"its count ({cmd.group(1) if cmd else f}): its runner stopped it before "
                         "valgrind wrote it, so its instructions cannot be counted this way")
            total += sum(int(x) for x in counts)
        return total


def bootstrap(values, rounds=2000):
    if len(values) < 2:
        return (values[0], values[0]) if values else (float("nan"), float("nan"))
    rng = random.Random(7)
    meds = sorted(statistics.median(rng.choice(values) for _ in values) for _ in range(rounds))
    return meds[int(0.025 * rounds)], meds[int(0.975 * rounds) - 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zmqperf", default=os.path.join(ROOT, "target", "release", "zmqperf"))
    ap.add_argument("--subs", type=int, default=100)
    ap.add_argument("--counts", default="500,5000")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--paced", type=int, default=1000, metavar="N")
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--callgrind-repeat", type=int, default=3, metavar="N")
    a = ap.parse_args()
    n1, n2 = (int(x) for x in a.counts.split(","))
    if not (0 < n1 < n2):
        sys.exit("bench-fanout-c: --counts N1,N2 with 0 < N1 < N2")
    zp, c = a.zmqperf, build(a.zmqperf)
    deliveries = (n2 - n1) * a.subs
    print(f"bench-fanout-c: {a.subs} subscribers in one process, {a.size} B, tcp; {n1} and {n2} "
          f"messages per subscriber; {a.rounds} rounds interleaved; zmqperf {zp}", flush=True)
    sub_ratio, pub_ratio, lat_ratio, paced_ratio = [], [], [], []
    for r in range(a.rounds):
        cpu = {}
        lat = {}
        for n in (n1, n2):
            variants = [
                ("subs zmqperf", lambda ep: pair(zmqperf_subs(zp, ep, a.subs, n), zmqperf_pub(zp, ep, a.subs, n, a.size), False)),
                ("subs c", lambda ep: pair(c_subs(c, ep, a.subs, n), zmqperf_pub(zp, ep, a.subs, n, a.size), False)),
                ("pub zmqperf", lambda ep: pair(zmqperf_pub(zp, ep, a.subs, n, a.size), c_subs(c, ep, a.subs, n), True)),
                ("pub c", lambda ep: pair(c_pub(c, ep, a.subs, n, a.size), c_subs(c, ep, a.subs, n), True)),
            ]
            if r % 2:
                variants.reverse()
            for name, run in variants:
                secs, out = run(endpoint())
                cpu[(name, n)] = secs
                if name.startswith("subs") and n == n2:
                    lat[name] = mean_latency_us(out)
        per = {name: (cpu[(name, n2)] - cpu[(name, n1)]) / deliveries * 1e9
               for name in ("subs zmqperf", "subs c", "pub zmqperf", "pub c")}
        sub_ratio.append(per["subs zmqperf"] / per["subs c"])
        pub_ratio.append(per["pub zmqperf"] / per["pub c"])
        lat_ratio.append(lat["subs zmqperf"] / lat["subs c"])
        paced = {}
        if a.paced > 0:
            sides = [("zmqperf", zmqperf_subs, zp), ("c", c_subs, c)]
            for name, cmd, binary in sides if r % 2 == 0 else reversed(sides):
                ep = endpoint()
                _, out = pair(cmd(binary, ep, a.subs, a.paced),
                              zmqperf_paced_pub(zp, ep, a.subs, a.paced, a.size), False)
                paced[name] = mean_latency_us(out)
            paced_ratio.append(paced["zmqperf"] / paced["c"])
        print(f"  round {r + 1}: CPU per delivery, ns: subscribers zmqperf {per['subs zmqperf']:.0f} "
              f"C {per['subs c']:.0f} ({sub_ratio[-1]:.3f}); publisher zmqperf {per['pub zmqperf']:.0f} "
              f"C {per['pub c']:.0f} ({pub_ratio[-1]:.3f}); mean latency us zmqperf "
              f"{lat['subs zmqperf']:.0f} C {lat['subs c']:.0f}"
              + (f"; paced zmqperf {paced['zmqperf']:.1f} C {paced['c']:.1f}" if paced else ""),
              flush=True)
    if a.rounds > 0:
        print("\nzmqperf / C, median over rounds [95% bootstrap interval]:")
    for what, v in (("subscribers: CPU per delivery", sub_ratio),
                    ("publisher: CPU per delivery", pub_ratio),
                    ("subscribers: mean latency", lat_ratio),
                    ("subscribers: latency, paced", paced_ratio)):
        if v:
            lo, hi = bootstrap(v)
            print(f"  {what:<32} {statistics.median(v):.3f} [{lo:.3f} .. {hi:.3f}]")
    if a.callgrind:
        callgrind(a, zp, c, n1, n2, deliveries)


def callgrind(a, zp, c, n1, n2, deliveries):
    """The subscribers' instructions per delivery, zmqperf's and C's, --callgrind-repeat
    times (each a run of N1 and N2 per side, the sides interleaved): every repeat's figures,
    and the median ratio with its range. The count moves by about 1% from run to run on
    both sides (how libzmq's batches fall), so one repeat is not a verdict."""
    print(f"\nsubscribers under callgrind ({a.callgrind_repeat} repeats, each one run of N1 "
          "and N2 per side):", flush=True)
    ratios = []
    for r in range(a.callgrind_repeat):
        ir = {}
        sides = [("zmqperf", zmqperf_subs, zp), ("c", c_subs, c)]
        if r % 2:
            sides.reverse()
        for name, cmd, binary in sides:
            for n in (n1, n2):
                ep = endpoint()
                ir[(name, n)] = callgrind_pair(cmd(binary, ep, a.subs, n),
                                               zmqperf_pub(zp, ep, a.subs, n, a.size))
        per = {name: (ir[(name, n2)] - ir[(name, n1)]) / deliveries for name in ("zmqperf", "c")}
        ratios.append(per["zmqperf"] / per["c"])
        print(f"  repeat {r + 1}: instructions per delivery: zmqperf {per['zmqperf']:.0f} "
              f"C {per['c']:.0f}: zmqperf / C {ratios[-1]:.3f}", flush=True)
    print(f"\nsubscribers under callgrind, instructions per delivery, zmqperf / C: median "
          f"{statistics.median(ratios):.3f} (range {min(ratios):.3f} .. {max(ratios):.3f}, "
          f"{len(ratios)} repeats)")

if __name__ == "__main__":
    main()
