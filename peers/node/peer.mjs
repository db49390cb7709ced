#!/usr/bin/env node
// zmqperf peer on the zeromq v6 npm package: plays one node of a topology (source, sink,
// ping, echo, swarm). The node spec is the last argument (JSON); control lines come on
// stdin and go to stdout (docs/control-protocol.md, docs/peers.md); measured messages
// carry the 24-byte header (docs/wire-format.md), its u64 fields as BigInt.
//
//   node peer.mjs [--cache DIR] '<node spec>'     DIR holds node_modules/zeromq
//   node peer.mjs [--cache DIR] --version

import { createRequire } from "node:module"
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import readline from "node:readline"

export const HEADER_LEN = 24
export const TIMESTAMP = 0x01
export const END = 0x02
export const WARMUP = 0x04
const RESERVED = 0xf8
// A passive role looks for the runner's stop this often while nothing arrives, ms.
const STOP_POLL_MS = 100
// After the stop, a sink ends once this long passes without a message: a TCP stream held up
// for a delayed acknowledgement (up to 200 ms on Linux) is late, not lost.
const DRAIN_NS = 1_000_000_000n
// A swarm holds its sockets at most this long after its measurement, waiting for stop, ms.
const RELEASE_TIMEOUT_MS = 60_000

const now = process.hrtime.bigint

const ROLE_SOCKETS = {
  source: ["PUB", "XPUB", "PUSH", "PAIR", "DEALER"],
  sink: ["SUB", "XSUB", "PULL", "PAIR", "DEALER", "ROUTER"],
  ping: ["REQ", "DEALER", "PAIR"],
  echo: ["REP", "ROUTER", "DEALER", "PAIR"],
  swarm: ["SUB"],
}
const OPTIONS = ["sndhwm", "rcvhwm", "linger", "subscribe", "routing_id", "xpub_nodrop", "xpub_verbose"]
// Node spec fields that ask for something this peer does not play, with their unset value.
const UNPLAYED = { frames: [], log_levels: [], eot: null, ticks: null, io: "blocking" }
const LEGACY_ROLE = { ping: "client", echo: "server", source: "sender", sink: "receiver", swarm: "receiver" }

let zmq

/** A failure the runner is told about: its message and the exit code. */
class PeerError extends Error {
  constructor(message, exitCode) {
    super(message)
    this.exitCode = exitCode
  }
}

/** A header that must be refused: `kind` is unsupported-version or reserved-flags. */
export class HeaderError extends Error {
  constructor(kind, message) {
    super(message)
    this.kind = kind
  }
}

/** The header at the start of `buf`, or null when the message carries none. */
export function decode(buf) {
  if (buf.length < HEADER_LEN || buf[0] !== 0x5a || buf[1] !== 0x50) return null
  if (buf[2] !== 1) {
    throw new HeaderError("unsupported-version", `header version ${buf[2]} is not supported (this peer reads version 1)`)
  }
  const flags = buf[3]
  if (flags & RESERVED) {
    throw new HeaderError("reserved-flags", `header flags 0x${flags.toString(16)} set reserved bits`)
  }
  return { flags, streamId: buf.readUInt32LE(4), sequence: buf.readBigUInt64LE(8), sendNs: buf.readBigUInt64LE(16) }
}

/** Writes a header into the first 24 bytes of `buf` (sequence and sendNs are BigInt). */
export function encodeInto(buf, flags, streamId, sequence, sendNs) {
  buf[0] = 0x5a
  buf[1] = 0x50
  buf[2] = 1
  buf[3] = flags
  buf.writeUInt32LE(streamId, 4)
  buf.writeBigUInt64LE(sequence, 8)
  buf.writeBigUInt64LE(sendNs, 16)
  return buf
}

/** `value` (ns, a Number) kept to 3 significant digits, as the runner's histogram. */
export function round3(value) {
  if (value < 1000) return value
  let unit = 1
  while (value >= 1000 * unit) unit *= 10
  return value - (value % unit)
}

