#!/usr/bin/env python3
"""Instructions per message of the compatible commands, counted by valgrind's callgrind.

Timing on a shared machine swings by 10x; instruction counts do not. For each cell (a
command, a transport, a message size) the measured program runs under callgrind twice, with
N1 and N2 messages (round trips for latency), and the cost of one message is
(Ir(N2) - Ir(N1)) / (N2 - N1): the start, the setup and the report cancel out. Every thread
of the measured process is counted (for inproc_* that is both ends; for the two-process
commands, the measured side and its libzmq I/O thread); the other side runs natively.

Sides: each --side LABEL=PATH names a zmqperf binary, or, with LABEL=c:DIR, the folder of
libzmq's own perf tools (scripts/build-c-perf.sh prints it). The first side is the baseline;
every other side is shown as a ratio to it.

Modes (--modes plain,instrumented): plain runs zmqperf's sending and measuring commands with
--plain (libzmq's loop: no header, no clock per message), and the native peer of a
two-process cell is the first side's program (plain too); instrumented runs zmqperf as it
runs by default (the header, the clock), and the native peer is the first zmqperf side's
program, so that a zmqperf receiver has headers to read. A C side is the same in both.

usage: scripts/bench-instructions.py --side before=/path/zmqperf --side now=target/release/zmqperf
       scripts/bench-instructions.py --side c=c:$(scripts/build-c-perf.sh | tail -n 1) \\
                                     --side zmqperf=target/release/zmqperf
       [--cells inproc_thr,inproc_lat,local_thr,remote_thr,local_lat,remote_lat]
       [--transports tcp,ipc] [--sizes 64,1024] [--repeat 1] [--modes plain,instrumented]
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

TIMEOUT_S = 600
COLLECTED = re.compile(r"Collected : (\d+)")


# The commands of zmqperf that take --plain (the receivers follow what the sender sends).
PLAIN = {"remote_lat", "remote_thr", "inproc_lat", "inproc_thr"}
MODE = {"plain": True}


def program(side, name):
    """The command that runs `name` (local_thr, ...) for a side, in the mode chosen."""
    label, where = side
    if where.startswith("c:"):
        return [os.path.join(where[2:], name)]
    return [where, name]


def plain_flag(side, name):
    """--plain after a zmqperf command's positional arguments, in plain mode."""
    if side[1].startswith("c:") or not MODE["plain"] or name not in PLAIN:
        return []
    return ["--plain"]


def counts(size):
    """N1 and N2: messages (round trips) of the two runs, fewer for large messages."""
    if size >= 65536:
        return 1000, 5000
    return 10000, 60000


def lat_counts(size):
    if size >= 65536:
        return 200, 1000
    return 1000, 6000


def free_endpoint(transport, tmp):
    if transport == "tcp":
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        return f"tcp://127.0.0.1:{port}", f"tcp://127.0.0.1:{port}"
    NAMES[0] += 1
    path = os.path.join(tmp, f"bi-{os.getpid()}-{NAMES[0]}.ipc")
    return f"ipc://{path}", f"ipc://{path}"


# Each ipc endpoint its own name (libzmq removes a listener's file when it closes, so a
# count of the folder's files could give two runs one name).
NAMES = [0]


