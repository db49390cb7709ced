package main

import (
	"testing"

	"zmqperf/peers/peer"
)

// The peer against itself over tcp on 127.0.0.1 (the header vectors are tested in ./peer).
func TestLoopback(t *testing.T) {
	for _, c := range peer.SelfTests() {
		t.Run(c.Name, func(t *testing.T) {
			if err := c.Run(binding{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
