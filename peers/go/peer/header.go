// Package peer plays one node of a zmqperf topology (source, sink, ping, echo) for the Go
// peers, whatever the binding underneath: the node spec, the control protocol, the
// measurement header and the compact report forms of docs/peers.md. A binding (go-zeromq's
// pure Go zmq4, or pebbe's cgo zmq4) gives it sockets through the Binding interface.
package peer

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The measurement header (docs/wire-format.md): 24 bytes, little-endian.
const (
	HeaderLen     = 24
	FlagTimestamp = 0x01
	FlagEnd       = 0x02
	FlagWarmup    = 0x04
)

// ErrVersion and ErrReserved are the two headers a reader refuses.
var (
	ErrVersion  = errors.New("unsupported header version")
	ErrReserved = errors.New("reserved header flags set")
)

// Header is the decoded measurement header.
type Header struct {
	Flags    uint8
	StreamID uint32
	Sequence uint64
	SendNs   uint64
}

// Put writes the header into the first 24 bytes of b.
func (h Header) Put(b []byte) {
	b[0], b[1], b[2], b[3] = 'Z', 'P', 1, h.Flags
	binary.LittleEndian.PutUint32(b[4:], h.StreamID)
	binary.LittleEndian.PutUint64(b[8:], h.Sequence)
	binary.LittleEndian.PutUint64(b[16:], h.SendNs)
}

// ReadHeader decodes the header of a message: ok is false for a message without one (under
// 24 bytes, or not starting with "ZP"); an unknown version or reserved flags are errors.
func ReadHeader(b []byte) (h Header, ok bool, err error) {
	if len(b) < HeaderLen || b[0] != 'Z' || b[1] != 'P' {
		return h, false, nil
	}
	if b[2] != 1 {
		return h, false, fmt.Errorf("%w %d (this peer reads 1)", ErrVersion, b[2])
	}
	if b[3]&^0x07 != 0 {
		return h, false, fmt.Errorf("%w (0x%02x)", ErrReserved, b[3])
	}
	return Header{
		Flags:    b[3],
		StreamID: binary.LittleEndian.Uint32(b[4:]),
		Sequence: binary.LittleEndian.Uint64(b[8:]),
		SendNs:   binary.LittleEndian.Uint64(b[16:]),
	}, true, nil
}
