package peer

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrInterrupted is what Socket.Recv returns once Interrupt was called.
var ErrInterrupted = errors.New("receive interrupted")

// Options are the socket options a peer sets (docs/peers.md); nil means not given.
type Options struct {
	SndHWM    *int     `json:"sndhwm"`
	RcvHWM    *int     `json:"rcvhwm"`
	Linger    *int     `json:"linger"`
	Subscribe []string `json:"subscribe"`
	RoutingID *string  `json:"routing_id"`
	// XPubNoDrop: an XPUB blocks at its high-water mark instead of dropping.
	XPubNoDrop *bool `json:"xpub_nodrop"`
	// XPubVerbose: open the socket as XPUB and see every subscription (a PUB source that
	// waits for its subscribers).
	XPubVerbose bool `json:"-"`
}

// Socket is what a role needs of a binding's socket. Only Interrupt may be called from
// another goroutine.
type Socket interface {
	// Bind binds and returns the endpoint actually bound (a wildcard port resolved).
	Bind(endpoint string) (string, error)
	Connect(endpoint string) error
	// Send sends one frame, more frames of the same message following when more is set;
	// it fails when the message cannot leave within the node's timeout.
	Send(frame []byte, more bool) error
	// Recv returns the frames of the next message; it blocks until one comes or until
	// Interrupt is called (then ErrInterrupted).
	Recv() ([][]byte, error)
	Interrupt()
	// AwaitSubscriptions returns once n subscriptions reached an XPUB, or fails after timeout.
	AwaitSubscriptions(n int, timeout time.Duration) error
	// Close closes the socket, giving what is still queued up to linger to leave.
	Close(linger time.Duration) error
}

// Binding opens sockets of one Go ZeroMQ library.
type Binding interface {
	// Name is the peer's name (zmq4-go, zmq4-cgo).
	Name() string
	// Version gives the binding and the engine underneath, for --version.
	Version() (binding, engine string)
	// Open creates a socket of kind (PUB, SUB, ...) with its options; a kind or an option
	// the library cannot honour is an error that says so (wrapped with Refuse).
	Open(kind string, o Options, timeout time.Duration) (Socket, error)
	// KeepsBuffers says whether the library holds a sent frame after Send returns (then
	// every message needs a buffer of its own).
	KeepsBuffers() bool
	// Transports lists the schemes it plays (tcp, ipc).
	Transports() []string
}

// failure is an error with the exit code of docs/peers.md: 2 a spec it cannot read, 3
// something it does not play, 4 a wait that ran out, 9 a protocol error, 10 a call failed.
type failure struct {
	code int
	msg  string
}

func (f *failure) Error() string { return f.msg }

func fail(code int, format string, args ...any) error {
	return &failure{code, fmt.Sprintf(format, args...)}
}

// Refuse marks what a binding does not play (exit 3).
func Refuse(format string, args ...any) error { return fail(3, format, args...) }

// Spec holds the fields of the node spec a peer reads.
type Spec struct {
	Name    string `json:"name"`
	Role    string `json:"role"`
	Sockets []struct {
		Kind    string                     `json:"kind"`
		Bind    []string                   `json:"bind"`
		Connect []string                   `json:"connect"`
		Options map[string]json.RawMessage `json:"options"`
	} `json:"sockets"`
	Size          int         `json:"size"`
	Count         uint64      `json:"count"`
	Warmup        uint64      `json:"warmup"`
	Rate          *float64    `json:"rate"`
	StampEvery    uint64      `json:"stamp_every"`
	TimeoutMs     uint64      `json:"timeout_ms"`
	StreamID      uint32      `json:"stream_id"`
	Streams       [][2]uint64 `json:"streams"`
	EndsItself    bool        `json:"ends_itself"`
	Expect        uint64      `json:"expect"`
	Subscriptions int         `json:"subscriptions"`
	Delimiter     bool        `json:"delimiter"`
	// What a peer never plays; the runner refuses such nodes first, the peer checks again.
	Frames    []int           `json:"frames"`
	LogLevels []string        `json:"log_levels"`
	Eot       *string         `json:"eot"`
	Ticks     json.RawMessage `json:"ticks"`
	Swarm     json.RawMessage `json:"swarm"`
	IO        *string         `json:"io"`
}

