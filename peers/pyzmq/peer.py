#!/usr/bin/env python3
"""zmqperf peer on pyzmq: plays one node of a topology (source, sink, ping, echo, swarm).

The node spec is the last argument (JSON); control lines come on stdin and go to stdout
(docs/control-protocol.md, docs/peers.md); measured messages carry the 24-byte header
(docs/wire-format.md). `peer.py --version` prints the binding and libzmq versions.
"""

import json
import os
import queue
import resource
import struct
import sys
import threading
import time

import zmq

# The measurement header: magic, version, flags, stream id, sequence, send time.
HEADER = struct.Struct("<2sBBIQQ")
HEADER_LEN = HEADER.size
MAGIC = b"ZP"
VERSION = 1
TIMESTAMP, END, WARMUP = 0x01, 0x02, 0x04
RESERVED = 0xF8

# A passive role looks for the runner's stop this often while nothing arrives, ms.
STOP_POLL_MS = 100
# After the stop, a sink ends once this long passes without a message: a TCP stream held up
# for a delayed acknowledgement (up to 200 ms on Linux) is late, not lost.
DRAIN_NS = 1_000_000_000
# A swarm holds its sockets at most this long after its measurement, waiting for stop, s.
RELEASE_TIMEOUT_S = 60.0

now_ns = time.monotonic_ns

SOCKET_TYPES = {
    name: getattr(zmq, name)
    for name in ("PUB", "XPUB", "SUB", "XSUB", "PUSH", "PULL", "REQ", "REP", "DEALER", "ROUTER", "PAIR")
}
ROLE_SOCKETS = {
    "source": {"PUB", "XPUB", "PUSH", "PAIR", "DEALER"},
    "sink": {"SUB", "XSUB", "PULL", "PAIR", "DEALER", "ROUTER"},
    "ping": {"REQ", "DEALER", "PAIR"},
    "echo": {"REP", "ROUTER", "DEALER", "PAIR"},
    "swarm": {"SUB"},
}
OPTIONS = {"sndhwm", "rcvhwm", "linger", "subscribe", "routing_id", "xpub_nodrop", "xpub_verbose"}
# Node spec fields that ask for something this peer does not play, with their "unset" value.
UNPLAYED = {"frames": [], "log_levels": [], "eot": None, "ticks": None, "io": "blocking"}
LEGACY_ROLE = {"ping": "client", "echo": "server", "source": "sender", "sink": "receiver", "swarm": "receiver"}


class PeerError(Exception):
    """A failure the runner is told about: its message and the exit code."""

    def __init__(self, message, exit_code):
        super().__init__(message)
        self.exit_code = exit_code


class HeaderError(ValueError):
    """A header that must be refused: `kind` is unsupported-version or reserved-flags."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def decode(buf):
    """The header at the start of `buf` as (flags, stream_id, sequence, send_ns), or None
    when the message carries none (too short, or not starting with ZP)."""
    if len(buf) < HEADER_LEN or buf[:2] != MAGIC:
        return None
    _, version, flags, stream_id, sequence, send_ns = HEADER.unpack_from(buf)
    if version != VERSION:
        raise HeaderError("unsupported-version", f"header version {version} is not supported (this peer reads version 1)")
    if flags & RESERVED:
        raise HeaderError("reserved-flags", f"header flags 0x{flags:02x} set reserved bits")
    return flags, stream_id, sequence, send_ns


def encode(flags, stream_id, sequence, send_ns):
    """The 24 bytes of a header."""
    return HEADER.pack(MAGIC, VERSION, flags, stream_id, sequence, send_ns)


def round3(value):
    """`value` kept to 3 significant digits (123456 -> 123000), as the runner's histogram."""
    if value < 1000:
        return value
    unit = 1
    while value >= 1000 * unit:
        unit *= 10
    return value - value % unit


def record(hist, ns):
    key = round3(ns)
    hist[key] = hist.get(key, 0) + 1


