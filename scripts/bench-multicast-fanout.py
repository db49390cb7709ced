#!/usr/bin/env python3
"""Fan-out over tcp beside multicast (epgm, and norm) and udp RADIO/DISH, across two hosts.

The publisher runs on host a and a swarm of SUBS subscribers on host b of the multi-host
testbed (scripts/testbed.sh: network namespaces on a bridge that floods multicast).
- tcp: an XPUB that waits for its subscribers and blocks at its high-water mark
  (ZMQ_XPUB_NODROP), SUB sockets connecting to it;
- epgm, norm: the same XPUB at ZMQ_RATE 1 Gbit/s, which sends each message once whatever
  the subscribers (no subscription travels back over multicast: it pauses for the joins);
- udp: a RADIO with ZMQ_XPUB_NODROP sending to a udp multicast group, and DISH sockets that
  each bind the group (the kernel hands each a copy of every datagram).
tcp and the multicast transports run on Debian's libzmq (`--libzmq system`, the one with
OpenPGM and NORM), udp on the bundled one (the draft API's RADIO and DISH; Debian's lacks
it): both are libzmq 4.3.


Multicast has no flow control back to the sender: at full speed its subscribers lose what
their buffers cannot hold (a 10-subscriber run at full speed lost 80% over epgm). So the
publisher is paced where every subscriber keeps up: RATE = min(--rate, --deliveries / SUBS)
msg/s, the same for every transport at one SUBS (its pacing costs them alike).

Each figure is a cost per message measured as a difference, so that start, joins and
report cancel: every variant runs for SECS1 and SECS2 seconds of messages, and
  publisher CPU per message = (cpu(COUNT2) - cpu(COUNT1)) / (COUNT2 - COUNT1),
  subscribers' CPU per delivery = the same over (COUNT2 - COUNT1) x SUBS.
CPU is the node's (user + system, from the runner's record). Variants are interleaved
round by round; each figure is the median over rounds with its range, and the ratio
multicast / tcp the median of the rounds' ratios with a 95% bootstrap interval.
Delivery is checked in every run: lost messages are counted and printed.

usage: scripts/bench-multicast-fanout.py [--zmqperf target/release/zmqperf]
       [--subs 10,100,1000] [--transports tcp,epgm,udp] [--seconds 1,4] [--rate 1000]
       [--deliveries 50000] [--size 64] [--rounds 3]
"""
import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


GROUP = "udp://239.192.9.9:5620"


def topology(transport, subs, size, count, rate):
    sub = 'type = "SUB", connect = ["pub"], subscribe = [""]'
    if transport == "tcp":
        pub = 'type = "XPUB", bind = ["auto"], xpub_nodrop = true'
    elif transport == "udp":
        pub = f'type = "RADIO", connect = ["{GROUP}"], xpub_nodrop = true'
        sub = f'type = "DISH", bind = ["{GROUP}"]'
    else:
        pub = 'type = "XPUB", bind = ["auto"], xpub_nodrop = true, multicast_rate = 1000000'
    return f"""name = "mcast-fanout"
[params]
transport = "{transport}"
size = {size}
count = {count}
{rate}
warmup = 0
repetitions = 1
[[node]]
name = "pub"
role = "source"
host = "a"
socket = {{ {pub} }}
[[node]]
name = "subs"
role = "swarm"
host = "b"
subs = {subs}
socket = {{ {sub} }}
"""


