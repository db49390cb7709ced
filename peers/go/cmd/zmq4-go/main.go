// Command zmq4-go is the zmqperf peer on github.com/go-zeromq/zmq4, ZeroMQ in pure Go:
// `zmq4-go '<node spec as JSON>'` plays one node (docs/peers.md), `zmq4-go --version`
// names the library.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"

	"zmqperf/peers/peer"
)

type binding struct{}

func (binding) Name() string { return "zmq4-go" }

func (binding) Version() (string, string) {
	return "go-zeromq/zmq4 " + moduleVersion("github.com/go-zeromq/zmq4"), "pure Go (" + runtime.Version() + ")"
}

// moduleVersion reads a dependency's version from the build information.
func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "(unknown version)"
}

// Every message is handed to a writer goroutine per connection (and queued there for a
// PUB), so a sent frame must not be reused.
func (binding) KeepsBuffers() bool { return true }

// ipc is a Unix domain socket, as in libzmq.
func (binding) Transports() []string { return []string{"tcp", "ipc"} }

func (binding) Open(kind string, o peer.Options, timeout time.Duration) (peer.Socket, error) {
	ctx, cancel := context.WithCancel(context.Background())
	opts := []zmq4.Option{zmq4.WithTimeout(timeout), zmq4.WithDialerTimeout(timeout)}
	if o.RoutingID != nil {
		opts = append(opts, zmq4.WithID(zmq4.SocketIdentity(*o.RoutingID)))
	}
	var s zmq4.Socket
	switch {
	case o.XPubVerbose:
		s = zmq4.NewXPub(ctx, opts...)
	case kind == "PUB":
		s = zmq4.NewPub(ctx, opts...)
	case kind == "SUB":
		s = zmq4.NewSub(ctx, opts...)
	case kind == "PUSH":
		s = zmq4.NewPush(ctx, opts...)
	case kind == "PULL":
		s = zmq4.NewPull(ctx, opts...)
	case kind == "REQ":
		s = zmq4.NewReq(ctx, opts...)
	case kind == "REP":
		s = zmq4.NewRep(ctx, opts...)
	case kind == "DEALER":
		s = zmq4.NewDealer(ctx, opts...)
	case kind == "ROUTER":
		s = zmq4.NewRouter(ctx, opts...)
	case kind == "PAIR":
		s = zmq4.NewPair(ctx, opts...)
	default:
		cancel()
		return nil, peer.Refuse("the zmq4-go peer has no %s socket", kind)
	}
	// go-zeromq has a high-water mark only on a PUB's send queues, and no linger: a socket
	// closes at once (linger 0). Other values are not honoured, so they are refused.
	publishes := kind == "PUB" || kind == "XPUB"
	switch {
	case o.SndHWM != nil && publishes:
		if err := s.SetOption(zmq4.OptionHWM, *o.SndHWM); err != nil {
			cancel()
			return nil, fmt.Errorf("sndhwm: %w", err)
		}
	case o.SndHWM != nil:
		cancel()
		return nil, peer.Refuse("go-zeromq/zmq4 has no send high-water mark on %s (only on PUB and XPUB)", kind)
	}
	if o.XPubNoDrop != nil && *o.XPubNoDrop {
		cancel()
		return nil, peer.Refuse("go-zeromq/zmq4 has no xpub_nodrop: its PUB and XPUB drop a message when a subscriber's queue is full")
	}
	if o.RcvHWM != nil {
		cancel()
		return nil, peer.Refuse("go-zeromq/zmq4 has no receive high-water mark (rcvhwm)")
	}
	if o.Linger != nil && *o.Linger != 0 {
		cancel()
		return nil, peer.Refuse("go-zeromq/zmq4 has no linger: its sockets close at once (linger 0), not with linger %d", *o.Linger)
	}
	if kind == "SUB" {
		topics := o.Subscribe
		if len(topics) == 0 {
			topics = []string{""}
		}
		for _, t := range topics {
			if err := s.SetOption(zmq4.OptionSubscribe, t); err != nil {
				cancel()
				return nil, fmt.Errorf("subscribe %q: %w", t, err)
			}
		}
	}
	return &socket{s: s, ctx: ctx, cancel: cancel}, nil
}

type socket struct {
	s       zmq4.Socket
	ctx     context.Context
	cancel  context.CancelFunc
	pending [][]byte
	bound   bool
	once    sync.Once
	// Whether the last call was a send (see Close).
	sent bool
}

func (s *socket) Bind(ep string) (string, error) {
	if s.bound {
		return "", peer.Refuse("go-zeromq/zmq4 keeps one listener per socket: a second bind (%s) is not played", ep)
	}
	if err := s.s.Listen(ep); err != nil {
		return "", err
	}
	s.bound = true
	if strings.HasPrefix(ep, "tcp://") {
		return "tcp://" + s.s.Addr().String(), nil
	}
	return ep, nil
}

func (s *socket) Connect(ep string) error { return s.s.Dial(ep) }

func (s *socket) Send(frame []byte, more bool) error {
	s.sent = true
	if more {
		s.pending = append(s.pending, frame)
		return nil
	}
	if len(s.pending) == 0 {
		return s.s.Send(zmq4.NewMsg(frame))
	}
	frames := append(s.pending, frame)
	s.pending = nil
	return s.s.SendMulti(zmq4.NewMsgFrom(frames...))
}

// go-zeromq hands a connection's end (io.EOF) to Recv as an error; libzmq hides it. A
// peer that hung up is not the end of the socket, so the receive goes on.
func (s *socket) Recv() ([][]byte, error) {
	for {
		m, err := s.s.Recv()
		switch {
		case s.ctx.Err() != nil:
			return nil, peer.ErrInterrupted
		case errors.Is(err, io.EOF):
			continue
		case err != nil:
			return nil, err
		}
		s.sent = false
		return m.Frames, nil
	}
}

// A REQ's receive waits on its connection, not on the context: closing the socket is what
// ends it. The socket is not used after an interrupt.
func (s *socket) Interrupt() {
	s.cancel()
	_ = s.close()
}

// go-zeromq's XPUB keeps subscriptions to itself (no XPUB_VERBOSE: Recv never returns
// them) and knows only the set of topics: the wait polls that set until a subscription
// is in, and for more than one subscriber adds 200 ms, saying so.
func (s *socket) AwaitSubscriptions(n int, timeout time.Duration) error {
	t, ok := s.s.(zmq4.Topics)
	if !ok {
		return errors.New("this socket cannot tell its subscriptions")
	}
	deadline := time.Now().Add(timeout)
	for len(t.Topics()) == 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("no subscription within %v", timeout)
		}
		time.Sleep(time.Millisecond)
	}
	if n > 1 {
		fmt.Fprintf(os.Stderr, "zmq4-go: go-zeromq's XPUB does not count subscriptions: %d expected, the first is in, waiting 200 ms for the others\n", n)
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

// go-zeromq has no linger, and a REP or a PUB hands a message to a writer goroutine: Send
// returns before it is written. Closing right after would lose the last reply, so a socket
// whose last call was a send waits up to 100 ms of its linger before it closes.
func (s *socket) Close(linger time.Duration) error {
	if s.sent && linger > 0 {
		time.Sleep(min(linger, 100*time.Millisecond))
	}
	return s.close()
}

func (s *socket) close() error {
	var err error
	s.once.Do(func() {
		s.cancel()
		err = s.s.Close()
	})
	return err
}

func main() {
	os.Exit(peer.Run(binding{}, os.Args[1:], os.Stdin, os.Stdout))
}