def buckets(hist):
    """The compact histogram form."""
    return {"buckets": sorted([v, c] for v, c in hist.items())}


def span(messages, size, start_ns, end_ns):
    return {"messages": messages, "payload_bytes": messages * size, "start_ns": start_ns, "end_ns": end_ns}


def usage(role):
    """CPU times of this process and its peak resident memory (VmHWM)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    peak = 0
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                peak = int(line.split()[1])
    return {
        "role": LEGACY_ROLE.get(role, role),
        "placement": "foreign",
        "cpu_user_ms": ru.ru_utime * 1000.0,
        "cpu_sys_ms": ru.ru_stime * 1000.0,
        "peak_rss_kib": peak,
    }


class Control:
    """The runner's lines on stdin (read by a thread) and ours on stdout."""

    def __init__(self):
        self.lines = queue.Queue()
        self.stopped = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in sys.stdin:
            try:
                msg = json.loads(line)
            except ValueError:
                msg = None
            kind = msg.get("type") if isinstance(msg, dict) else None
            if kind == "stop":
                self.stopped.set()
            self.lines.put(kind)
        # The end of stdin is a stop.
        self.stopped.set()
        self.lines.put("eof")

    @staticmethod
    def say(kind, **fields):
        sys.stdout.write(json.dumps({"type": kind, "v": 1, **fields}) + "\n")
        sys.stdout.flush()

    def wait_start(self, timeout_ms):
        try:
            kind = self.lines.get(timeout=timeout_ms / 1000)
        except queue.Empty:
            kind = "eof"
        if kind == "eof":
            raise PeerError("protocol error: no start signal from the runner", 9)
        if kind != "start":
            raise PeerError(f"protocol error: expected start, got a line of type {kind!r}", 9)


def check_spec(spec):
    """Refuses what this peer does not play (exit 3), naming the field."""
    role = spec["role"]
    if role not in ROLE_SOCKETS:
        raise PeerError(f"node {spec['name']}: role {role!r} is not played by the pyzmq peer (it plays {', '.join(ROLE_SOCKETS)})", 3)
    if len(spec["sockets"]) != 1:
        raise PeerError(f"node {spec['name']}: the pyzmq peer plays nodes of one socket, this one has {len(spec['sockets'])}", 3)
    plan = spec["sockets"][0]
    if plan["kind"] not in ROLE_SOCKETS[role]:
        raise PeerError(
            f"node {spec['name']}: a {role} on {plan['kind']} is not played by the pyzmq peer (a {role} uses {', '.join(sorted(ROLE_SOCKETS[role]))})", 3
        )
    for key, value in (plan.get("options") or {}).items():
        if value is not None and key not in OPTIONS:
            raise PeerError(f"node {spec['name']}: socket option {key} is not played by the pyzmq peer (it plays {', '.join(sorted(OPTIONS))})", 3)
    for key, unset in UNPLAYED.items():
        if spec.get(key, unset) not in (unset, None):
            raise PeerError(f"node {spec['name']}: {key} = {json.dumps(spec[key])} is not played by the pyzmq peer; leave it unset", 3)
    for transport in plan["bind"] + plan["connect"]:
        if not transport.startswith(("tcp://", "ipc://")):
            raise PeerError(f"node {spec['name']}: endpoint {transport} is not played by the pyzmq peer (tcp:// and ipc:// only)", 3)


def apply_options(sock, kind, options, linger):
    options = options or {}
    sock.linger = options["linger"] if options.get("linger") is not None else linger
    if options.get("sndhwm") is not None:
        sock.sndhwm = options["sndhwm"]
    if options.get("rcvhwm") is not None:
        sock.rcvhwm = options["rcvhwm"]
    if options.get("routing_id") is not None:
        sock.setsockopt(zmq.ROUTING_ID, options["routing_id"].encode())
    if kind in (zmq.PUB, zmq.XPUB):
        # A PUB is an XPUB to libzmq: both options apply to both.
        if options.get("xpub_nodrop") is not None:
            sock.setsockopt(zmq.XPUB_NODROP, int(options["xpub_nodrop"]))
        if options.get("xpub_verbose") is not None:
            sock.setsockopt(zmq.XPUB_VERBOSE, int(options["xpub_verbose"]))
    if kind == zmq.SUB:
        for prefix in options.get("subscribe") or [""]:
            sock.subscribe(prefix.encode())