var kinds = map[string][]string{
	"source": {"PUB", "XPUB", "PUSH", "PAIR", "DEALER"},
	"sink":   {"SUB", "PULL", "PAIR", "DEALER", "ROUTER"},
	"ping":   {"REQ", "DEALER", "PAIR"},
	"echo":   {"REP", "ROUTER", "DEALER", "PAIR"},
}

func parseSpec(text string, b Binding) (*Spec, Options, error) {
	var s Spec
	var o Options
	d := json.NewDecoder(strings.NewReader(text))
	if err := d.Decode(&s); err != nil {
		return nil, o, fail(2, "bad node spec: %v (expected a NodeSpec as JSON, see docs/peers.md)", err)
	}
	if len(s.Sockets) != 1 {
		return nil, o, fail(2, "bad node spec: %d sockets (a peer plays one)", len(s.Sockets))
	}
	if s.StampEvery == 0 {
		s.StampEvery = 1
	}
	if s.TimeoutMs == 0 {
		s.TimeoutMs = 10_000
	}
	sock := s.Sockets[0]
	allowed, ok := kinds[s.Role]
	if !ok {
		return nil, o, Refuse("the %s peer does not play the role '%s' (it plays source, sink, ping, echo)", b.Name(), s.Role)
	}
	if !contains(allowed, sock.Kind) {
		return nil, o, Refuse("the %s peer plays %s on %s, not on %s", b.Name(), s.Role, strings.Join(allowed, ", "), sock.Kind)
	}
	known := map[string]any{"sndhwm": &o.SndHWM, "rcvhwm": &o.RcvHWM, "linger": &o.Linger, "subscribe": &o.Subscribe,
		"routing_id": &o.RoutingID, "xpub_nodrop": &o.XPubNoDrop}
	for key, raw := range sock.Options {
		target, ok := known[key]
		if !ok {
			if string(raw) != "null" {
				return nil, o, Refuse("the %s peer does not set the socket option '%s' (it sets sndhwm, rcvhwm, linger, subscribe, routing_id, xpub_nodrop)", b.Name(), key)
			}
			continue
		}
		if err := json.Unmarshal(raw, target); err != nil {
			return nil, o, fail(2, "bad node spec: option %s: %v", key, err)
		}
	}
	switch {
	case len(s.Frames) > 0:
		return nil, o, Refuse("the %s peer does not send typed frames", b.Name())
	case len(s.LogLevels) > 0:
		return nil, o, Refuse("the %s peer does not play log lines", b.Name())
	case s.Eot != nil:
		return nil, o, Refuse("the %s peer does not watch an end-of-transmission channel", b.Name())
	case len(s.Ticks) > 0 && string(s.Ticks) != "null":
		return nil, o, Refuse("the %s peer does not send on ticks", b.Name())
	case s.IO != nil && *s.IO != "blocking":
		return nil, o, Refuse("the %s peer only uses blocking I/O, not io = %s", b.Name(), *s.IO)
	}
	for _, ep := range append(append([]string{}, sock.Bind...), sock.Connect...) {
		scheme, _, _ := strings.Cut(ep, "://")
		if !contains(b.Transports(), scheme) {
			return nil, o, Refuse("the %s peer speaks %s, not %s", b.Name(), strings.Join(b.Transports(), " and "), ep)
		}
	}
	o.XPubVerbose = sock.Kind == "XPUB" || (sock.Kind == "PUB" && s.Subscriptions > 0)
	if o.XPubNoDrop != nil && *o.XPubNoDrop && !o.XPubVerbose {
		return nil, o, Refuse("xpub_nodrop is an option of an XPUB (or of a PUB waiting for subscriptions), not of %s", sock.Kind)
	}
	return &s, o, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Now is CLOCK_MONOTONIC in ns, the clock every process of the host shares.
func Now() uint64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano())
}

