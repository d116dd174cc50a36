// Command v1.36.3 serves the upstream adapter at k8s.io/kubernetes v1.36.3
// (internal/upstream) over package wire's protocol on its standard input
// and output: upstream@v1.36.3. Package releases builds and starts it;
// by hand:
//
//	go build -tags preemptbench_v1_36 -o upstream-v1.36.3 .
//	compare decide -impl exec:./upstream-v1.36.3,upstream ...
//
// -random-final-tie leaves pickOneNodeForPreemption's final tie to
// upstream's map order; by default it is broken in list order
// (upstream.Impl.ListOrderTie), so that the answers over the wire are a
// function of the problem.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/preemptbench/preemptbench/releases/v1.36.3/internal/upstream"
	"github.com/preemptbench/preemptbench/wire"
)

func main() {
	randomTie := flag.Bool("random-final-tie", false, "break pickOneNodeForPreemption's final tie in upstream's (map) order, not in list order")
	version := flag.Bool("version", false, "print the release and exit")
	flag.Parse()
	if *version {
		fmt.Println(upstream.Version)
		return
	}
	// Upstream's asynchronous executor logs the API errors it meets to
	// klog; the decision reports them, and stderr is the parent's.
	klog.SetLogger(logr.Discard())
	os.Exit(wire.Main(upstream.Impl{ListOrderTie: !*randomTie}))
}