function record(hist, ns) {
  const key = round3(ns)
  hist.set(key, (hist.get(key) ?? 0) + 1)
}

/** Latency from a send time to `at` (both BigInt), as a Number of ns. */
function since(sendNs, at) {
  return at > sendNs ? Number(at - sendNs) : 0
}

function buckets(hist) {
  return { buckets: [...hist].sort((a, b) => a[0] - b[0]) }
}

function merge(into, hist) {
  for (const [v, c] of hist) into.set(v, (into.get(v) ?? 0) + c)
  return into
}

function span(messages, size, startNs, endNs) {
  return { messages, payload_bytes: messages * size, start_ns: startNs, end_ns: endNs }
}

/** JSON with BigInt written as plain numbers. */
function toJson(value) {
  return JSON.stringify(value, (_, v) => (typeof v === "bigint" ? `@big:${v}` : v)).replace(/"@big:(\d+)"/g, "$1")
}

function usage(role) {
  const cpu = process.cpuUsage()
  const hwm = /VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))
  return {
    role: LEGACY_ROLE[role] ?? role,
    placement: "foreign",
    cpu_user_ms: cpu.user / 1000,
    cpu_sys_ms: cpu.system / 1000,
    peak_rss_kib: hwm ? Number(hwm[1]) : 0,
  }
}

/** The runner's lines on stdin and ours on stdout. */
class Control {
  constructor() {
    this.stopped = false
    this.pending = []
    this.waiters = []
    this.stopWaiters = []
    const rl = readline.createInterface({ input: process.stdin })
    rl.on("line", (line) => {
      let type = null
      try {
        const msg = JSON.parse(line)
        if (msg && typeof msg === "object") type = msg.type
      } catch {}
      if (type === "stop") this.stop()
      this.deliver(type ?? "invalid")
    })
    // The end of stdin is a stop.
    rl.on("close", () => {
      this.stop()
      this.deliver("eof")
    })
  }

  deliver(type) {
    const w = this.waiters.shift()
    if (w) w(type)
    else this.pending.push(type)
  }

  stop() {
    this.stopped = true
    for (const w of this.stopWaiters.splice(0)) w()
  }

  /** Writes one line; resolves once it is handed to the pipe (a long report may not fit
   * the pipe at once, and the process must not exit before). */
  say(type, fields = {}) {
    return new Promise((resolve) => process.stdout.write(toJson({ type, v: 1, ...fields }) + "\n", resolve))
  }

  async waitStart(timeoutMs) {
    const type = this.pending.length
      ? this.pending.shift()
      : await new Promise((resolve) => {
          const timer = setTimeout(() => {
            this.waiters.splice(this.waiters.indexOf(got), 1)
            resolve("eof")
          }, timeoutMs)
          const got = (t) => {
            clearTimeout(timer)
            resolve(t)
          }
          this.waiters.push(got)
        })
    if (type === "eof") throw new PeerError("protocol error: no start signal from the runner", 9)
    if (type !== "start") throw new PeerError(`protocol error: expected start, got a line of type ${type}`, 9)
  }

  /** Resolves on the runner's stop (or the end of stdin), or after `timeoutMs`. */
  waitStop(timeoutMs) {
    if (this.stopped) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs)
      this.stopWaiters.push(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }
}

