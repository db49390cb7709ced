// Command zmq4-cgo is the zmqperf peer on github.com/pebbe/zmq4, libzmq through cgo:
// `zmq4-cgo '<node spec as JSON>'` plays one node (docs/peers.md), `zmq4-cgo --version`
// names the library and the libzmq it was linked with.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	zmq "github.com/pebbe/zmq4"

	"zmqperf/peers/peer"
)

// How long a blocked receive sleeps in libzmq before it looks for an interrupt.
const slice = 20 * time.Millisecond

type binding struct{}

func (binding) Name() string { return "zmq4-cgo" }

func (binding) Version() (string, string) {
	v := "(unknown version)"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "github.com/pebbe/zmq4" {
				v = d.Version
			}
		}
	}
	major, minor, patch := zmq.Version()
	return "pebbe/zmq4 " + v, fmt.Sprintf("libzmq %d.%d.%d (cgo)", major, minor, patch)
}

// libzmq copies a frame in zmq_send: the buffer can be reused at once.
func (binding) KeepsBuffers() bool { return false }

func (binding) Transports() []string { return []string{"tcp", "ipc"} }

var types = map[string]zmq.Type{
	"PUB": zmq.PUB, "XPUB": zmq.XPUB, "SUB": zmq.SUB, "PUSH": zmq.PUSH, "PULL": zmq.PULL,
	"REQ": zmq.REQ, "REP": zmq.REP, "DEALER": zmq.DEALER, "ROUTER": zmq.ROUTER, "PAIR": zmq.PAIR,
}

func (binding) Open(kind string, o peer.Options, timeout time.Duration) (peer.Socket, error) {
	t, ok := types[kind]
	if !ok {
		return nil, peer.Refuse("the zmq4-cgo peer has no %s socket", kind)
	}
	if o.XPubVerbose {
		t = zmq.XPUB
	}
	s, err := zmq.NewSocket(t)
	if err != nil {
		return nil, err
	}
	linger := 0
	if o.Linger != nil {
		linger = *o.Linger
	}
	steps := []error{s.SetLinger(time.Duration(linger) * time.Millisecond)}
	if o.SndHWM != nil {
		steps = append(steps, s.SetSndhwm(*o.SndHWM))
	}
	if o.RcvHWM != nil {
		steps = append(steps, s.SetRcvhwm(*o.RcvHWM))
	}
	if o.RoutingID != nil {
		steps = append(steps, s.SetIdentity(*o.RoutingID))
	}
	if o.XPubVerbose {
		steps = append(steps, s.SetXpubVerbose(1))
	}
	if o.XPubNoDrop != nil && *o.XPubNoDrop {
		steps = append(steps, s.SetXpubNodrop(true))
	}
	if kind == "SUB" {
		topics := o.Subscribe
		if len(topics) == 0 {
			topics = []string{""}
		}
		for _, topic := range topics {
			steps = append(steps, s.SetSubscribe(topic))
		}
	}
	steps = append(steps, s.SetSndtimeo(timeout), s.SetRcvtimeo(slice))
	if err := errors.Join(steps...); err != nil {
		s.Close()
		return nil, fmt.Errorf("socket options: %w", err)
	}
	return &socket{s: s}, nil
}

type socket struct {
	s           *zmq.Socket
	interrupted atomic.Bool
	once        sync.Once
}

func (s *socket) Bind(ep string) (string, error) {
	if err := s.s.Bind(ep); err != nil {
		return "", err
	}
	return s.s.GetLastEndpoint()
}

func (s *socket) Connect(ep string) error { return s.s.Connect(ep) }

func (s *socket) Send(frame []byte, more bool) error {
	flag := zmq.Flag(0)
	if more {
		flag = zmq.SNDMORE
	}
	_, err := s.s.SendBytes(frame, flag)
	return err
}

func timedOut(err error) bool {
	return zmq.AsErrno(err) == zmq.Errno(syscall.EAGAIN)
}

func (s *socket) Recv() ([][]byte, error) {
	for {
		m, err := s.s.RecvMessageBytes(0)
		if err == nil {
			return m, nil
		}
		if !timedOut(err) {
			return nil, err
		}
		if s.interrupted.Load() {
			return nil, peer.ErrInterrupted
		}
	}
}

func (s *socket) Interrupt() { s.interrupted.Store(true) }

// With XPUB_VERBOSE every subscription message comes up, duplicates included.
func (s *socket) AwaitSubscriptions(n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for seen := 0; seen < n; {
		m, err := s.s.RecvBytes(0)
		switch {
		case err == nil && len(m) > 0 && m[0] == 1:
			seen++
		case err != nil && !timedOut(err):
			return err
		case time.Now().After(deadline):
			return fmt.Errorf("%d of %d subscriptions within %v", seen, n, timeout)
		}
	}
	return nil
}

func (s *socket) Close(linger time.Duration) error {
	var err error
	s.once.Do(func() {
		_ = s.s.SetLinger(linger)
		err = s.s.Close()
	})
	return err
}

func main() {
	code := peer.Run(binding{}, os.Args[1:], os.Stdin, os.Stdout)
	// Terminating the context is where a socket's linger is honoured.
	_ = zmq.Term()
	os.Exit(code)
}
