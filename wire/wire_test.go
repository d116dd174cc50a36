package wire

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/preemptbench/preemptbench/harness"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/preempttest"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/scenario"
)

// The test binary is its own child: with PREEMPTBENCH_WIRE_CHILD set it
// serves the implementation that names instead of running the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("PREEMPTBENCH_WIRE_CHILD") {
	case "":
		os.Exit(m.Run())
	case "reference":
		os.Exit(Main(reference.Impl{}))
	case "crash":
		os.Exit(Main(misbehaving{how: "crash"}))
	case "hang":
		os.Exit(Main(misbehaving{how: "hang"}))
	case "garbage":
		os.Stdout.WriteString("{\"protocol\": \"" + Protocol + "\", \"name\": \"garbage\"}\nthis is not JSON\n")
		select {}
	case "old":
		os.Stdout.WriteString("{\"protocol\": \"preemptbench-wire/0\", \"name\": \"old\"}\n")
		select {}
	}
}

func child(t *testing.T, which string, timeout time.Duration) *Client {
	t.Setenv("PREEMPTBENCH_WIRE_CHILD", which)
	c := Command(timeout, os.Args[0])
	t.Cleanup(func() { c.Close() })
	return c
}

// The whole conformance suite passes against the reference served over
// the protocol: every stage, API calls made on the parent's clientset,
// Update and FilterCodes when the child's evaluator has them.
func TestSuiteOverTheWire(t *testing.T) {
	c := child(t, "reference", 0)
	if c.Name() != "reference" {
		t.Fatalf("Name() = %q, want the child's", c.Name())
	}
	preempttest.Run(t, c)
}

// misbehaving is the reference until the call it fails at.
type misbehaving struct{ how string }

func (m misbehaving) Name() string { return "misbehaving-" + m.how }
func (m misbehaving) NewEvaluator(c *preempt.Cluster) (preempt.Evaluator, error) {
	ev, err := reference.Impl{}.NewEvaluator(c)
	return &misbehavingEvaluator{ev, m.how}, err
}

type misbehavingEvaluator struct {
	preempt.Evaluator
	how string
}

func (m *misbehavingEvaluator) Preempt(ctx context.Context, cs kubernetes.Interface, req *preempt.Request) preempt.Decision {
	switch m.how {
	case "crash":
		os.Exit(3)
	case "hang":
		select {}
	}
	return m.Evaluator.Preempt(ctx, cs, req)
}

func problem(t *testing.T) (*preempt.Cluster, *v1.Pod) {
	s, err := scenario.Build("basic", 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	return s.Cluster, s.Pod
}

// A child that crashes, hangs or answers garbage gives an Error decision
// (or an error) naming what happened, within the timeout; the next
// evaluator starts a new child.
func TestChildFailures(t *testing.T) {
	cl, pod := problem(t)
	for _, tt := range []struct{ child, want string }{
		{"crash", "exited (exit status 3)"},
		{"hang", "did not answer within 1s; killed"},
	} {
		t.Run(tt.child, func(t *testing.T) {
			c := child(t, tt.child, time.Second)
			start := time.Now()
			r, err := harness.Decide(context.Background(), c, cl, pod, preempt.DefaultConfig(), 0, scenario.Base())
			if err != nil {
				t.Fatal(err)
			}
			if r.Decision.Status != preempt.Error || !strings.Contains(r.Decision.Message, tt.want) {
				t.Errorf("decision %s %q, want an Error saying %q", r.Decision.Status, r.Decision.Message, tt.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			// A new child for the next evaluator, whose calls are not
			// confused with the dead child's evaluators (collected
			// evaluators of the dead child release nothing in the new
			// one, whose ids start at 1 again).
			ev, err := c.NewEvaluator(cl)
			if err != nil {
				t.Fatalf("NewEvaluator after the child died: %v", err)
			}
			runtime.GC()
			time.Sleep(10 * time.Millisecond) // the cleanups run
			if fr := ev.Filter(context.Background(), pod); len(fr.Feasible)+len(fr.NodeStatuses) != len(cl.Nodes) {
				t.Errorf("the new child's evaluator filters %d of %d nodes (an evaluator of the dead child's released in it?)", len(fr.Feasible)+len(fr.NodeStatuses), len(cl.Nodes))
			}
		})
	}
	t.Run("garbage", func(t *testing.T) {
		c := child(t, "garbage", time.Second)
		_, err := c.NewEvaluator(cl)
		if err == nil || !strings.Contains(err.Error(), `answered "this is not JSON", not the protocol`) {
			t.Errorf("NewEvaluator: %v", err)
		}
	})
	t.Run("old-protocol", func(t *testing.T) {
		c := child(t, "old", time.Second)
		_, err := c.NewEvaluator(cl)
		if err == nil || !strings.Contains(err.Error(), "want a Hello of protocol "+Protocol) {
			t.Errorf("NewEvaluator: %v", err)
		}
	})
	t.Run("no-such-command", func(t *testing.T) {
		c := Command(time.Second, "/nonexistent/child")
		if _, err := c.NewEvaluator(cl); err == nil || !strings.Contains(err.Error(), "starting /nonexistent/child") {
			t.Errorf("NewEvaluator: %v", err)
		}
		if c.Name() != "exec:/nonexistent/child" {
			t.Errorf("Name() = %q", c.Name())
		}
	})
}