function checkSpec(spec) {
  const role = spec.role
  const name = spec.name
  if (!ROLE_SOCKETS[role]) {
    throw new PeerError(`node ${name}: role ${role} is not played by the node peer (it plays ${Object.keys(ROLE_SOCKETS).join(", ")})`, 3)
  }
  if (spec.sockets.length !== 1) {
    throw new PeerError(`node ${name}: the node peer plays nodes of one socket, this one has ${spec.sockets.length}`, 3)
  }
  const plan = spec.sockets[0]
  if (!ROLE_SOCKETS[role].includes(plan.kind)) {
    throw new PeerError(`node ${name}: a ${role} on ${plan.kind} is not played by the node peer (a ${role} uses ${ROLE_SOCKETS[role].join(", ")})`, 3)
  }
  for (const [key, value] of Object.entries(plan.options ?? {})) {
    if (value !== null && !OPTIONS.includes(key)) {
      throw new PeerError(`node ${name}: socket option ${key} is not played by the node peer (it plays ${OPTIONS.join(", ")})`, 3)
    }
  }
  if (plan.options?.xpub_nodrop) {
    // Measured with zeromq 6.8.0 (libzmq 4.3.5), even within one process: an XPUB with
    // NODROP stops at its high-water mark and its send never resumes, so the node peer
    // cannot block at the mark as the option asks.
    throw new PeerError(
      `node ${name}: socket option xpub_nodrop is not played by the node peer: with zeromq.js a NODROP publisher stalls for good at its high-water mark (its send never resumes); use a PUB that drops (pattern pubsub-lossy) or another implementation`,
      3,
    )
  }
  for (const [key, unset] of Object.entries(UNPLAYED)) {
    const v = spec[key]
    if (v !== undefined && v !== null && JSON.stringify(v) !== JSON.stringify(unset)) {
      throw new PeerError(`node ${name}: ${key} = ${JSON.stringify(v)} is not played by the node peer; leave it unset`, 3)
    }
  }
  for (const ep of [...plan.bind, ...plan.connect]) {
    if (!ep.startsWith("tcp://") && !ep.startsWith("ipc://")) {
      throw new PeerError(`node ${name}: endpoint ${ep} is not played by the node peer (tcp:// and ipc:// only)`, 3)
    }
  }
}

const CLASSES = () => ({
  PUB: zmq.Publisher,
  XPUB: zmq.XPublisher,
  SUB: zmq.Subscriber,
  XSUB: zmq.XSubscriber,
  PUSH: zmq.Push,
  PULL: zmq.Pull,
  REQ: zmq.Request,
  REP: zmq.Reply,
  DEALER: zmq.Dealer,
  ROUTER: zmq.Router,
  PAIR: zmq.Pair,
})

/** A socket of `kind` with the topology's options (and `extra` zeromq.js options). */
function makeSocket(kind, options, linger, extra = {}) {
  const o = options ?? {}
  const sock = new (CLASSES()[kind])({ linger: o.linger ?? linger, ...extra })
  // zeromq.js has an option only on the sockets it applies to (no sndhwm on a PULL).
  if (o.sndhwm != null && "sendHighWaterMark" in sock) sock.sendHighWaterMark = o.sndhwm
  if (o.rcvhwm != null && "receiveHighWaterMark" in sock) sock.receiveHighWaterMark = o.rcvhwm
  if (o.routing_id != null) {
    if (!("routingId" in sock)) throw new PeerError(`socket option routing_id does not apply to a ${kind} socket`, 3)
    sock.routingId = o.routing_id
  }
  if (o.xpub_nodrop != null && "noDrop" in sock) sock.noDrop = o.xpub_nodrop
  if (o.xpub_verbose != null) {
    if (kind !== "XPUB") throw new PeerError(`socket option xpub_verbose is played by the node peer on XPUB only, not ${kind}`, 3)
    sock.verbosity = o.xpub_verbose ? "allSubs" : null
  }
  if (kind === "SUB") {
    const prefixes = o.subscribe?.length ? o.subscribe : [""]
    for (const p of prefixes) sock.subscribe(p)
  }
  return sock
}

/** Binds and connects; returns the endpoints bound, wildcards resolved. */
async function attach(sock, plan, name) {
  const bound = []
  for (const ep of plan.bind) {
    try {
      await sock.bind(ep)
    } catch (e) {
      throw new PeerError(`node ${name}: cannot bind ${ep} (${e.message}); choose a free port or path`, e.code === "EADDRINUSE" ? 5 : 4)
    }
    bound.push(sock.lastEndpoint)
  }
  for (const ep of plan.connect) {
    try {
      sock.connect(ep)
    } catch (e) {
      throw new PeerError(`node ${name}: cannot connect to ${ep} (${e.message}); check the endpoint`, 4)
    }
  }
  return bound
}

