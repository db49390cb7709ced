package peer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// SelfTest is one loopback case of the conformance test: the peer against itself over tcp
// on 127.0.0.1, each node in its own goroutine, driven through the control protocol.
type SelfTest struct {
	Name string
	Run  func(b Binding) error
}

// SelfTests are PUSH->PULL, PUB (waiting for its subscription)->SUB, REQ->REP and
// DEALER->ROUTER, each checking the counts of both reports.
func SelfTests() []SelfTest {
	return []SelfTest{
		{"push-pull", func(b Binding) error {
			return sourceSink(b, testSpec("rx", "sink", "PULL", 2000, 0), testSpec("tx", "source", "PUSH", 2000, 0), false)
		}},
		{"pub-sub", func(b Binding) error {
			pub := testSpec("tx", "source", "PUB", 2000, 0)
			pub["subscriptions"] = 1
			// A PUB drops at its high-water mark: one above the count, so nothing is lost.
			pub["sockets"].([]map[string]any)[0]["options"] = map[string]any{"sndhwm": 10000}
			sub := testSpec("rx", "sink", "SUB", 2000, 0)
			sub["sockets"].([]map[string]any)[0]["options"] = map[string]any{"subscribe": []string{"ZP"}}
			return sourceSink(b, pub, sub, true)
		}},
		{"req-rep", func(b Binding) error {
			return pingEcho(b, testSpec("echo", "echo", "REP", 500, 50), testSpec("ping", "ping", "REQ", 500, 50))
		}},
		{"dealer-router", func(b Binding) error {
			return pingEcho(b, testSpec("echo", "echo", "ROUTER", 500, 50), testSpec("ping", "ping", "DEALER", 500, 50))
		}},
	}
}

func testSpec(name, role, kind string, count, warmup uint64) map[string]any {
	return map[string]any{
		"name": name, "role": role, "size": 64, "count": count, "warmup": warmup,
		"sockets": []map[string]any{{"kind": kind, "bind": []string{}, "connect": []string{}, "options": map[string]any{}}},
		"rate":    nil, "stamp_every": 16, "timeout_ms": 5000, "stream_id": 7,
		"streams": [][2]uint64{{7, count}}, "ends_itself": true, "expect": count + warmup,
		"subscriptions": 0, "delimiter": false,
	}
}

const testWait = 20 * time.Second

// testNode is a node played by Run in a goroutine, with pipes for its control lines.
type testNode struct {
	name  string
	in    *io.PipeWriter
	lines chan map[string]any
	code  chan int
}

func startNode(b Binding, spec map[string]any) (*testNode, error) {
	text, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	n := &testNode{name: spec["name"].(string), in: inW, lines: make(chan map[string]any, 16), code: make(chan int, 1)}
	go func() {
		n.code <- Run(b, []string{string(text)}, inR, outW)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				n.lines <- m
			}
		}
		close(n.lines)
	}()
	return n, nil
}

func (n *testNode) expect(kind string) (map[string]any, error) {
	deadline := time.After(testWait)
	for {
		select {
		case m, ok := <-n.lines:
			if !ok {
				return nil, fmt.Errorf("%s ended before '%s'", n.name, kind)
			}
			if m["type"] == kind {
				return m, nil
			}
			if m["type"] == "error" {
				return nil, fmt.Errorf("%s: %v", n.name, m["message"])
			}
		case <-deadline:
			return nil, fmt.Errorf("%s: no '%s' within %v", n.name, kind, testWait)
		}
	}
}

func (n *testNode) say(kind string) {
	go func() { _, _ = fmt.Fprintf(n.in, "{\"type\":%q,\"v\":1}\n", kind) }()
}

func (n *testNode) exit() error {
	n.in.Close()
	select {
	case c := <-n.code:
		if c != 0 {
			return fmt.Errorf("%s exited %d", n.name, c)
		}
		return nil
	case <-time.After(testWait):
		return fmt.Errorf("%s did not end within %v", n.name, testWait)
	}
}

// pair binds server on an ephemeral port, connects client, starts both and returns the
// reports of the active node (the one that says sent) and of the passive one.
func pair(b Binding, server, client map[string]any, serverSends bool) (active, passive map[string]any, err error) {
	server["sockets"].([]map[string]any)[0]["bind"] = []string{"tcp://127.0.0.1:*"}
	srv, err := startNode(b, server)
	if err != nil {
		return nil, nil, err
	}
	ready, err := srv.expect("ready")
	if err != nil {
		return nil, nil, err
	}
	eps := ready["endpoints"].([]any)
	if len(eps) != 1 || eps[0] == "tcp://127.0.0.1:*" {
		return nil, nil, fmt.Errorf("the bound endpoints are %v", eps)
	}
	client["sockets"].([]map[string]any)[0]["connect"] = eps
	cli, err := startNode(b, client)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		for _, n := range []*testNode{srv, cli} {
			if e := n.exit(); e != nil && err == nil {
				err = e
			}
		}
	}()
	if _, err = cli.expect("ready"); err != nil {
		return nil, nil, err
	}
	srv.say("start")
	cli.say("start")
	a, p := cli, srv
	if serverSends {
		a, p = srv, cli
	}
	if _, err = a.expect("sent"); err != nil {
		return nil, nil, err
	}
	pr, err := p.expect("report")
	if err != nil {
		return nil, nil, err
	}
	a.say("stop")
	ar, err := a.expect("report")
	if err != nil {
		return nil, nil, err
	}
	return ar["report"].(map[string]any), pr["report"].(map[string]any), nil
}

func field(report map[string]any, path ...string) float64 {
	var v any = report
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return -1
		}
		v = m[k]
	}
	f, ok := v.(float64)
	if !ok {
		return -1
	}
	return f
}

func samples(h any) float64 {
	m, ok := h.(map[string]any)
	if !ok {
		return -1
	}
	n := 0.0
	for _, b := range m["buckets"].([]any) {
		n += b.([]any)[1].(float64)
	}
	return n
}

func sourceSink(b Binding, server, client map[string]any, serverSends bool) error {
	source, sink, err := pair(b, server, client, serverSends)
	if err != nil {
		return err
	}
	const count = 2000
	if got := field(source, "send", "messages"); got != count {
		return fmt.Errorf("the source sent %v messages, want %d", got, count)
	}
	if got := field(sink, "delivered", "messages"); got != count {
		return fmt.Errorf("the sink got %v messages, want %d (cut short: %v)", got, count, sink["cut_short"])
	}
	runs, _ := sink["ledger"].(map[string]any)["runs"].(map[string]any)["7"].([]any)
	if len(runs) != 1 || runs[0].([]any)[0].(float64) != 0 || runs[0].([]any)[1].(float64) != count {
		return fmt.Errorf("the ledger of stream 7 is %v, want one run 0..%d", runs, count-1)
	}
	// Stamped: every 16th (0, 16, ..., 1984) and the last (1999).
	if got := samples(sink["latency"]); got != 126 {
		return fmt.Errorf("the sink has %v latency samples, want 126", got)
	}
	return nil
}

func pingEcho(b Binding, server, client map[string]any) error {
	ping, echo, err := pair(b, server, client, false)
	if err != nil {
		return err
	}
	if got := field(ping, "round_trips", "messages"); got != 500 {
		return fmt.Errorf("the ping did %v round trips, want 500", got)
	}
	if got := samples(ping["latency"]); got != 500 {
		return fmt.Errorf("the ping has %v latency samples, want 500", got)
	}
	if got := field(echo, "round_trips", "messages"); got != 550 {
		return fmt.Errorf("the echo answered %v requests, want 550 (warm-up included)", got)
	}
	return nil
}