def wait_bound(endpoint, alive, limit_s=60):
    """Waits until something listens at `endpoint` (an ipc file, a tcp port that takes a
    connection) while `alive()`, for at most limit_s: a peer started before the measured
    side bound (valgrind takes seconds to start it) connected to nothing, and libzmq's C
    local_thr then sometimes waited for good for messages that never came."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and alive():
        if endpoint.startswith("ipc://"):
            if os.path.exists(endpoint[len("ipc://"):]):
                return
        else:
            host, port = endpoint[len("tcp://"):].rsplit(":", 1)
            try:
                socket.create_connection((host, int(port)), timeout=1).close()
                return
            except OSError:
                pass
        time.sleep(0.05)


def callgrind(cmd, box=None):
    """Runs cmd under callgrind; returns the instructions it executed. `box` gets the
    process (as "p"), for a caller that may have to end it."""
    p = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + cmd,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    if box is not None:
        box["p"] = p
    try:
        out, err = p.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    m = COLLECTED.search(err)
    if p.returncode != 0 or not m:
        sys.exit(f"bench-instructions: {' '.join(cmd)} failed (exit {p.returncode}):\n{out}{err[-2000:]}")
    return int(m.group(1))


def one_process(side, cell, size, n):
    return callgrind(program(side, cell) + [str(size), str(n)] + plain_flag(side, cell))


# The measured command of a two-process cell, and the peer that runs natively beside it.
PEER = {"local_thr": "remote_thr", "remote_thr": "local_thr",
        "local_lat": "remote_lat", "remote_lat": "local_lat"}
BINDS = {"local_thr", "local_lat"}


# How long the measured receiver may go on after its peer has ended, and how often a run
# whose receiver waited longer is tried.
TAIL_S = 60
TRIES = 3


def bound_run(first, second, bind_ep):
    """The measured command `first` (which binds `bind_ep`) under callgrind with its peer
    `second` started once it listens: its instructions, the peer, and None; or None, the
    peer and why, when the measured side failed or still waited TAIL_S after the peer
    ended (it is ended then)."""
    result, box = {}, {}

    def measure():
        # A failure in this thread would end only the thread: keep its words.
        try:
            result["ir"] = callgrind(first, box)
        except SystemExit as e:
            result["error"] = str(e)

    t = threading.Thread(target=measure)
    t.start()
    wait_bound(bind_ep, t.is_alive)
    peer = subprocess.Popen(second, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        peer.wait(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pass
    t.join(TAIL_S)
    if t.is_alive():
        box["p"].kill()
        t.join()
        return None, peer, f"still waited {TAIL_S} s after its peer ended"
    if "error" in result:
        # zmqperf's receiver says so itself (exit 17, cut short).
        return None, peer, result["error"]
    return result["ir"], peer, None


def two_process(side, base, cell, transport, size, n, tmp):
    bind_ep, connect_ep = free_endpoint(transport, tmp)
    measured_ep, peer_ep = (bind_ep, connect_ep) if cell in BINDS else (connect_ep, bind_ep)
    peer_cmd = program(base, PEER[cell]) + [peer_ep, str(size), str(n)] + plain_flag(base, PEER[cell])
    measured_cmd = program(side, cell) + [measured_ep, str(size), str(n)] + plain_flag(side, cell)
    if cell in BINDS:
        # The measured side binds first; the peer connects (and retries) natively.
        first, second = measured_cmd, peer_cmd
    else:
        first, second = peer_cmd, measured_cmd
    peer = None
    try:
        if cell in BINDS:
            for attempt in range(1, TRIES + 1):
                ir, peer, why = bound_run(first, second, bind_ep)
                if ir is not None:
                    break
                print(f"bench-instructions: {' '.join(first)}: {why} (attempt {attempt} of "
                      f"{TRIES}); a sender that closes right after its last send can lose its "
                      "tail to a receiver slowed by valgrind (libzmq issues 1922, 4660)",
                      file=sys.stderr)
            else:
                sys.exit(f"bench-instructions: {' '.join(first)} lost its tail {TRIES} times")
        else:
            peer = subprocess.Popen(first, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            ir = callgrind(second)
        peer.wait(timeout=TIMEOUT_S)
        return ir
    finally:
        if peer is not None and peer.poll() is None:
            peer.kill()
            peer.wait()


def per_message(side, base, cell, transport, size, repeat, tmp):
    lat = cell.endswith("_lat")
    n1, n2 = lat_counts(size) if lat else counts(size)
    values = []
    for _ in range(repeat):
        if cell.startswith("inproc"):
            a, b = one_process(side, cell, size, n1), one_process(side, cell, size, n2)
        else:
            a = two_process(side, base, cell, transport, size, n1, tmp)
            b = two_process(side, base, cell, transport, size, n2, tmp)
        values.append((b - a) / (n2 - n1))
    return statistics.median(values)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--side", action="append", required=True, help="LABEL=PATH (zmqperf) or LABEL=c:DIR (C tools)")
    ap.add_argument("--cells", default="inproc_thr,inproc_lat,local_thr,remote_thr,local_lat,remote_lat")
    ap.add_argument("--transports", default="tcp,ipc")
    ap.add_argument("--sizes", default="64,1024")
    ap.add_argument("--repeat", type=int, default=1, help="runs per figure (the median is shown)")
    ap.add_argument("--modes", default="plain", help="plain, instrumented or both (comma-separated)")
    a = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("bench-instructions: valgrind is not installed (apt-get install valgrind)")
    sides = []
    for s in a.side:
        label, _, where = s.partition("=")
        if not where:
            sys.exit(f"bench-instructions: --side {s}: give LABEL=PATH or LABEL=c:DIR")
        sides.append((label, where))
    modes = a.modes.split(",")
    for m in modes:
        if m not in ("plain", "instrumented"):
            sys.exit(f"bench-instructions: --modes {a.modes}: each is plain or instrumented")
    zmqperf_sides = [s for s in sides if not s[1].startswith("c:")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="zmqperf-bi-") as tmp:
        for mode in modes:
            MODE["plain"] = mode == "plain"
            # The native peer: the first side's program (plain), or the first zmqperf side's.
            peer = sides[0] if MODE["plain"] or not zmqperf_sides else zmqperf_sides[0]
            for cell in a.cells.split(","):
                transports = ["inproc"] if cell.startswith("inproc") else a.transports.split(",")
                for t in transports:
                    for size in (int(x) for x in a.sizes.split(",")):
                        figures = [per_message(s, peer, cell, t, size, a.repeat, tmp) for s in sides]
                        rows.append((mode, cell, t, size, figures))
                        ratios = "  ".join(f"{s[0]}/{sides[0][0]} {f / figures[0]:.3f}" for s, f in zip(sides[1:], figures[1:]))
                        print(f"{mode:<12} {cell:<11} {t:<6} {size:>6} B  " +
                              "  ".join(f"{s[0]} {f:>9,.0f}" for s, f in zip(sides, figures)) +
                              ("  " + ratios if ratios else ""), flush=True)
    unit = "instructions per message (per round trip for *_lat)"
    print(f"\n{unit}; ratios to {sides[0][0]}")


if __name__ == "__main__":
    main()