/** The node's one socket, bound and connected (a source waiting for subscriptions on PUB
 * gets an XPUB that passes every subscription on). */
async function openSocket(spec, linger = 0) {
  const plan = spec.sockets[0]
  let kind = plan.kind
  const extra = {}
  if (spec.role === "source" && (spec.subscriptions ?? 0) > 0 && (kind === "PUB" || kind === "XPUB")) {
    kind = "XPUB"
    extra.verbosity = "allSubs"
  }
  const sock = makeSocket(kind, plan.options, linger)
  Object.assign(sock, extra)
  const bound = await attach(sock, plan, spec.name)
  if (kind === "XSUB") {
    const prefixes = plan.options?.subscribe?.length ? plan.options.subscribe : [""]
    for (const p of prefixes) await sock.send(Buffer.concat([Buffer.from([1]), Buffer.from(p)]))
  }
  return { sock, bound, kind }
}

const where = (spec) => [...spec.sockets[0].bind, ...spec.sockets[0].connect][0] ?? "?"
const timedOut = (e) => e?.code === "EAGAIN"

function waitUntil(due) {
  const left = Number(due - now())
  if (left > 2_000_000) {
    return new Promise((resolve) => setTimeout(resolve, (left - 1_000_000) / 1e6)).then(() => waitUntil(due))
  }
  while (now() < due);
  return null
}

async function runSource(spec, ctl) {
  const timeoutMs = spec.timeout_ms
  const { sock, bound, kind } = await openSocket(spec)
  sock.sendTimeout = timeoutMs
  if (kind === "XPUB") sock.receiveTimeout = timeoutMs
  ctl.say("ready", { endpoints: bound })
  await ctl.waitStart(timeoutMs)
  const report = { latency: null, send_delay: null, send: null, delivered: null, ledger: null }
  const subscriptions = kind === "XPUB" ? (spec.subscriptions ?? 0) : 0
  if (subscriptions > 0) {
    const t = now()
    for (let got = 0; got < subscriptions; got++) {
      try {
        await sock.receive()
      } catch (e) {
        if (!timedOut(e)) throw e
        throw new PeerError(`${got} of ${subscriptions} subscriptions arrived within ${timeoutMs} ms on ${where(spec)}`, 4)
      }
    }
    report.subscription_wait_ns = now() - t
  }
  const { size, count, warmup } = spec
  const stream = spec.stream_id ?? 0
  const header = size >= HEADER_LEN
  // zeromq.js sends messages over 128 B without copying: every message is its own buffer.
  const send = async (flags, seq, stamp, what) => {
    const buf = Buffer.alloc(size)
    if (header) encodeInto(buf, flags, stream, seq, stamp)
    try {
      await sock.send(buf)
    } catch (e) {
      if (!timedOut(e)) throw e
      throw new PeerError(`${what} ${seq} could not be sent within ${timeoutMs} ms on ${where(spec)}: the receiver stopped taking messages`, 4)
    }
  }
  for (let i = 0n; i < BigInt(warmup); i++) await send(WARMUP, i, 0n, "warm-up message")
  const interval = spec.rate ? 1e9 / spec.rate : null
  const every = Math.max(spec.stamp_every ?? 1, 1)
  const last = count - 1
  const delay = new Map()
  const start = now()
  for (let i = 0; i < count; i++) {
    let flags = 0
    let stamp = 0n
    if (interval !== null) {
      const due = start + BigInt(Math.floor(i * interval))
      const sleeping = waitUntil(due)
      if (sleeping) await sleeping
      record(delay, since(due, now()))
      flags = TIMESTAMP
      stamp = due
    } else if (i % every === 0 || i === last) {
      flags = TIMESTAMP
      stamp = now()
    }
    await send(flags | (i === last ? END : 0), BigInt(i), stamp, "message")
  }
  const end = now()
  ctl.say("sent", { first_send_ns: start, last_send_ns: end })
  // The measured stream is out; the socket stays until the runner's stop (wait-for-stop).
  await ctl.waitStop(timeoutMs)
  sock.linger = 0
  sock.close()
  return Object.assign(report, {
    send: span(count, size, start, end),
    send_delay: interval !== null ? buckets(delay) : null,
    header,
    closed_ns: now(),
  })
}

