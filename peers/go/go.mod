module zmqperf/peers

go 1.21

require (
	github.com/go-zeromq/zmq4 v0.17.0
	github.com/pebbe/zmq4 v1.4.0
	golang.org/x/sys v0.25.0
)

require (
	github.com/go-zeromq/goczmq/v4 v4.2.2 // indirect
	golang.org/x/sync v0.7.0 // indirect
	golang.org/x/text v0.15.0 // indirect
)
