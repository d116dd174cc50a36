// Command ownimpl-wire serves ownimpl over package wire's protocol, as a
// child process: the shape of an implementation built against another
// k8s.io/kubernetes release, in a module of its own, that preemptbench
// compares with its own:
//
//	go build -o /tmp/ownimpl-wire ./cmd/ownimpl-wire
//	compare decide -cluster c.yaml -pod p.yaml -impl reference,exec:/tmp/ownimpl-wire
package main

import (
	"os"

	"example.com/ownimpl"
	"github.com/preemptbench/preemptbench/wire"
)

func main() { os.Exit(wire.Main(ownimpl.Impl{})) }