def attach(sock, plan, name):
    """Binds and connects; returns the endpoints bound, wildcards resolved."""
    bound = []
    for ep in plan["bind"]:
        try:
            sock.bind(ep)
        except zmq.ZMQError as e:
            code = 5 if e.errno == zmq.EADDRINUSE else 4
            raise PeerError(f"node {name}: cannot bind {ep} ({e.strerror}); choose a free port or path", code) from e
        bound.append(sock.getsockopt_string(zmq.LAST_ENDPOINT))
    for ep in plan["connect"]:
        try:
            sock.connect(ep)
        except zmq.ZMQError as e:
            raise PeerError(f"node {name}: cannot connect to {ep} ({e.strerror}); check the endpoint", 4) from e
    return bound


def open_socket(ctx, spec, linger=0):
    """The node's one socket, options applied, bound and connected (a source waiting for
    subscriptions on PUB gets an XPUB that passes every subscription on)."""
    plan = spec["sockets"][0]
    kind = SOCKET_TYPES[plan["kind"]]
    if spec["role"] == "source" and spec.get("subscriptions", 0) > 0 and kind == zmq.PUB:
        kind = zmq.XPUB
    sock = ctx.socket(kind)
    apply_options(sock, kind, plan.get("options"), linger)
    if kind == zmq.XPUB and spec["role"] == "source" and spec.get("subscriptions", 0) > 0:
        # Every subscription is passed on, so that the source can count its subscribers.
        sock.setsockopt(zmq.XPUB_VERBOSE, 1)
    bound = attach(sock, plan, spec["name"])
    if kind == zmq.XSUB:
        for prefix in (plan.get("options") or {}).get("subscribe") or [""]:
            sock.send(b"\x01" + prefix.encode())
    return sock, bound


def first_endpoint(spec):
    plan = spec["sockets"][0]
    return (plan["bind"] + plan["connect"] + ["?"])[0]


def wait_until(due_ns):
    """Sleeps, then spins, until the monotonic clock reaches `due_ns`."""
    left = due_ns - now_ns()
    if left > 2_000_000:
        time.sleep((left - 1_000_000) / 1e9)
    while now_ns() < due_ns:
        pass


def run_source(ctx, spec, ctl):
    sock, bound = open_socket(ctx, spec)
    timeout_ms = spec["timeout_ms"]
    sock.sndtimeo = timeout_ms
    sock.rcvtimeo = timeout_ms
    ctl.say("ready", endpoints=bound)
    ctl.wait_start(timeout_ms)
    report = {"latency": None, "send_delay": None, "send": None, "delivered": None, "ledger": None}
    where = first_endpoint(spec)
    subscriptions = spec.get("subscriptions", 0) if sock.type == zmq.XPUB else 0
    if subscriptions:
        t_sub = now_ns()
        for got in range(subscriptions):
            try:
                sock.recv()
            except zmq.Again:
                raise PeerError(f"{got} of {subscriptions} subscriptions arrived within {timeout_ms} ms on {where}", 4) from None
        report["subscription_wait_ns"] = now_ns() - t_sub
    size, count, stream = spec["size"], spec["count"], spec.get("stream_id", 0)
    header = size >= HEADER_LEN
    buf = bytearray(size)
    for i in range(spec["warmup"]):
        if header:
            HEADER.pack_into(buf, 0, MAGIC, VERSION, WARMUP, stream, i, 0)
        send_or_fail(sock, buf, i, "warm-up message", where, timeout_ms)
    rate = spec.get("rate")
    interval = 1e9 / rate if rate else None
    every = max(spec.get("stamp_every", 1), 1)
    last = count - 1
    delay = {}
    start = now_ns()
    for i in range(count):
        if interval is not None:
            due = start + int(i * interval)
            wait_until(due)
            record(delay, now_ns() - due)
            flags, stamp = TIMESTAMP, due
        elif i % every == 0 or i == last:
            flags, stamp = TIMESTAMP, now_ns()
        else:
            flags, stamp = 0, 0
        if header:
            HEADER.pack_into(buf, 0, MAGIC, VERSION, flags | (END if i == last else 0), stream, i, stamp)
        send_or_fail(sock, buf, i, "message", where, timeout_ms)
    end = now_ns()
    ctl.say("sent", first_send_ns=start, last_send_ns=end)
    # The measured stream is out; the socket stays until the runner's stop (wait-for-stop).
    ctl.stopped.wait(timeout_ms / 1000)
    sock.close(linger=0)
    ctx.term()
    report.update(
        send=span(count, size, start, end),
        send_delay=buckets(delay) if interval is not None else None,
        header=header,
        closed_ns=now_ns(),
    )
    return report