async function runSink(spec, ctl) {
  const { sock, bound, kind } = await openSocket(spec)
  sock.receiveTimeout = STOP_POLL_MS
  ctl.say("ready", { endpoints: bound })
  const timeoutMs = spec.timeout_ms
  await ctl.waitStart(timeoutMs)
  const streams = new Map((spec.streams ?? []).map(([id, n]) => [id, n]))
  const total = [...streams.values()].reduce((a, b) => a + b, 0)
  const endsItself = spec.ends_itself ?? true
  const size = spec.size
  const header = size >= HEADER_LEN
  const routed = kind === "ROUTER"
  // Per stream: its runs, the run being extended (with its next sequence), its latency.
  const runs = new Map()
  const tails = new Map()
  const hists = new Map()
  const skip = spec.warmup * streams.size
  let ends = 0
  let received = 0
  let seen = 0
  let start = 0n
  let lastRead = 0n
  // When the current quiet spell began (the start of the first receive that timed out).
  let quietSince = null
  let idleMs = 0
  let stopping = false
  let cutShort = null
  for (;;) {
    let frames
    try {
      frames = await sock.receive()
    } catch (e) {
      if (!timedOut(e)) throw e
      quietSince ??= now() - BigInt(STOP_POLL_MS * 1_000_000)
      if (stopping) {
        if (now() - quietSince < DRAIN_NS) continue
        if (endsItself && ends < streams.size) {
          cutShort = `the end of the stream never came: ${received} of ${total} messages arrived before the senders finished and the queue ran dry`
        }
        break
      }
      if (ctl.stopped) {
        stopping = true
        continue
      }
      idleMs += STOP_POLL_MS
      if (idleMs < timeoutMs) continue
      if (received === 0 && endsItself) {
        throw new PeerError(`no message arrived within ${timeoutMs} ms on ${where(spec)} (0 of ${total} messages)`, 4)
      }
      cutShort = `nothing arrived for ${(idleMs / 1000).toFixed(1)} s after ${received} of ${total} messages`
      break
    }
    idleMs = 0
    quietSince = null
    const buf = routed ? frames[frames.length - 1] : frames[0]
    if (!header) {
      // No room for the header: count only, as libzmq's local_thr.
      if (++seen <= skip) continue
      lastRead = now()
      if (received === 0) start = lastRead
      if (++received === total && endsItself) break
      continue
    }
    let h
    try {
      h = decode(buf)
    } catch (e) {
      throw new PeerError(`protocol error: ${e.message}`, 9)
    }
    if (h === null) {
      throw new PeerError(`protocol error: a message of ${buf.length} B without the measurement header after ${received} messages`, 9)
    }
    if (h.flags & WARMUP) continue
    const stamped = h.flags & TIMESTAMP
    let tail = tails.get(h.streamId)
    const extends_ = tail !== undefined && tail.next === h.sequence
    // The clock is read where a figure needs it: the first message, a stamped one, a new run.
    let at = 0n
    if (stamped || received === 0 || !extends_) at = lastRead = now()
    if (received === 0) start = at
    received++
    if (extends_) {
      tail.run[1]++
      tail.next++
    } else {
      tail = { run: [h.sequence, 1, at], next: h.sequence + 1n }
      tails.set(h.streamId, tail)
      if (!runs.has(h.streamId)) runs.set(h.streamId, [])
      runs.get(h.streamId).push(tail.run)
    }
    if (stamped) {
      let hist = hists.get(h.streamId)
      if (hist === undefined) hists.set(h.streamId, (hist = new Map()))
      record(hist, since(h.sendNs, at))
    }
    if (h.flags & END && ++ends >= streams.size && endsItself) {
      lastRead = now()
      break
    }
  }
  // The span ends at the last arrival; after a quiet spell, where the spell began.
  let end = start
  if (received > 0) {
    end = lastRead
    if (quietSince !== null && quietSince > end) end = quietSince
  }
  const everything = new Map()
  for (const hist of hists.values()) merge(everything, hist)
  const report = {
    latency: header ? buckets(everything) : null,
    send_delay: null,
    send: null,
    delivered: span(received, size, start, end),
    ledger: header ? { runs: Object.fromEntries([...runs].map(([id, r]) => [String(id), r])) } : null,
    header,
  }
  if (header) report.stream_latency = [...streams.keys()].map((id) => [id, buckets(hists.get(id) ?? new Map())])
  if (cutShort) report.cut_short = cutShort
  sock.close()
  return report
}

