#!/usr/bin/env python3
"""Conformance test of the pyzmq peer: every vector of spec/header-vectors.json, then the
peer against itself over tcp on 127.0.0.1 (source -> sink, ping -> echo, source -> swarm)
and a source -> sink over ipc. Every wait is bounded; any failure exits non-zero.

    python test_peer.py path/to/spec/header-vectors.json
"""

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import unittest

import peer

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = None
# Longest wait for any one line of a peer, s; the peers' own timeouts are shorter.
LINE_TIMEOUT_S = 20


class Node:
    """One peer process: its spec on the command line, its lines read by a thread."""

    def __init__(self, spec):
        self.name = spec["name"]
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "peer.py"), json.dumps(spec)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def expect(self, kind):
        try:
            line = self.lines.get(timeout=LINE_TIMEOUT_S)
        except queue.Empty:
            raise AssertionError(f"{self.name}: no {kind} line within {LINE_TIMEOUT_S} s") from None
        if line is None:
            raise AssertionError(f"{self.name}: exited (code {self.proc.wait(5)}) before its {kind} line")
        msg = json.loads(line)
        if msg["type"] != kind:
            raise AssertionError(f"{self.name}: expected {kind}, got {line.strip()}")
        return msg

    def tell(self, kind):
        self.proc.stdin.write(json.dumps({"type": kind, "v": 1}) + "\n")
        self.proc.stdin.flush()

    def finish(self):
        """Waits for the exit (bounded) and returns the exit code; kills it if it hangs."""
        try:
            return self.proc.wait(timeout=LINE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"{self.name}: did not exit within {LINE_TIMEOUT_S} s") from None

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        self.proc.stdin.close()
        self.proc.stdout.close()


def spec(name, role, kind, bind=(), connect=(), options=None, **fields):
    base = {
        "name": name,
        "role": role,
        "sockets": [{"kind": kind, "bind": list(bind), "connect": list(connect), "options": options or {}}],
        "size": 64,
        "count": 1000,
        "warmup": 10,
        "rate": None,
        "stamp_every": 16,
        "timeout_ms": 5000,
        "stream_id": 7,
        "streams": [[7, 1000]],
        "ends_itself": True,
        "expect": 0,
        "peers": 1,
        "subscriptions": 0,
        "delimiter": False,
        "quit": "wait-for-stop",
    }
    base.update(fields)
    return base


def covered(runs):
    """The sequence numbers a list of runs covers, in order."""
    return [seq for first, length, _ in runs for seq in range(first, first + length)]


def histogram_count(hist):
    return sum(count for _, count in hist["buckets"])


class HeaderVectors(unittest.TestCase):
    def test_every_vector(self):
        self.assertGreaterEqual(len(VECTORS), 11)
        for v in VECTORS:
            with self.subTest(v["name"]):
                raw = bytes.fromhex(v["hex"])
                want = v["expect"]
                if want == "header":
                    f = v["fields"]
                    self.assertEqual(peer.decode(raw), (f["flags"], f["stream_id"], f["sequence"], f["send_ns"]))
                    self.assertEqual(peer.encode(f["flags"], f["stream_id"], f["sequence"], f["send_ns"]), raw[:24])
                elif want == "plain":
                    self.assertIsNone(peer.decode(raw))
                elif want.startswith("error:"):
                    with self.assertRaises(peer.HeaderError) as caught:
                        peer.decode(raw)
                    self.assertEqual(caught.exception.kind, want.removeprefix("error:"))
                else:
                    self.fail(f"unknown expectation {want!r}")

    def test_histogram_keeps_three_digits(self):
        self.assertEqual([peer.round3(v) for v in (0, 999, 1234, 123456, 99999)], [0, 999, 1230, 123000, 99900])


