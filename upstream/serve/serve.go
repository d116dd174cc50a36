// Package serve is the main of a release's child: package upstream, built
// at the release its module pins (releases/VERSION, with the release's
// build tags), served over package wire's protocol on the standard input
// and output. A release module's main.go is one call to Main; package
// releases builds and starts it as upstream@VERSION. By hand:
//
//	cd releases/v1.36.3 && go build -tags preemptbench_v1_36 -o upstream-v1.36.3 .
//	compare decide -impl exec:./upstream-v1.36.3,upstream ...
//
// -random-final-tie leaves pickOneNodeForPreemption's final tie to
// upstream's map order; by default it is broken in list order
// (upstream.Impl.ListOrderTie), so that the answers over the wire are a
// function of the problem. -version prints upstream.Version.
package serve

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/preemptbench/preemptbench/upstream"
	"github.com/preemptbench/preemptbench/wire"
)

// Main serves upstream.Impl on stdin and stdout as args say, and returns
// the exit code: 2 for bad flags, 1 when the protocol breaks.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("upstream@"+upstream.Version, flag.ContinueOnError)
	fs.SetOutput(stderr)
	randomTie := fs.Bool("random-final-tie", false, "break pickOneNodeForPreemption's final tie in upstream's (map) order, not in list order")
	version := fs.Bool("version", false, "print the release and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *version {
		fmt.Fprintln(stdout, upstream.Version)
		return 0
	}
	// Upstream's asynchronous executor logs the API errors it meets to
	// klog; the decision reports them, and stderr is the parent's.
	klog.SetLogger(logr.Discard())
	impl := upstream.Impl{ListOrderTie: !*randomTie}
	if err := wire.Serve(impl, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", impl.Name(), err)
		return 1
	}
	return 0
}
