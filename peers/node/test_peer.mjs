// Conformance test of the node peer: every vector of spec/header-vectors.json, then the
// peer against itself over tcp on 127.0.0.1 (source -> sink, ping -> echo, source -> swarm)
// and a source -> sink over ipc. Every wait is bounded; any failure exits non-zero.
//
//   node test_peer.mjs path/to/spec/header-vectors.json CACHE_DIR

import { test } from "node:test"
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import { readFileSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, dirname } from "node:path"
import { fileURLToPath } from "node:url"
import readline from "node:readline"
import { decode, encodeInto, round3, HeaderError } from "./peer.mjs"

const [vectorsPath, cache] = process.argv.slice(2)
if (!vectorsPath || !cache) {
  console.error("usage: node test_peer.mjs path/to/spec/header-vectors.json CACHE_DIR")
  process.exit(2)
}
const PEER = join(dirname(fileURLToPath(import.meta.url)), "peer.mjs")
// Longest wait for any one line of a peer, ms; the peers' own timeouts are shorter.
const LINE_TIMEOUT_MS = 20_000

// Vectors are parsed with every integer as BigInt (max-values holds 2^64-1).
const vectors = JSON.parse(readFileSync(vectorsPath, "utf8").replace(/:\s*(\d+)/g, ': "@big:$1"'), (_, v) =>
  typeof v === "string" && v.startsWith("@big:") ? BigInt(v.slice(5)) : v,
).vectors

test("header vectors: decode, encode, plain and refused", () => {
  assert.ok(vectors.length >= 11)
  for (const v of vectors) {
    const raw = Buffer.from(v.hex, "hex")
    if (v.expect === "header") {
      const f = v.fields
      assert.deepEqual(decode(raw), { flags: Number(f.flags), streamId: Number(f.stream_id), sequence: f.sequence, sendNs: f.send_ns }, v.name)
      const out = encodeInto(Buffer.alloc(24), Number(f.flags), Number(f.stream_id), f.sequence, f.send_ns)
      assert.deepEqual(out, raw.subarray(0, 24), v.name)
    } else if (v.expect === "plain") {
      assert.equal(decode(raw), null, v.name)
    } else if (v.expect.startsWith("error:")) {
      assert.throws(() => decode(raw), (e) => e instanceof HeaderError && e.kind === v.expect.slice(6), v.name)
    } else {
      assert.fail(`${v.name}: unknown expectation ${v.expect}`)
    }
  }
})

test("histogram values keep three digits", () => {
  assert.deepEqual([0, 999, 1234, 123456, 99999].map(round3), [0, 999, 1230, 123000, 99900])
})

/** One peer process: its spec on the command line, its lines read as they come. */
class Node {
  constructor(spec) {
    this.name = spec.name
    this.proc = spawn(process.execPath, [PEER, "--cache", cache, JSON.stringify(spec)], { stdio: ["pipe", "pipe", "inherit"] })
    this.lines = []
    this.waiting = null
    this.exit = new Promise((resolve) => this.proc.on("exit", (code) => resolve(code)))
    const rl = readline.createInterface({ input: this.proc.stdout })
    rl.on("line", (l) => this.push(l))
    rl.on("close", () => this.push(null))
  }

  push(line) {
    if (this.waiting) {
      const w = this.waiting
      this.waiting = null
      w(line)
    } else this.lines.push(line)
  }

