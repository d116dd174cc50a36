package wire_test

import (
	"os"
	"time"

	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/wire"
)

// A child's whole main: it serves an implementation (reference.Impl stands
// for yours, built in a module of its own, against another
// k8s.io/kubernetes release if need be) on its standard input and output.
func ExampleMain() {
	_ = func() { os.Exit(wire.Main(reference.Impl{})) }
}

// The parent's side: the child as a preempt.Implementation, started on
// first use; `compare decide -impl exec:/tmp/ownimpl-wire` does the same.
func ExampleCommand() {
	var impl preempt.Implementation = wire.Command(30*time.Second, "/tmp/ownimpl-wire")
	_ = impl
}