async function runPing(spec, ctl) {
  const timeoutMs = spec.timeout_ms
  const { sock, bound } = await openSocket(spec)
  sock.sendTimeout = timeoutMs
  sock.receiveTimeout = timeoutMs
  ctl.say("ready", { endpoints: bound })
  await ctl.waitStart(timeoutMs)
  const { size, count, warmup } = spec
  if (size < HEADER_LEN) {
    throw new PeerError(`node ${spec.name}: a ping needs messages of at least ${HEADER_LEN} B for the header, got size ${size}`, 3)
  }
  const stream = spec.stream_id ?? 0
  const delimiter = spec.delimiter ?? false
  const empty = Buffer.alloc(0)
  const hist = new Map()
  // Without a warm-up, the first round trip carries the connection's handshake: it is left
  // out of the distribution, as zmqperf's own ping does.
  const skipFirst = warmup === 0 && count > 1
  let start = now()
  for (let i = 0; i < warmup + count; i++) {
    if (i === warmup) start = now()
    const buf = Buffer.alloc(size)
    const t0 = now()
    encodeInto(buf, TIMESTAMP | (i < warmup ? WARMUP : 0), stream, BigInt(i), t0)
    let reply
    try {
      await sock.send(delimiter ? [empty, buf] : buf)
      const frames = await sock.receive()
      reply = frames[frames.length - 1]
    } catch (e) {
      if (!timedOut(e)) throw e
      throw new PeerError(`no reply to request ${i} within ${timeoutMs} ms from ${where(spec)}`, 4)
    }
    const t1 = now()
    let h
    try {
      h = decode(reply)
    } catch (e) {
      throw new PeerError(`protocol error: reply ${i}: ${e.message}`, 9)
    }
    if (h === null || h.sequence !== BigInt(i)) {
      const got = h === null ? "no header" : `sequence ${h.sequence}`
      throw new PeerError(`protocol error: reply ${i} carries ${got}; the echo side answered out of order`, 9)
    }
    if (i >= warmup && !(i === 0 && skipFirst)) record(hist, Number(t1 - t0) / 2)
  }
  const end = now()
  ctl.say("sent")
  sock.close()
  return {
    latency: buckets(hist),
    send_delay: null,
    send: null,
    delivered: null,
    ledger: null,
    round_trips: span(count, size, start, end),
    header: true,
  }
}