  async expect(type) {
    const line = this.lines.length
      ? this.lines.shift()
      : await new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`${this.name}: no ${type} line within ${LINE_TIMEOUT_MS} ms`)), LINE_TIMEOUT_MS)
          this.waiting = (l) => {
            clearTimeout(timer)
            resolve(l)
          }
        })
    if (line === null) throw new Error(`${this.name}: exited before its ${type} line`)
    const msg = JSON.parse(line)
    assert.equal(msg.type, type, `${this.name}: expected ${type}, got ${line}`)
    return msg
  }

  tell(type) {
    this.proc.stdin.write(JSON.stringify({ type, v: 1 }) + "\n")
  }

  /** The exit code, waited for at most LINE_TIMEOUT_MS. */
  finish() {
    let timer
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${this.name}: did not exit within ${LINE_TIMEOUT_MS} ms`)), LINE_TIMEOUT_MS)
    })
    return Promise.race([this.exit, late]).finally(() => clearTimeout(timer))
  }

  kill() {
    if (this.proc.exitCode === null) this.proc.kill("SIGKILL")
  }
}

function spec(name, role, kind, { bind = [], connect = [], options = {}, ...fields } = {}) {
  return {
    name,
    role,
    sockets: [{ kind, bind, connect, options }],
    size: 64,
    count: 1000,
    warmup: 10,
    rate: null,
    stamp_every: 16,
    timeout_ms: 5000,
    stream_id: 7,
    streams: [[7, 1000]],
    ends_itself: true,
    expect: 0,
    peers: 1,
    subscriptions: 0,
    delimiter: false,
    quit: "wait-for-stop",
    ...fields,
  }
}

const covered = (runs) => runs.flatMap(([first, length]) => Array.from({ length }, (_, k) => first + k))
const range = (n) => Array.from({ length: n }, (_, k) => k)
const histogramCount = (h) => h.buckets.reduce((a, [, c]) => a + c, 0)

/** Runs `body` with a list to put started nodes in; every node is killed at the end. */
async function withNodes(body) {
  const nodes = []
  try {
    await body((s) => {
      const n = new Node(s)
      nodes.push(n)
      return n
    })
  } finally {
    for (const n of nodes) n.kill()
  }
}

async function stream(sinkKind, sourceKind, bind) {
  const count = 1000
  // A PUB drops beyond its high-water mark: room for the whole stream.
  const options = { sndhwm: 10 * count, rcvhwm: 10 * count }
  await withNodes(async (start) => {
    const sink = start(spec("rx", "sink", sinkKind, { bind: [bind], options }))
    const ep = (await sink.expect("ready")).endpoints[0]
    assert.ok(!ep.endsWith("*"), ep)
    const subscriptions = sourceKind === "PUB" || sourceKind === "XPUB" ? 1 : 0
    const source = start(spec("tx", "source", sourceKind, { connect: [ep], options, subscriptions }))
    await source.expect("ready")
    sink.tell("start")
    source.tell("start")
    const sent = await source.expect("sent")
    assert.ok(sent.first_send_ns <= sent.last_send_ns)
    const rx = (await sink.expect("report")).report
    source.tell("stop")
    const tx = (await source.expect("report")).report
    assert.deepEqual([await sink.finish(), await source.finish()], [0, 0])
    assert.equal(tx.send.messages, count)
    assert.equal(rx.delivered.messages, count)
    assert.deepEqual(covered(rx.ledger.runs["7"]), range(count))
    // Every 16th message is stamped, and the last one.
    assert.equal(histogramCount(rx.latency), Math.ceil(count / 16) + 1)
    assert.equal(rx.stream_latency[0][0], 7)
    assert.equal(rx.cut_short, undefined)
    assert.equal(rx.usage.placement, "foreign")
  })
}

test("push -> pull over tcp", () => stream("PULL", "PUSH", "tcp://127.0.0.1:*"))
test("pub -> sub over tcp", () => stream("SUB", "PUB", "tcp://127.0.0.1:*"))
test("xpub -> xsub over tcp", () => stream("XSUB", "XPUB", "tcp://127.0.0.1:*"))
test("push -> pull over ipc", async () => {
  const dir = mkdtempSync(join(tmpdir(), "zmqperf-node-peer-"))
  try {
    await stream("PULL", "PUSH", `ipc://${dir}/peer.sock`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

async function roundTrips(echoKind, pingKind, delimiter = false) {
  const count = 500
  const warmup = 10
  await withNodes(async (start) => {
    const echo = start(spec("srv", "echo", echoKind, { bind: ["tcp://127.0.0.1:*"], expect: count + warmup }))
    const ep = (await echo.expect("ready")).endpoints[0]
    const ping = start(spec("cli", "ping", pingKind, { connect: [ep], count, warmup, delimiter }))
    await ping.expect("ready")
    echo.tell("start")
    ping.tell("start")
    await ping.expect("sent")
    const cli = (await ping.expect("report")).report
    const srv = (await echo.expect("report")).report
    assert.deepEqual([await ping.finish(), await echo.finish()], [0, 0])
    assert.equal(cli.round_trips.messages, count)
    assert.equal(histogramCount(cli.latency), count)
    assert.ok(Math.min(...cli.latency.buckets.map(([v]) => v)) > 0)
    assert.equal(srv.round_trips.messages, count + warmup)
  })
}

test("req -> rep over tcp", () => roundTrips("REP", "REQ"))
test("dealer -> router over tcp", () => roundTrips("ROUTER", "DEALER"))
test("dealer -> rep with the delimiter", () => roundTrips("REP", "DEALER", true))

test("pub -> swarm over tcp", async () => {
  const subs = 20
  const count = 200
  await withNodes(async (start) => {
    const source = start(
      spec("pub", "source", "PUB", { bind: ["tcp://127.0.0.1:*"], count, warmup: 0, subscriptions: subs, stamp_every: 1, options: { sndhwm: 10 * count } }),
    )
    const ep = (await source.expect("ready")).endpoints[0]
    const swarm = start({
      ...spec("subs", "swarm", "SUB", { connect: [ep] }),
      swarm: { process: 3, subs, first_timeout_ms: 5000, idle_ms: 2000, expect: count },
    })
    await swarm.expect("ready")
    swarm.tell("start")
    source.tell("start")
    await source.expect("sent")
    await swarm.expect("sent")
    swarm.tell("stop")
    const rep = (await swarm.expect("report")).report
    source.tell("stop")
    await source.expect("report")
    assert.deepEqual([await swarm.finish(), await source.finish()], [0, 0])
    const sw = rep.swarm
    assert.deepEqual([sw.process, sw.stop, sw.subscribers.length], [3, "all-ended", subs])
    for (const sub of sw.subscribers) {
      assert.deepEqual(covered(sub.runs), range(count))
      assert.deepEqual([sub.end_seq, sub.stream_id], [count - 1, 7])
      assert.equal(histogramCount(sub.latency), count)
    }
    assert.equal(histogramCount(rep.latency), subs * count)
  })
})

test("a swarm with nothing arriving ends and says so", async () => {
  await withNodes(async (start) => {
    // A port nobody listens on: the subscribers keep trying, nothing arrives.
    const swarm = start({
      ...spec("subs", "swarm", "SUB", { connect: ["tcp://127.0.0.1:1"] }),
      swarm: { process: 0, subs: 3, first_timeout_ms: 300, idle_ms: 300, expect: null },
    })
    await swarm.expect("ready")
    swarm.tell("start")
    await swarm.expect("sent")
    swarm.tell("stop")
    const sw = (await swarm.expect("report")).report.swarm
    assert.equal(await swarm.finish(), 0)
    assert.equal(sw.stop, "nothing-arrived")
    assert.deepEqual(sw.subscribers.map((s) => s.runs), [[], [], []])
  })
})

test("refuses what it does not play", async () => {
  await withNodes(async (start) => {
    const node = start(spec("rx", "sink", "PULL", { bind: ["tcp://127.0.0.1:*"], options: { conflate: true } }))
    const err = await node.expect("error")
    assert.equal(await node.finish(), 3)
    assert.equal(err.exit_code, 3)
    assert.match(err.message, /conflate/)
  })
})

test("refuses xpub_nodrop, naming why", async () => {
  await withNodes(async (start) => {
    const node = start(spec("tx", "source", "XPUB", { bind: ["tcp://127.0.0.1:*"], options: { xpub_nodrop: true }, subscriptions: 1 }))
    const err = await node.expect("error")
    assert.deepEqual([await node.finish(), err.exit_code], [3, 3])
    assert.match(err.message, /xpub_nodrop.*stalls/)
  })
})

test("no start is an error", async () => {
  await withNodes(async (start) => {
    const node = start(spec("rx", "sink", "PULL", { bind: ["tcp://127.0.0.1:*"], timeout_ms: 300 }))
    await node.expect("ready")
    const err = await node.expect("error")
    assert.deepEqual([await node.finish(), err.exit_code], [9, 9])
    assert.match(err.message, /no start signal/)
  })
})