// hist is the compact histogram: value rounded to 3 significant digits -> count.
type hist map[uint64]uint64

func (h hist) record(ns uint64) {
	p := uint64(1)
	for ns/p >= 1000 {
		p *= 10
	}
	h[ns-ns%p]++
}

func (h hist) MarshalJSON() ([]byte, error) {
	buckets := make([][2]uint64, 0, len(h))
	for v, c := range h {
		buckets = append(buckets, [2]uint64{v, c})
	}
	sort.Slice(buckets, func(i, j int) bool { return buckets[i][0] < buckets[j][0] })
	return json.Marshal(map[string]any{"buckets": buckets})
}

// runs is the compact ledger: per stream, arrivals as runs [first_seq, length, arrival_ns].
type runs struct {
	Runs map[uint32][][3]uint64 `json:"runs"`
	last *[3]uint64
	id   uint32
}

func (r *runs) record(stream uint32, seq uint64) {
	if r.last != nil && r.id == stream && r.last[0]+r.last[1] == seq {
		r.last[1]++
		return
	}
	list := r.Runs[stream]
	if n := len(list); n > 0 && list[n-1][0]+list[n-1][1] == seq {
		list[n-1][1]++
	} else {
		list = append(list, [3]uint64{seq, 1, Now()})
		r.Runs[stream] = list
	}
	r.id, r.last = stream, &r.Runs[stream][len(list)-1]
}

type span struct {
	Messages     uint64 `json:"messages"`
	PayloadBytes uint64 `json:"payload_bytes"`
	StartNs      uint64 `json:"start_ns"`
	EndNs        uint64 `json:"end_ns"`
}

type usage struct {
	Role       string  `json:"role"`
	Placement  string  `json:"placement"`
	CPUUserMs  float64 `json:"cpu_user_ms"`
	CPUSysMs   float64 `json:"cpu_sys_ms"`
	PeakRSSKiB uint64  `json:"peak_rss_kib"`
}

type report struct {
	Latency            *hist   `json:"latency"`
	StreamLatency      []any   `json:"stream_latency,omitempty"`
	SendDelay          *hist   `json:"send_delay"`
	Send               *span   `json:"send"`
	Delivered          *span   `json:"delivered"`
	Ledger             *runs   `json:"ledger"`
	Usage              *usage  `json:"usage"`
	Header             bool    `json:"header"`
	RoundTrips         *span   `json:"round_trips,omitempty"`
	CutShort           string  `json:"cut_short,omitempty"`
	SubscriptionWaitNs *uint64 `json:"subscription_wait_ns,omitempty"`
	ClosedNs           *uint64 `json:"closed_ns,omitempty"`
}

func processUsage(role string) *usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return nil
	}
	u := &usage{Role: role, Placement: "foreign",
		CPUUserMs: float64(ru.Utime.Nano()) / 1e6, CPUSysMs: float64(ru.Stime.Nano()) / 1e6}
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				u.PeakRSSKiB, _ = strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			}
		}
	}
	return u
}

// control reads the runner's lines: start, then maybe stop; the end of input counts as stop.
type control struct {
	start   chan error
	stop    chan struct{}
	stopped atomic.Bool
}

func newControl(in io.Reader) *control {
	c := &control{start: make(chan error, 1), stop: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(in)
		waiting := true
		for sc.Scan() {
			var m struct{ Type string }
			typeErr := json.Unmarshal(sc.Bytes(), &m)
			if waiting {
				waiting = false
				if typeErr != nil || m.Type != "start" {
					c.start <- fail(9, "protocol error: expected start, got: %s", strings.TrimSpace(sc.Text()))
					break
				}
				c.start <- nil
			} else if typeErr == nil && m.Type == "stop" {
				break
			}
		}
		if waiting {
			c.start <- fail(9, "protocol error: no start signal from the runner (its input ended)")
		}
		c.stopped.Store(true)
		close(c.stop)
	}()
	return c
}