def send_or_fail(sock, buf, i, what, where, timeout_ms):
    try:
        sock.send(buf)
    except zmq.Again:
        raise PeerError(f"{what} {i} could not be sent within {timeout_ms} ms on {where}: the receiver stopped taking messages", 4) from None


def run_sink(ctx, spec, ctl):
    sock, bound = open_socket(ctx, spec)
    sock.rcvtimeo = STOP_POLL_MS
    ctl.say("ready", endpoints=bound)
    timeout_ms = spec["timeout_ms"]
    ctl.wait_start(timeout_ms)
    streams = dict(spec.get("streams") or [])
    total = sum(streams.values())
    ends_itself = spec.get("ends_itself", True)
    size = spec["size"]
    header = size >= HEADER_LEN
    routed = sock.type == zmq.ROUTER
    # Per stream: its runs, the run being extended, its latency.
    runs, tails, hists = {}, {}, {}
    everything = {}
    ends = 0
    received = 0
    seen = 0
    skip = spec["warmup"] * len(streams)
    start = last_read = 0
    # When the current quiet spell began (the start of the first receive that timed out).
    quiet_since = None
    idle_ms = 0
    stopping = False
    cut_short = None
    recv = sock.recv_multipart if routed else sock.recv
    while True:
        try:
            buf = recv()
        except zmq.Again:
            if quiet_since is None:
                quiet_since = now_ns() - STOP_POLL_MS * 1_000_000
            if stopping:
                if now_ns() - quiet_since < DRAIN_NS:
                    continue
                if ends_itself and ends < len(streams):
                    cut_short = f"the end of the stream never came: {received} of {total} messages arrived before the senders finished and the queue ran dry"
                break
            if ctl.stopped.is_set():
                stopping = True
                continue
            idle_ms += STOP_POLL_MS
            if idle_ms < timeout_ms:
                continue
            if received == 0 and ends_itself:
                raise PeerError(f"no message arrived within {timeout_ms} ms on {first_endpoint(spec)} (0 of {total} messages)", 4)
            cut_short = f"nothing arrived for {idle_ms / 1000:.1f} s after {received} of {total} messages"
            break
        idle_ms = 0
        quiet_since = None
        if routed:
            buf = buf[-1]
        if not header:
            # No room for the header: count only, as libzmq's local_thr.
            seen += 1
            if seen <= skip:
                continue
            last_read = now_ns()
            if received == 0:
                start = last_read
            received += 1
            if ends_itself and received == total:
                break
            continue
        try:
            h = decode(buf)
        except HeaderError as e:
            raise PeerError(f"protocol error: {e}", 9) from None
        if h is None:
            raise PeerError(f"protocol error: a message of {len(buf)} B without the measurement header after {received} messages", 9)
        flags, stream, seq, send_ns = h
        if flags & WARMUP:
            continue
        # The clock is read where a figure needs it: the first message, a stamped one, a new run.
        tail = tails.get(stream)
        now = 0
        if flags & TIMESTAMP or received == 0 or tail is None or tail[0] + tail[1] != seq:
            now = last_read = now_ns()
        if received == 0:
            start = now
        received += 1
        if tail is not None and tail[0] + tail[1] == seq:
            tail[1] += 1
        else:
            tail = tails[stream] = [seq, 1, now]
            runs.setdefault(stream, []).append(tail)
        if flags & TIMESTAMP:
            hist = hists.get(stream)
            if hist is None:
                hist = hists[stream] = {}
            lat = round3(now - send_ns if now > send_ns else 0)
            hist[lat] = hist.get(lat, 0) + 1
        if flags & END:
            ends += 1
            if ends_itself and ends >= len(streams):
                last_read = now_ns()
                break
    # The span ends at the last arrival; after a quiet spell, where the spell began.
    end = max(last_read, quiet_since or 0, start) if received else start
    for hist in hists.values():
        for v, c in hist.items():
            everything[v] = everything.get(v, 0) + c
    report = {
        "latency": buckets(everything) if header else None,
        "send_delay": None,
        "send": None,
        "delivered": span(received, size, start, end),
        "ledger": {"runs": {str(s): r for s, r in runs.items()}} if header else None,
        "header": header,
    }
    if header:
        report["stream_latency"] = [[s, buckets(hists.get(s, {}))] for s in streams]
    if cut_short:
        report["cut_short"] = cut_short
    sock.close()
    return report


