package peer

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"testing"
)

// vectorsPath is spec/header-vectors.json: $ZMQPERF_HEADER_VECTORS, or the repository's.
func vectorsPath() string {
	if p := os.Getenv("ZMQPERF_HEADER_VECTORS"); p != "" {
		return p
	}
	return "../../../spec/header-vectors.json"
}

func TestHeaderVectors(t *testing.T) {
	raw, err := os.ReadFile(vectorsPath())
	if err != nil {
		t.Fatalf("the header vectors: %v (set ZMQPERF_HEADER_VECTORS to spec/header-vectors.json)", err)
	}
	var doc struct {
		Vectors []struct {
			Name   string
			Hex    string
			Expect string
			Fields struct {
				Version  uint8
				Flags    uint8
				StreamID uint32 `json:"stream_id"`
				Sequence uint64
				SendNs   uint64 `json:"send_ns"`
			}
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("the header vectors: %v", err)
	}
	if len(doc.Vectors) == 0 {
		t.Fatal("no vectors in the file")
	}
	for _, v := range doc.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			b, err := hex.DecodeString(v.Hex)
			if err != nil {
				t.Fatal(err)
			}
			h, ok, err := ReadHeader(b)
			switch v.Expect {
			case "header":
				f := v.Fields
				want := Header{Flags: f.Flags, StreamID: f.StreamID, Sequence: f.Sequence, SendNs: f.SendNs}
				if err != nil || !ok || h != want || f.Version != 1 {
					t.Fatalf("decode: got %+v ok=%v err=%v, want %+v", h, ok, err, want)
				}
				out := make([]byte, HeaderLen)
				want.Put(out)
				if !bytes.Equal(out, b[:HeaderLen]) {
					t.Fatalf("encode: got %x, want %x", out, b[:HeaderLen])
				}
			case "plain":
				if ok || err != nil {
					t.Fatalf("want no header, got ok=%v err=%v", ok, err)
				}
			case "error:unsupported-version":
				if !errors.Is(err, ErrVersion) {
					t.Fatalf("want the version refused, got ok=%v err=%v", ok, err)
				}
			case "error:reserved-flags":
				if !errors.Is(err, ErrReserved) {
					t.Fatalf("want reserved flags refused, got ok=%v err=%v", ok, err)
				}
			default:
				t.Fatalf("unknown expectation %q", v.Expect)
			}
		})
	}
}

func TestHistRoundsToThreeDigits(t *testing.T) {
	h := hist{}
	for _, v := range []uint64{123456, 123999, 999, 1000, 1009} {
		h.record(v)
	}
	want := hist{123000: 2, 999: 1, 1000: 2}
	if len(h) != len(want) {
		t.Fatalf("got %v, want %v", h, want)
	}
	for k, c := range want {
		if h[k] != c {
			t.Fatalf("got %v, want %v", h, want)
		}
	}
}

func TestRunsSplitOnGaps(t *testing.T) {
	r := &runs{Runs: map[uint32][][3]uint64{}}
	for _, s := range []uint64{0, 1, 2, 5, 6, 3} {
		r.record(9, s)
	}
	r.record(4, 0)
	r.record(9, 4)
	got := r.Runs[9]
	want := [][2]uint64{{0, 3}, {5, 2}, {3, 2}}
	if len(got) != len(want) || len(r.Runs[4]) != 1 {
		t.Fatalf("got %v", r.Runs)
	}
	for i, w := range want {
		if got[i][0] != w[0] || got[i][1] != w[1] {
			t.Fatalf("run %d: got %v, want %v", i, got[i], w)
		}
	}
}