// node is one node being played.
type node struct {
	spec     *Spec
	b        Binding
	sock     Socket
	ctl      *control
	out      io.Writer
	outMu    sync.Mutex
	endpoint string
}

func (n *node) emit(m map[string]any) {
	m["v"] = 1
	line, _ := json.Marshal(m)
	n.outMu.Lock()
	defer n.outMu.Unlock()
	_, _ = n.out.Write(append(line, '\n'))
}

func (n *node) timeout() time.Duration { return time.Duration(n.spec.TimeoutMs) * time.Millisecond }

// The watch ends a blocked receive: after `limit` with nothing received (idle), or, once
// the runner said stop, after `drain` with nothing more (the queue is drained). The role
// adds one to progress per message: the only cost in its loop.
type watch struct {
	progress atomic.Uint64
	why      atomic.Int32
	done     chan struct{}
}

const (
	whyNone = iota
	whyIdle
	whyStopped
	// A sink's drain after the stop: a TCP stream held up for a delayed acknowledgement
	// (up to 200 ms on Linux) is late, not lost.
	sinkDrain = time.Second
	// An echo's: its pings are done when it is told to stop.
	echoDrain = 100 * time.Millisecond
)

func (n *node) watch(limit, drain time.Duration) *watch {
	w := &watch{done: make(chan struct{})}
	tick := limit / 50
	if tick > 10*time.Millisecond {
		tick = 10 * time.Millisecond
	}
	if tick < time.Millisecond {
		tick = time.Millisecond
	}
	go func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		last, since := uint64(0), time.Now()
		var stopAt time.Time
		for {
			select {
			case <-w.done:
				return
			case now := <-t.C:
				if p := w.progress.Load(); p != last {
					last, since = p, now
				}
				if drain > 0 && n.ctl.stopped.Load() {
					if stopAt.IsZero() {
						stopAt = now
					}
					ref := since
					if stopAt.After(ref) {
						ref = stopAt
					}
					if now.Sub(ref) >= drain {
						w.why.Store(whyStopped)
						n.sock.Interrupt()
						return
					}
				}
				if now.Sub(since) >= limit {
					w.why.Store(whyIdle)
					n.sock.Interrupt()
					return
				}
			}
		}
	}()
	return w
}

func (w *watch) end() { close(w.done) }

// Run plays the node of args[0] (or prints the version for --version), reading the runner's
// lines from in and writing its own to out. It returns the exit code.
func Run(b Binding, args []string, in io.Reader, out io.Writer) int {
	n := &node{b: b, out: out}
	if len(args) == 1 && args[0] == "--version" {
		binding, engine := b.Version()
		line, _ := json.Marshal(map[string]string{"binding": binding, "engine": engine})
		_, _ = out.Write(append(line, '\n'))
		return 0
	}
	var err error
	if len(args) != 1 {
		err = fail(2, "usage: %s '<node spec as JSON>' | --version (see peers/go/README.md)", b.Name())
	} else {
		var r *report
		r, err = n.play(args[0], in)
		if err == nil {
			n.emit(map[string]any{"type": "report", "report": r})
			return 0
		}
	}
	code := 10
	var f *failure
	if errors.As(err, &f) {
		code = f.code
	}
	n.emit(map[string]any{"type": "error", "message": err.Error(), "exit_code": code})
	return code
}