async function runEcho(spec, ctl) {
  const timeoutMs = spec.timeout_ms
  // The last reply may still be queued when the echo ends: closing waits for it, bounded.
  const { sock, bound } = await openSocket(spec, timeoutMs)
  sock.receiveTimeout = STOP_POLL_MS
  sock.sendTimeout = timeoutMs
  ctl.say("ready", { endpoints: bound })
  await ctl.waitStart(timeoutMs)
  const endsItself = spec.ends_itself ?? true
  const expect = spec.expect ?? 0
  let done = 0
  let start = 0n
  let idleMs = 0
  let cutShort = null
  while (!(endsItself && done === expect)) {
    let frames
    try {
      frames = await sock.receive()
    } catch (e) {
      if (!timedOut(e)) throw e
      if (ctl.stopped) break
      idleMs += STOP_POLL_MS
      if (idleMs < timeoutMs) continue
      if (done === 0) throw new PeerError(`no request arrived within ${timeoutMs} ms on ${where(spec)}`, 4)
      cutShort = `idle: no request for ${(idleMs / 1000).toFixed(1)} s after ${done} round trips`
      break
    }
    idleMs = 0
    if (done === 0) start = now()
    try {
      await sock.send(frames)
    } catch (e) {
      if (!timedOut(e)) throw e
      throw new PeerError(`reply ${done} could not be sent within ${timeoutMs} ms on ${where(spec)}`, 4)
    }
    done++
  }
  const end = now()
  sock.close()
  const report = {
    latency: null,
    send_delay: null,
    send: null,
    delivered: null,
    ledger: null,
    round_trips: span(done, spec.size, start, end),
    header: false,
  }
  if (cutShort) report.cut_short = cutShort
  return report
}

/** What one SUB socket of a swarm received. */
class Subscriber {
  constructor(index) {
    this.index = index
    this.runs = []
    this.tail = null
    this.next = 0n
    this.warmup = 0
    this.endSeq = null
    this.streamId = null
    this.latency = new Map()
    this.firstSendNs = null
    this.lastRecvNs = 0n
  }

  /** Records one message received `at`; true once the stream has ended. */
  take(buf, at) {
    let h
    try {
      h = decode(buf)
    } catch (e) {
      throw new PeerError(`protocol error: subscriber ${this.index}: ${e.message}`, 9)
    }
    if (h === null) {
      throw new PeerError(`protocol error: subscriber ${this.index} got a message of ${buf.length} B without the measurement header`, 9)
    }
    if (this.streamId === null) this.streamId = h.streamId
    else if (h.streamId !== this.streamId) {
      throw new PeerError(`protocol error: subscriber ${this.index} got messages of two streams (ids ${this.streamId} and ${h.streamId}): two publishers on one endpoint?`, 9)
    }
    if (h.flags & WARMUP) {
      this.warmup++
      return false
    }
    if (this.tail !== null && this.next === h.sequence) {
      this.tail[1]++
    } else {
      this.tail = [h.sequence, 1, at]
      this.runs.push(this.tail)
    }
    this.next = h.sequence + 1n
    this.lastRecvNs = at
    if (h.flags & TIMESTAMP) {
      this.firstSendNs ??= h.sendNs
      record(this.latency, since(h.sendNs, at))
    }
    if (h.flags & END) {
      this.endSeq = h.sequence
      return true
    }
    return false
  }

  compact() {
    return {
      runs: this.runs,
      warmup: this.warmup,
      end_seq: this.endSeq,
      stream_id: this.streamId,
      latency: buckets(this.latency),
      first_send_ns: this.firstSendNs,
      last_recv_ns: this.lastRecvNs,
    }
  }
}