class AgainstItself(unittest.TestCase):
    def setUp(self):
        self.nodes = []

    def tearDown(self):
        for n in self.nodes:
            n.kill()

    def start(self, s):
        n = Node(s)
        self.nodes.append(n)
        return n

    def stream(self, sink_kind, source_kind, bind):
        count = 1000
        # A PUB drops beyond its high-water mark: room for the whole stream.
        room = {"sndhwm": 10 * count, "rcvhwm": 10 * count}
        sink = self.start(spec("rx", "sink", sink_kind, bind=[bind], options=room))
        ep = sink.expect("ready")["endpoints"][0]
        self.assertFalse(ep.endswith("*"), ep)
        subs = 1 if source_kind in ("PUB", "XPUB") else 0
        # A publisher as zmqperf's suite opens it: blocking at the high-water mark, not dropping.
        source_options = dict(room, xpub_nodrop=True) if subs else room
        source = self.start(spec("tx", "source", source_kind, connect=[ep], subscriptions=subs, options=source_options))
        source.expect("ready")
        sink.tell("start")
        source.tell("start")
        sent = source.expect("sent")
        self.assertLessEqual(sent["first_send_ns"], sent["last_send_ns"])
        rx = sink.expect("report")["report"]
        source.tell("stop")
        tx = source.expect("report")["report"]
        self.assertEqual((sink.finish(), source.finish()), (0, 0))
        self.assertEqual(tx["send"]["messages"], count)
        self.assertEqual(rx["delivered"]["messages"], count)
        self.assertEqual(covered(rx["ledger"]["runs"]["7"]), list(range(count)))
        # Every 16th message is stamped, and the last one.
        stamped = len(range(0, count, 16)) + 1
        self.assertEqual(histogram_count(rx["latency"]), stamped)
        self.assertEqual(rx["stream_latency"][0][0], 7)
        self.assertNotIn("cut_short", rx)
        self.assertEqual(rx["usage"]["placement"], "foreign")

    def test_push_pull_over_tcp(self):
        self.stream("PULL", "PUSH", "tcp://127.0.0.1:*")

    def test_pub_sub_over_tcp(self):
        self.stream("SUB", "PUB", "tcp://127.0.0.1:*")

    def test_xpub_xsub_over_tcp(self):
        self.stream("XSUB", "XPUB", "tcp://127.0.0.1:*")

    def test_push_pull_over_ipc(self):
        with tempfile.TemporaryDirectory() as d:
            self.stream("PULL", "PUSH", f"ipc://{d}/pyzmq-peer.sock")

    def round_trips(self, echo_kind, ping_kind, delimiter=False):
        count, warmup = 500, 10
        echo = self.start(spec("srv", "echo", echo_kind, bind=["tcp://127.0.0.1:*"], expect=count + warmup))
        ep = echo.expect("ready")["endpoints"][0]
        ping = self.start(spec("cli", "ping", ping_kind, connect=[ep], count=count, warmup=warmup, delimiter=delimiter))
        ping.expect("ready")
        echo.tell("start")
        ping.tell("start")
        ping.expect("sent")
        cli = ping.expect("report")["report"]
        srv = echo.expect("report")["report"]
        self.assertEqual((ping.finish(), echo.finish()), (0, 0))
        self.assertEqual(cli["round_trips"]["messages"], count)
        self.assertEqual(histogram_count(cli["latency"]), count)
        self.assertGreater(min(v for v, _ in cli["latency"]["buckets"]), 0)
        self.assertEqual(srv["round_trips"]["messages"], count + warmup)

    def test_req_rep_over_tcp(self):
        self.round_trips("REP", "REQ")

    def test_dealer_router_over_tcp(self):
        self.round_trips("ROUTER", "DEALER")

    def test_dealer_to_rep_with_delimiter(self):
        self.round_trips("REP", "DEALER", delimiter=True)

    def test_swarm_over_tcp(self):
        subs, count = 20, 200
        source = self.start(spec("pub", "source", "PUB", bind=["tcp://127.0.0.1:*"], count=count, warmup=0, subscriptions=subs, stamp_every=1, options={"sndhwm": 10 * count}))
        ep = source.expect("ready")["endpoints"][0]
        swarm_spec = spec("subs", "swarm", "SUB", connect=[ep])
        swarm_spec["swarm"] = {"process": 3, "subs": subs, "first_timeout_ms": 5000, "idle_ms": 2000, "expect": count}
        swarm = self.start(swarm_spec)
        swarm.expect("ready")
        swarm.tell("start")
        source.tell("start")
        source.expect("sent")
        swarm.expect("sent")
        swarm.tell("stop")
        rep = swarm.expect("report")["report"]
        source.tell("stop")
        source.expect("report")
        self.assertEqual((swarm.finish(), source.finish()), (0, 0))
        sw = rep["swarm"]
        self.assertEqual((sw["process"], sw["stop"], len(sw["subscribers"])), (3, "all-ended", subs))
        for sub in sw["subscribers"]:
            self.assertEqual(covered(sub["runs"]), list(range(count)))
            self.assertEqual((sub["end_seq"], sub["stream_id"]), (count - 1, 7))
            self.assertEqual(histogram_count(sub["latency"]), count)
        self.assertEqual(histogram_count(rep["latency"]), subs * count)

    def test_swarm_with_nothing_arriving_ends_and_says_so(self):
        # A port nobody listens on: the subscribers keep trying, nothing arrives.
        s = spec("subs", "swarm", "SUB", connect=["tcp://127.0.0.1:1"])
        s["swarm"] = {"process": 0, "subs": 3, "first_timeout_ms": 300, "idle_ms": 300, "expect": None}
        swarm = self.start(s)
        swarm.expect("ready")
        swarm.tell("start")
        swarm.expect("sent")
        swarm.tell("stop")
        sw = swarm.expect("report")["report"]["swarm"]
        self.assertEqual(swarm.finish(), 0)
        self.assertEqual(sw["stop"], "nothing-arrived")
        self.assertEqual([sub["runs"] for sub in sw["subscribers"]], [[], [], []])

    def test_refuses_what_it_does_not_play(self):
        s = spec("rx", "sink", "PULL", bind=["tcp://127.0.0.1:*"])
        s["sockets"][0]["options"]["conflate"] = True
        node = self.start(s)
        err = node.expect("error")
        self.assertEqual(node.finish(), 3)
        self.assertEqual(err["exit_code"], 3)
        self.assertIn("conflate", err["message"])

    def test_no_start_is_an_error(self):
        node = self.start(spec("rx", "sink", "PULL", bind=["tcp://127.0.0.1:*"], timeout_ms=300))
        node.expect("ready")
        err = node.expect("error")
        self.assertEqual((node.finish(), err["exit_code"]), (9, 9))
        self.assertIn("no start signal", err["message"])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_peer.py path/to/spec/header-vectors.json")
    with open(sys.argv.pop(1)) as f:
        VECTORS = json.load(f)["vectors"]
    unittest.main(verbosity=2)