func (n *node) play(specText string, in io.Reader) (*report, error) {
	spec, opts, err := parseSpec(specText, n.b)
	if err != nil {
		return nil, err
	}
	n.spec = spec
	sock := spec.Sockets[0]
	n.sock, err = n.b.Open(sock.Kind, opts, n.timeout())
	if err != nil {
		return nil, err
	}
	defer func() { _ = n.sock.Close(n.closeLinger(opts)) }()
	endpoints := []string{}
	for _, ep := range sock.Bind {
		real, err := n.sock.Bind(ep)
		if err != nil {
			return nil, fail(10, "could not bind %s: %v", ep, err)
		}
		endpoints = append(endpoints, real)
	}
	for _, ep := range sock.Connect {
		if err := n.sock.Connect(ep); err != nil {
			return nil, fail(10, "could not connect to %s: %v", ep, err)
		}
	}
	switch {
	case len(endpoints) > 0:
		n.endpoint = endpoints[0]
	case len(sock.Connect) > 0:
		n.endpoint = sock.Connect[0]
	}
	n.emit(map[string]any{"type": "ready", "endpoints": endpoints})
	n.ctl = newControl(in)
	select {
	case err := <-n.ctl.start:
		if err != nil {
			return nil, err
		}
	case <-time.After(n.timeout()):
		return nil, fail(9, "protocol error: no start signal from the runner within %d ms", spec.TimeoutMs)
	}
	switch spec.Role {
	case "source":
		return n.source()
	case "sink":
		return n.sink()
	case "ping":
		return n.ping()
	default:
		return n.echo()
	}
}

// closeLinger is how long the socket may keep queued messages when it closes: an echo's
// last reply must reach its ping (the topology's linger, or up to 1 s); nothing else waits.
func (n *node) closeLinger(o Options) time.Duration {
	if n.spec.Role != "echo" {
		return 0
	}
	if o.Linger != nil && *o.Linger >= 0 {
		return time.Duration(*o.Linger) * time.Millisecond
	}
	if n.timeout() < time.Second {
		return n.timeout()
	}
	return time.Second
}

func (n *node) newReport() *report {
	return &report{Usage: processUsage(n.spec.Role)}
}

func (n *node) send(frame []byte, more bool, i uint64) error {
	if err := n.sock.Send(frame, more); err != nil {
		return fail(4, "message %d could not be sent within %d ms on %s (%v; is the other side running and connected?)",
			i, n.spec.TimeoutMs, n.endpoint, err)
	}
	return nil
}

func (n *node) source() (*report, error) {
	s, r := n.spec, n.newReport()
	if s.Subscriptions > 0 {
		t := Now()
		if err := n.sock.AwaitSubscriptions(s.Subscriptions, n.timeout()); err != nil {
			return nil, fail(4, "waiting for %d subscriptions on %s: %v", s.Subscriptions, n.endpoint, err)
		}
		wait := Now() - t
		r.SubscriptionWaitNs = &wait
	}
	header := s.Size >= HeaderLen
	// A library that holds the frame after Send returns needs a buffer per message.
	fresh := n.b.KeepsBuffers()
	buf := make([]byte, s.Size)
	next := func() []byte {
		if fresh {
			return make([]byte, s.Size)
		}
		return buf
	}
	for i := uint64(0); i < s.Warmup; i++ {
		m := next()
		if header {
			Header{Flags: FlagWarmup, StreamID: s.StreamID, Sequence: i}.Put(m)
		}
		if err := n.send(m, false, i); err != nil {
			return nil, err
		}
	}
	last := s.Count - 1
	start := Now()
	if s.Rate == nil {
		for i := uint64(0); i < s.Count; i++ {
			m := next()
			if header {
				h := Header{StreamID: s.StreamID, Sequence: i}
				if i%s.StampEvery == 0 || i == last {
					h.Flags, h.SendNs = FlagTimestamp, Now()
				}
				if i == last {
					h.Flags |= FlagEnd
				}
				h.Put(m)
			}
			if err := n.send(m, false, i); err != nil {
				return nil, err
			}
		}
	} else {
		delay := hist{}
		interval := 1e9 / *s.Rate
		for i := uint64(0); i < s.Count; i++ {
			due := start + uint64(float64(i)*interval)
			waitUntil(due)
			delay.record(Now() - due)
			m := next()
			if header {
				h := Header{Flags: FlagTimestamp, StreamID: s.StreamID, Sequence: i, SendNs: due}
				if i == last {
					h.Flags |= FlagEnd
				}
				h.Put(m)
			}
			if err := n.send(m, false, i); err != nil {
				return nil, err
			}
		}
		r.SendDelay = &delay
	}
	end := Now()
	n.emit(map[string]any{"type": "sent", "first_send_ns": start, "last_send_ns": end})
	select {
	case <-n.ctl.stop:
	case <-time.After(n.timeout()):
	}
	_ = n.sock.Close(0)
	closed := Now()
	r.ClosedNs = &closed
	r.Send = &span{s.Count, s.Count * uint64(s.Size), start, end}
	r.Header = header
	return r, nil
}