async function runSwarm(spec, ctl) {
  const sw = spec.swarm
  if (!sw) throw new PeerError(`node ${spec.name}: a swarm without its swarm settings`, 2)
  if (sw.raw) throw new PeerError(`node ${spec.name}: the raw-socket swarm is not played by the node peer`, 3)
  const n = sw.subs
  const plan = spec.sockets[0]
  const context = new zmq.Context({ maxSockets: n + 64 })
  const t0 = now()
  const socks = []
  for (let i = 0; i < n; i++) {
    try {
      const sock = makeSocket("SUB", plan.options, 0, { context })
      await attach(sock, plan, spec.name)
      socks.push(sock)
    } catch (e) {
      if (e.code !== "EMFILE") throw e
      throw new PeerError(`opening subscriber ${i} of ${n}: too many open files; raise the limit (ulimit -n) or use fewer subscribers per process`, 3)
    }
  }
  const connectNs = now() - t0
  ctl.say("ready", { endpoints: [] })
  await ctl.waitStart(sw.first_timeout_ms)

  const subs = socks.map((_, i) => new Subscriber(i))
  let open = n
  let lastActivity = null
  let measuring = true
  let finish
  const over = new Promise((resolve) => (finish = resolve))
  // One receive loop per socket, all awaiting at once; a loop parked when the measurement
  // ends finishes when its socket is closed.
  const loops = socks.map(async (sock, i) => {
    const sub = subs[i]
    for await (const [msg] of sock) {
      if (!measuring) return
      lastActivity = now()
      if (sub.take(msg, lastActivity)) {
        // Done; the socket stays open until the runner's stop.
        if (--open === 0) finish("all-ended")
        return
      }
    }
  })
  const failed = Promise.all(loops).then(
    () => null,
    (e) => e,
  )
  failed.then((e) => e && finish(e))
  const firstDeadline = now() + BigInt(sw.first_timeout_ms) * 1_000_000n
  const idleNs = BigInt(sw.idle_ms) * 1_000_000n
  const watch = setInterval(() => {
    const t = now()
    if (ctl.stopped) finish("parent-gone")
    else if (lastActivity === null && t >= firstDeadline) finish("nothing-arrived")
    else if (lastActivity !== null && t - lastActivity >= idleNs) finish("idle")
  }, 20)
  const stop = await over
  clearInterval(watch)
  measuring = false
  if (stop instanceof Error) throw stop
  ctl.say("sent")
  // Closing now could slow the delivery to swarms still receiving: wait for stop.
  if (stop !== "parent-gone") await ctl.waitStop(RELEASE_TIMEOUT_MS)
  for (const sock of socks) sock.close()
  const failure = await failed
  if (failure) throw failure
  const everything = new Map()
  for (const sub of subs) merge(everything, sub.latency)
  return {
    latency: buckets(everything),
    send_delay: null,
    send: null,
    delivered: null,
    ledger: null,
    header: true,
    swarm: {
      process: sw.process ?? 0,
      pid: process.pid,
      stop,
      connect_ns: connectNs,
      subscribers: subs.map((s) => s.compact()),
    },
  }
}

const ROLES = { source: runSource, sink: runSink, ping: runPing, echo: runEcho, swarm: runSwarm }

/** A require that finds packages in `--cache DIR` (its node_modules), else the usual places. */
function requireFrom(args) {
  const i = args.indexOf("--cache")
  return createRequire(i >= 0 ? resolve(args[i + 1], "package.json") : import.meta.url)
}

async function main(args) {
  const ctl = args.includes("--version") ? null : new Control()
  try {
    const req = requireFrom(args)
    try {
      zmq = req("zeromq")
    } catch (e) {
      throw new PeerError(`the zeromq package cannot be loaded (${e.message}): run \`zmqperf peers setup node\``, 3)
    }
    if (!ctl) {
      const pkg = JSON.parse(readFileSync(req.resolve("zeromq/package.json"), "utf8"))
      console.log(JSON.stringify({ binding: `zeromq ${pkg.version}`, engine: `libzmq ${zmq.version}` }))
      return 0
    }
    let spec
    try {
      spec = JSON.parse(args[args.length - 1])
      checkSpec(spec)
    } catch (e) {
      if (e instanceof PeerError) throw e
      throw new PeerError(`bad node spec: ${e.message}`, 2)
    }
    const report = await ROLES[spec.role](spec, ctl)
    report.usage = usage(spec.role)
    await ctl.say("report", { report })
    return 0
  } catch (e) {
    const code = e instanceof PeerError ? e.exitCode : 10
    const message = e instanceof PeerError ? e.message : `zmq error: ${e.message}`
    if (ctl) await ctl.say("error", { message, exit_code: code })
    else console.error(message)
    return code
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then((code) => process.exit(code))
}
