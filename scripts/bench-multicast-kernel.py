#!/usr/bin/env python3
"""The control beside bench-multicast-fanout.py: what a multicast datagram costs its sender
on the testbed when many sockets of another namespace take it, with zmqperf out of the way.

The testbed's hosts are network namespaces of ONE kernel. A sender on host a sends D
datagrams of 64 B at 50/s to a group; on host b, N plain UDP sockets have joined that group
(they never read: the kernel still hands each one its copy), or N have joined another group
(idle: the same sockets, nothing to deliver), or none. The figure is the sender process's
CPU (user + system, getrusage) per datagram. If it grows with the N sockets that take the
datagram and not with the N idle ones, the one kernel delivers to the receivers inside the
sender's CPU time: on two real hosts that work is the receiving host's.

Variants are interleaved round by round; medians [ranges] and the ratios to the none case.

usage: scripts/bench-multicast-kernel.py [--sockets 10,1000] [--datagrams 500] [--rounds 3]
"""
import argparse
import os
import resource
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GROUP, OTHER, PORT, RATE = "239.192.9.9", "239.192.9.10", 5630, 50.0


def receivers(n, group, ready, hold_s):
    """Host b: n sockets joined to `group`, held open until killed (at most hold_s)."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (n + 64, max(n + 64, 4096)))
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((group, PORT))
        mreq = struct.pack("4s4s", socket.inet_aton(group), socket.inet_aton("0.0.0.0"))
        s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
        socks.append(s)
    with open(ready, "w") as f:
        f.write("ready")
    time.sleep(hold_s)


def sender(d):
    """Host a: d datagrams at RATE/s; prints the process's CPU per datagram, us."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    payload = b"x" * 64
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    due = time.monotonic()
    for _ in range(d):
        s.sendto(payload, (GROUP, PORT))
        due += 1 / RATE
        time.sleep(max(0.0, due - time.monotonic()))
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    print(f"{cpu * 1e6 / d:.2f}")


def one(ns_a, ns_b, n, group, d, tmp):
    """One run: the receivers up on b (if any), the sender on a; its us per datagram."""
    hold = d / RATE + 60
    rx = None
    if n:
        ready = os.path.join(tmp, "ready")
        if os.path.exists(ready):
            os.remove(ready)
        rx = subprocess.Popen(["ip", "netns", "exec", ns_b, sys.executable, __file__,
                               "--receivers", str(n), group, ready, str(hold)])
        deadline = time.monotonic() + 60
        while not os.path.exists(ready):
            if rx.poll() is not None or time.monotonic() > deadline:
                rx.kill()
                sys.exit(f"the {n} receiving sockets on b did not come up")
            time.sleep(0.1)
        time.sleep(0.5)
    try:
        out = subprocess.run(["ip", "netns", "exec", ns_a, sys.executable, __file__,
                              "--sender", str(d)], capture_output=True, text=True,
                             timeout=d / RATE + 60)
    finally:
        if rx is not None:
            rx.kill()
            rx.wait(timeout=30)
    if out.returncode != 0:
        sys.exit(f"the sender failed:\n{out.stderr}")
    return float(out.stdout.strip())


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--receivers":
        receivers(int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--sender":
        sender(int(sys.argv[2]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--sockets", default="10,1000")
    ap.add_argument("--datagrams", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    counts = [int(x) for x in args.sockets.split(",")]
    variants = [("none", 0, GROUP)]
    for n in counts:
        variants += [(f"{n} joined", n, GROUP), (f"{n} idle", n, OTHER)]
    tmp = tempfile.mkdtemp(prefix="zp-mk-")
    # The testbed lives while this process does (--owner) and at most --ttl seconds.
    ttl = str(int(args.rounds * len(variants) * (args.datagrams / RATE + 30) + 300))
    up = subprocess.run([os.path.join(HERE, "testbed.sh"), "up", tmp, "--owner",
                         str(os.getpid()), "--ttl", ttl], capture_output=True, text=True,
                        timeout=300)
    if up.returncode != 0:
        sys.exit(f"testbed up failed:\n{up.stderr}")
    env = dict(l.split("=", 1) for l in open(os.path.join(tmp, "env")).read().split() if "=" in l)
    per = {name: [] for name, _, _ in variants}
    try:
        for r in range(args.rounds):
            for name, n, group in variants:
                us = one(env["ZP_NS_A"], env["ZP_NS_B"], n, group, args.datagrams, tmp)
                per[name].append(us)
                print(f"round {r + 1}: {name:>12}: {us:8.1f} us per datagram", file=sys.stderr,
                      flush=True)
    finally:
        subprocess.run([os.path.join(HERE, "testbed.sh"), "down", tmp], capture_output=True,
                       timeout=120)
    print(f"\nsender CPU per datagram (64 B at {RATE:g}/s, {args.datagrams} datagrams, "
          f"{args.rounds} rounds), a -> sockets on b; median [range], ratio to none")
    base = statistics.median(per["none"])
    for name, _, _ in variants:
        xs = per[name]
        print(f"  {name:>12}: {statistics.median(xs):8.1f} us [{min(xs):.1f}-{max(xs):.1f}]"
              f"  x{statistics.median(xs) / base:.2f}")


if __name__ == "__main__":
    main()