func waitUntil(due uint64) {
	for {
		left := int64(due - Now())
		if left <= 0 {
			return
		}
		if left > 200_000 {
			time.Sleep(time.Duration(left - 100_000))
		}
	}
}

func (n *node) sink() (*report, error) {
	s := n.spec
	w := n.watch(n.timeout(), sinkDrain)
	defer w.end()
	byStream := map[uint32]hist{}
	ended := map[uint32]bool{}
	ledger := &runs{Runs: map[uint32][][3]uint64{}}
	var total uint64
	for _, st := range s.Streams {
		total += st[1]
	}
	plainWarm := s.Warmup * uint64(len(s.Streams))
	var seen, received, bytes, start, lastRead uint64
	header, byEnd := false, false
	r := n.newReport()
	for {
		frames, err := n.sock.Recv()
		if errors.Is(err, ErrInterrupted) {
			if w.why.Load() == whyIdle {
				r.CutShort = fmt.Sprintf("nothing arrived for %d ms", s.TimeoutMs)
				if received > 0 {
					r.CutShort += fmt.Sprintf(" after %d of %d messages", received, total)
				}
			}
			break
		}
		if err != nil {
			return nil, fail(10, "receive on %s failed: %v", n.endpoint, err)
		}
		w.progress.Add(1)
		seen++
		// A ROUTER's identity (and any delimiter) come first: the payload is the last frame.
		m := frames[len(frames)-1]
		h, ok, err := ReadHeader(m)
		if err != nil {
			return nil, fail(9, "protocol error: message %d on %s: %v", seen, n.endpoint, err)
		}
		if !ok {
			// No header (under 24 bytes, or a sender without zmqperf's header): counted only.
			if seen <= plainWarm {
				continue
			}
			received++
			bytes += uint64(len(m))
			if received == 1 || received%16 == 0 {
				lastRead = Now()
				if received == 1 {
					start = lastRead
				}
			}
			if s.EndsItself && received == total {
				byEnd = true
				break
			}
			continue
		}
		header = true
		if h.Flags&FlagWarmup != 0 {
			continue
		}
		var now uint64
		if h.Flags&(FlagTimestamp|FlagEnd) != 0 || received == 0 {
			now = Now()
			lastRead = now
		}
		if received == 0 {
			start = now
		}
		received++
		bytes += uint64(len(m))
		ledger.record(h.StreamID, h.Sequence)
		if h.Flags&FlagTimestamp != 0 {
			hs := byStream[h.StreamID]
			if hs == nil {
				hs = hist{}
				byStream[h.StreamID] = hs
			}
			hs.record(now - h.SendNs)
		}
		if h.Flags&FlagEnd != 0 && !ended[h.StreamID] {
			ended[h.StreamID] = true
			if s.EndsItself && n.allEnded(ended) {
				byEnd = true
				break
			}
		}
	}
	end := lastRead
	if byEnd {
		end = Now()
	}
	if received == 0 {
		end = start
	}
	if header {
		all := hist{}
		for _, hs := range byStream {
			for v, c := range hs {
				all[v] += c
			}
		}
		for _, st := range s.Streams {
			hs := byStream[uint32(st[0])]
			if hs == nil {
				hs = hist{}
			}
			r.StreamLatency = append(r.StreamLatency, []any{st[0], hs})
		}
		r.Latency, r.Ledger = &all, ledger
	}
	r.Delivered = &span{received, bytes, start, end}
	r.Header = header
	return r, nil
}