def run_case(args, tb, ns_a, transport, subs, count, rate):
    path = os.path.join(tb, f"t-{transport}-{subs}-{count}.toml")
    with open(path, "w") as f:
        f.write(topology(transport, subs, args.size, count, f"rate = {rate}"))
    lib = [] if transport == "udp" else ["--libzmq", "system"]
    cmd = ["ip", "netns", "exec", ns_a, args.zmqperf, *lib, "run", path,
           "--hosts", os.path.join(tb, "hosts-netns.toml"), "--no-history", "--format", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"{transport} x{subs} count {count} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    case = json.loads(out.stdout)["results"]["cases"][0]
    if case.get("error"):
        sys.exit(f"{transport} x{subs}: {case['error']}")
    cpu = {n["name"]: n["cpu_ms"] for n in case["nodes"]}
    lost = case["summary"]["lost"]
    lat = [e["latency"]["mean_ns"] for e in case["edges"] if e.get("latency")]
    return cpu["pub"], cpu["subs"], lost, (lat[0] / 1000 if lat else None)


def boot(xs, n=2000):
    if len(xs) < 2:
        return (xs[0], xs[0])
    meds = sorted(statistics.median(random.choices(xs, k=len(xs))) for _ in range(n))
    return meds[int(0.025 * n)], meds[int(0.975 * n) - 1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zmqperf", default="target/release/zmqperf")
    ap.add_argument("--subs", default="10,100,1000")
    ap.add_argument("--transports", default="tcp,epgm,udp")
    ap.add_argument("--seconds", default="1,4")
    ap.add_argument("--rate", type=int, default=1000, help="the most msg/s")
    ap.add_argument("--deliveries", type=int, default=50000, help="the most deliveries/s")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    args.zmqperf = os.path.abspath(args.zmqperf)
    subs_list = [int(s) for s in args.subs.split(",")]
    transports = args.transports.split(",")
    s1, s2 = (float(x) for x in args.seconds.split(","))
    rate_of = {n: max(1, min(args.rate, args.deliveries // n)) for n in subs_list}
    # A swarm of 1,000 multicast subscribers holds several descriptors each.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 1 << 20), hard))
    tb = tempfile.mkdtemp(prefix="zp-mcast-")
    up = subprocess.run([os.path.join(HERE, "testbed.sh"), "up", tb, "--bin", args.zmqperf,
                         "--ttl", "3600"], capture_output=True, text=True, timeout=300)
    if up.returncode != 0:
        sys.exit(f"testbed up failed:\n{up.stderr}")
    env = dict(l.split("=", 1) for l in open(os.path.join(tb, "env")).read().split() if "=" in l)
    ns_a = env["ZP_NS_A"]
    per = {}  # (transport, subs) -> lists
    try:
        for r in range(args.rounds):
            for subs in subs_list:
                order = transports[:]
                random.shuffle(order)
                rate = rate_of[subs]
                c1, c2 = int(rate * s1), int(rate * s2)
                for t in order:
                    a = run_case(args, tb, ns_a, t, subs, c1, rate)
                    b = run_case(args, tb, ns_a, t, subs, c2, rate)
                    d = per.setdefault((t, subs), {"pub": [], "sub": [], "lost": 0, "lat": []})
                    d["pub"].append((b[0] - a[0]) * 1000 / (c2 - c1))
                    d["sub"].append((b[1] - a[1]) * 1000 / ((c2 - c1) * subs))
                    d["lost"] += a[2] + b[2]
                    if b[3] is not None:
                        d["lat"].append(b[3])
                    print(f"round {r + 1}: {t:5} x{subs:<5} publisher {d['pub'][-1]:8.2f} us/msg, "
                          f"subscribers {d['sub'][-1]:6.2f} us/delivery, lost {a[2] + b[2]}",
                          file=sys.stderr, flush=True)
    finally:
        subprocess.run([os.path.join(HERE, "testbed.sh"), "down", tb], capture_output=True, timeout=120)
    print(f"\nfan-out a -> b, {args.size} B, {s1:g} s and {s2:g} s of messages at "
          + ", ".join(f"{rate_of[n]} msg/s for {n}" for n in subs_list)
          + f", {args.rounds} rounds; CPU per message as the difference of the two; median [range]")
    print(f"{'transport':9} {'subs':>5} {'publisher us/msg':>22} {'subscribers us/delivery':>26} "
          f"{'mean latency us':>16} {'lost':>6}")
    for t in transports:
        for subs in subs_list:
            d = per[(t, subs)]
            p, s = d["pub"], d["sub"]
            lat = f"{statistics.median(d['lat']):.0f}" if d["lat"] else "-"
            print(f"{t:9} {subs:>5} {statistics.median(p):9.2f} [{min(p):.2f}-{max(p):.2f}]"
                  f" {statistics.median(s):10.3f} [{min(s):.3f}-{max(s):.3f}] {lat:>16} {d['lost']:>6}")
    base = transports[0]
    for t in transports[1:]:
        print(f"\npublisher CPU per message, {t} / {base} (median of the rounds' ratios, 95% bootstrap):")
        for subs in subs_list:
            rs = [x / y for x, y in zip(per[(t, subs)]["pub"], per[(base, subs)]["pub"]) if y > 0]
            lo, hi = boot(rs)
            print(f"  {subs:>5} subscribers: {statistics.median(rs):.3f} [{lo:.3f} .. {hi:.3f}]")
    for t in transports:
        first, last = per[(t, subs_list[0])]["pub"], per[(t, subs_list[-1])]["pub"]
        print(f"{t}: publisher CPU per message at {subs_list[-1]} subscribers / at {subs_list[0]}: "
              f"{statistics.median(last) / statistics.median(first):.2f}")


if __name__ == "__main__":
    main()