def run_ping(ctx, spec, ctl):
    sock, bound = open_socket(ctx, spec)
    timeout_ms = spec["timeout_ms"]
    sock.sndtimeo = timeout_ms
    sock.rcvtimeo = timeout_ms
    ctl.say("ready", endpoints=bound)
    ctl.wait_start(timeout_ms)
    size, count, warmup = spec["size"], spec["count"], spec["warmup"]
    if size < HEADER_LEN:
        raise PeerError(f"node {spec['name']}: a ping needs messages of at least {HEADER_LEN} B for the header, got size {size}", 3)
    stream = spec.get("stream_id", 0)
    delimiter = spec.get("delimiter", False)
    where = first_endpoint(spec)
    buf = bytearray(size)
    hist = {}
    # Without a warm-up, the first round trip carries the connection's handshake: it is left
    # out of the distribution, as zmqperf's own ping does.
    skip_first = warmup == 0 and count > 1
    start = now_ns()
    for i in range(warmup + count):
        if i == warmup:
            start = now_ns()
        t0 = now_ns()
        HEADER.pack_into(buf, 0, MAGIC, VERSION, TIMESTAMP | (WARMUP if i < warmup else 0), stream, i, t0)
        try:
            if delimiter:
                sock.send(b"", zmq.SNDMORE)
            sock.send(buf)
            reply = sock.recv_multipart()[-1] if delimiter else sock.recv()
        except zmq.Again:
            raise PeerError(f"no reply to request {i} within {timeout_ms} ms from {where}", 4) from None
        t1 = now_ns()
        try:
            h = decode(reply)
        except HeaderError as e:
            raise PeerError(f"protocol error: reply {i}: {e}", 9) from None
        if h is None or h[2] != i:
            got = "no header" if h is None else f"sequence {h[2]}"
            raise PeerError(f"protocol error: reply {i} carries {got}; the echo side answered out of order", 9)
        if i >= warmup and not (i == 0 and skip_first):
            record(hist, (t1 - t0) // 2)
    end = now_ns()
    ctl.say("sent")
    sock.close(linger=0)
    return {
        "latency": buckets(hist),
        "send_delay": None,
        "send": None,
        "delivered": None,
        "ledger": None,
        "round_trips": span(count, size, start, end),
        "header": True,
    }


def run_echo(ctx, spec, ctl):
    timeout_ms = spec["timeout_ms"]
    # The last reply may still be queued when the echo ends: closing waits for it, bounded.
    sock, bound = open_socket(ctx, spec, linger=timeout_ms)
    sock.rcvtimeo = STOP_POLL_MS
    sock.sndtimeo = timeout_ms
    ctl.say("ready", endpoints=bound)
    ctl.wait_start(timeout_ms)
    ends_itself = spec.get("ends_itself", True)
    expect = spec.get("expect", 0)
    done = 0
    start = 0
    idle_ms = 0
    cut_short = None
    while not (ends_itself and done == expect):
        try:
            frames = sock.recv_multipart()
        except zmq.Again:
            if ctl.stopped.is_set():
                break
            idle_ms += STOP_POLL_MS
            if idle_ms < timeout_ms:
                continue
            if done == 0:
                raise PeerError(f"no request arrived within {timeout_ms} ms on {first_endpoint(spec)}", 4)
            cut_short = f"idle: no request for {idle_ms / 1000:.1f} s after {done} round trips"
            break
        idle_ms = 0
        if done == 0:
            start = now_ns()
        try:
            sock.send_multipart(frames)
        except zmq.Again:
            raise PeerError(f"reply {done} could not be sent within {timeout_ms} ms on {first_endpoint(spec)}", 4) from None
        done += 1
    end = now_ns()
    sock.close()
    report = {
        "latency": None,
        "send_delay": None,
        "send": None,
        "delivered": None,
        "ledger": None,
        "round_trips": span(done, spec["size"], start, end),
        "header": False,
    }
    if cut_short:
        report["cut_short"] = cut_short
    return report


class Subscriber:
    """What one SUB socket of a swarm received."""

    __slots__ = ("runs", "tail", "warmup", "end_seq", "stream_id", "latency", "first_send_ns", "last_recv_ns")

    def __init__(self):
        self.runs = []
        self.tail = None
        self.warmup = 0
        self.end_seq = None
        self.stream_id = None
        self.latency = {}
        self.first_send_ns = None
        self.last_recv_ns = 0

    def take(self, buf, now, index):
        """Records one message received at `now`; True once the stream has ended."""
        try:
            h = decode(buf)
        except HeaderError as e:
            raise PeerError(f"protocol error: subscriber {index}: {e}", 9) from None
        if h is None:
            raise PeerError(f"protocol error: subscriber {index} got a message of {len(buf)} B without the measurement header", 9)
        flags, stream, seq, send_ns = h
        if self.stream_id is None:
            self.stream_id = stream
        elif stream != self.stream_id:
            raise PeerError(f"protocol error: subscriber {index} got messages of two streams (ids {self.stream_id} and {stream}): two publishers on one endpoint?", 9)
        if flags & WARMUP:
            self.warmup += 1
            return False
        tail = self.tail
        if tail is not None and tail[0] + tail[1] == seq:
            tail[1] += 1
        else:
            self.tail = [seq, 1, now]
            self.runs.append(self.tail)
        self.last_recv_ns = now
        if flags & TIMESTAMP:
            if self.first_send_ns is None:
                self.first_send_ns = send_ns
            lat = round3(now - send_ns if now > send_ns else 0)
            self.latency[lat] = self.latency.get(lat, 0) + 1
        if flags & END:
            self.end_seq = seq
            return True
        return False

    def compact(self):
        return {
            "runs": self.runs,
            "warmup": self.warmup,
            "end_seq": self.end_seq,
            "stream_id": self.stream_id,
            "latency": buckets(self.latency),
            "first_send_ns": self.first_send_ns,
            "last_recv_ns": self.last_recv_ns,
        }


def raise_file_limit(subs):
    """Each SUB socket takes about three descriptors: raise the soft limit, or say how."""
    need = subs * 3 + 64
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= need:
        return
    if hard != resource.RLIM_INFINITY and hard < need:
        raise PeerError(f"{subs} SUB sockets need about {need} open files but the limit is {hard}: raise it (ulimit -n) or use fewer subscribers per process", 3)
    resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


def run_swarm(ctx, spec, ctl):
    sw = spec.get("swarm")
    if not sw:
        raise PeerError(f"node {spec['name']}: a swarm without its swarm settings", 2)
    if sw.get("raw"):
        raise PeerError(f"node {spec['name']}: the raw-socket swarm is not played by the pyzmq peer", 3)
    n = sw["subs"]
    raise_file_limit(n)
    ctx.max_sockets = n + 64
    plan = spec["sockets"][0]
    t0 = now_ns()
    socks = []
    for _ in range(n):
        sock = ctx.socket(zmq.SUB)
        apply_options(sock, zmq.SUB, plan.get("options"), 0)
        attach(sock, plan, spec["name"])
        socks.append(sock)
    connect_ns = now_ns() - t0
    ctl.say("ready", endpoints=[])
    ctl.wait_start(sw["first_timeout_ms"])

    subs = [Subscriber() for _ in range(n)]
    poller = zmq.Poller()
    index = {}
    for i, sock in enumerate(socks):
        poller.register(sock, zmq.POLLIN)
        index[sock] = i
    open_subs = n
    first_deadline = now_ns() + sw["first_timeout_ms"] * 1_000_000
    idle_ns = sw["idle_ms"] * 1_000_000
    last_activity = None
    while True:
        for sock, _ in poller.poll(STOP_POLL_MS):
            i = index[sock]
            sub = subs[i]
            while True:
                try:
                    buf = sock.recv(zmq.NOBLOCK)
                except zmq.Again:
                    break
                last_activity = now_ns()
                if sub.take(buf, last_activity, i):
                    # Done: the socket stays open until the runner's stop.
                    poller.unregister(sock)
                    open_subs -= 1
                    break
        if open_subs == 0:
            stop = "all-ended"
            break
        if ctl.stopped.is_set():
            stop = "parent-gone"
            break
        now = now_ns()
        if last_activity is None and now >= first_deadline:
            stop = "nothing-arrived"
            break
        if last_activity is not None and now - last_activity >= idle_ns:
            stop = "idle"
            break
    ctl.say("sent")
    if stop != "parent-gone":
        # Closing now could slow the delivery to swarms still receiving: wait for stop.
        ctl.stopped.wait(RELEASE_TIMEOUT_S)
    for sock in socks:
        sock.close(linger=0)
    everything = {}
    for sub in subs:
        for v, c in sub.latency.items():
            everything[v] = everything.get(v, 0) + c
    return {
        "latency": buckets(everything),
        "send_delay": None,
        "send": None,
        "delivered": None,
        "ledger": None,
        "header": True,
        "swarm": {
            "process": sw.get("process", 0),
            "pid": os.getpid(),
            "stop": stop,
            "connect_ns": connect_ns,
            "subscribers": [sub.compact() for sub in subs],
        },
    }


ROLES = {"source": run_source, "sink": run_sink, "ping": run_ping, "echo": run_echo, "swarm": run_swarm}


def version():
    return {"binding": f"pyzmq {zmq.pyzmq_version()}", "engine": f"libzmq {zmq.zmq_version()}"}


def main(argv):
    if len(argv) == 2 and argv[1] == "--version":
        print(json.dumps(version()))
        return 0
    ctl = Control()
    try:
        if len(argv) < 2:
            raise PeerError("bad node spec: give the node spec (JSON) as the last argument, or --version", 2)
        try:
            spec = json.loads(argv[-1])
            check_spec(spec)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise PeerError(f"bad node spec: {e!r}", 2) from None
        ctx = zmq.Context()
        try:
            report = ROLES[spec["role"]](ctx, spec, ctl)
        finally:
            ctx.destroy(linger=0)
        report["usage"] = usage(spec["role"])
        ctl.say("report", report=report)
        return 0
    except PeerError as e:
        ctl.say("error", message=str(e), exit_code=e.exit_code)
        return e.exit_code
    except zmq.ZMQError as e:
        ctl.say("error", message=f"zmq error: {e}", exit_code=10)
        return 10


if __name__ == "__main__":
    sys.exit(main(sys.argv))