func (n *node) allEnded(ended map[uint32]bool) bool {
	for _, st := range n.spec.Streams {
		if !ended[uint32(st[0])] {
			return false
		}
	}
	return true
}

func (n *node) ping() (*report, error) {
	s, r := n.spec, n.newReport()
	w := n.watch(n.timeout(), 0)
	defer w.end()
	header := s.Size >= HeaderLen
	fresh := n.b.KeepsBuffers()
	buf := make([]byte, s.Size)
	latency := hist{}
	total := s.Warmup + s.Count
	start := Now()
	for i := uint64(0); i < total; i++ {
		warm := i < s.Warmup
		if i == s.Warmup {
			start = Now()
		}
		m := buf
		if fresh {
			m = make([]byte, s.Size)
		}
		t0 := Now()
		if header {
			h := Header{Flags: FlagTimestamp, StreamID: s.StreamID, Sequence: i, SendNs: t0}
			if warm {
				h.Flags |= FlagWarmup
			}
			h.Put(m)
		}
		if s.Delimiter {
			if err := n.send(nil, true, i); err != nil {
				return nil, err
			}
		}
		if err := n.send(m, false, i); err != nil {
			return nil, err
		}
		frames, err := n.sock.Recv()
		t1 := Now()
		if errors.Is(err, ErrInterrupted) {
			return nil, fail(4, "no reply to request %d within %d ms from %s", i, s.TimeoutMs, n.endpoint)
		}
		if err != nil {
			return nil, fail(10, "receive on %s failed: %v", n.endpoint, err)
		}
		w.progress.Add(1)
		if header {
			h, ok, err := ReadHeader(frames[len(frames)-1])
			switch {
			case err != nil:
				return nil, fail(9, "protocol error: reply %d: %v", i, err)
			case !ok:
				return nil, fail(9, "protocol error: reply %d does not carry its request's header", i)
			case h.Sequence != i:
				return nil, fail(9, "protocol error: reply %d carries sequence %d; the echo side answered out of order", i, h.Sequence)
			}
		}
		if !warm {
			latency.record((t1 - t0) / 2)
		}
	}
	end := Now()
	n.emit(map[string]any{"type": "sent"})
	r.Latency = &latency
	r.RoundTrips = &span{s.Count, s.Count * uint64(s.Size), start, end}
	r.Header = header
	return r, nil
}

func (n *node) echo() (*report, error) {
	s, r := n.spec, n.newReport()
	w := n.watch(n.timeout(), echoDrain)
	defer w.end()
	var done, bytes, start uint64
	for !(s.EndsItself && done == s.Expect) {
		frames, err := n.sock.Recv()
		if errors.Is(err, ErrInterrupted) {
			if w.why.Load() == whyIdle {
				r.CutShort = fmt.Sprintf("idle: no request for %d ms after %d round trips", s.TimeoutMs, done)
			}
			break
		}
		if err != nil {
			return nil, fail(10, "receive on %s failed: %v", n.endpoint, err)
		}
		w.progress.Add(1)
		if done == 0 {
			start = Now()
		}
		for k, f := range frames {
			if err := n.send(f, k+1 < len(frames), done); err != nil {
				return nil, err
			}
		}
		bytes += uint64(len(frames[len(frames)-1]))
		done++
	}
	end := Now()
	if done == 0 {
		end = start
	}
	r.RoundTrips = &span{done, bytes, start, end}
	return r, nil
}
