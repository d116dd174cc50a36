package wire

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"

	"github.com/preemptbench/preemptbench/internal/conformance"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/preempttest"
	"github.com/preemptbench/preemptbench/reference"

	"github.com/preemptbench/preemptbench/upstream"
)

// The test binary is its own child: with PREEMPTBENCH_WIRE_CHILD set it
// serves the implementation that names instead of running the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("PREEMPTBENCH_WIRE_CHILD") {
	case "":
		os.Exit(m.Run())
	case "reference":
		os.Exit(Main(reference.Impl{}))
	case "reference-codes":
		os.Exit(Main(withCodes{reference.Impl{}}))
	case "upstream-codes":
		os.Exit(Main(withCodes{upstream.Impl{}}))
	case "filter-panic":
		os.Exit(Main(misbehaving{how: "filter-panic"}))
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
	case "no-hello":
		select {}
	case "sleeper":
		time.Sleep(30 * time.Second)
		os.Exit(0)
	case "exits-leaving-stderr":
		// A grandchild out of the child's group holds its stderr.
		grandchild(true)
		os.Stderr.WriteString("dying\n")
		os.Exit(3)
	case "spawner":
		// A grandchild in the child's group, and a temporary directory.
		grandchild(false)
		os.Exit(Main(reference.Impl{}))
	case "memlimit":
		// Writes its soft memory limit to $PREEMPTBENCH_WIRE_REPORT.
		lim := debug.SetMemoryLimit(-1)
		if err := os.WriteFile(os.Getenv("PREEMPTBENCH_WIRE_REPORT"), []byte(strconv.FormatInt(lim, 10)), 0o644); err != nil {
			panic(err)
		}
		os.Exit(Main(reference.Impl{}))
	case "long-line":
		os.Stdout.WriteString("{\"protocol\": \"" + Protocol + "\", \"name\": \"long-line\"}\n")
		os.Stdout.WriteString(strings.Repeat("x", 3<<20))
		select {}
	case "long-name":
		os.Stdout.WriteString("{\"protocol\": \"" + Protocol + "\", \"name\": \"" + strings.Repeat("ü", 3<<20/2) + "\"}\n")
		select {}
	}
}

// grandchild starts the test binary as a sleeper holding the child's
// stderr (in a group of its own when leave), makes a temporary directory
// and writes their pid and path to $PREEMPTBENCH_WIRE_REPORT.
func grandchild(leave bool) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "PREEMPTBENCH_WIRE_CHILD=sleeper")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: leave}
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "spawned-")
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o644); err != nil {
		panic(err)
	}
	if err := os.WriteFile(os.Getenv("PREEMPTBENCH_WIRE_REPORT"), []byte(fmt.Sprintf("%d %s", cmd.Process.Pid, dir)), 0o644); err != nil {
		panic(err)
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
	return &misbehavingEvaluator{ev, m.how, c}, err
}

type misbehavingEvaluator struct {
	preempt.Evaluator
	how     string
	cluster *preempt.Cluster
}

func (m *misbehavingEvaluator) Filter(ctx context.Context, pod *v1.Pod) preempt.FilterResult {
	if m.how == "filter-panic" {
		panic("no filter today")
	}
	return m.Evaluator.Filter(ctx, pod)
}

// FilterCodes makes the misbehaving evaluator a preempt.CodeFilter.
func (m *misbehavingEvaluator) FilterCodes(ctx context.Context, pod *v1.Pod, dst []preempt.Code) []preempt.Code {
	if m.how == "filter-panic" {
		panic("no filter codes today")
	}
	return preempt.FilterCodesOf(ctx, m.Evaluator, preempt.NewNodeOrder(m.cluster), pod, dst)
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
	s, err := synth.Build("basic", 3, 1)
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
	// The timeouts leave a loaded machine time to start the child (its
	// Hello counts): only hang waits for one.
	for _, tt := range []struct {
		child   string
		timeout time.Duration
		want    string
	}{
		{"crash", time.Minute, "exited (exit status 3)"},
		{"hang", 5 * time.Second, "did not answer within 5s (awaiting the answer to request 4, Preempt on evaluator 1); killed"},
	} {
		t.Run(tt.child, func(t *testing.T) {
			c := child(t, tt.child, tt.timeout)
			start := time.Now()
			r, err := harness.Decide(context.Background(), c, cl, pod, preempt.DefaultConfig(), 0, synth.Base())
			if err != nil {
				t.Fatal(err)
			}
			if r.Decision.Status != preempt.Error || !strings.Contains(r.Decision.Message, tt.want) {
				t.Errorf("decision %s %q, want an Error saying %q", r.Decision.Status, r.Decision.Message, tt.want)
			}
			if d := time.Since(start); d > min(tt.timeout, 5*time.Second)+15*time.Second {
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
		c := child(t, "garbage", time.Minute)
		_, err := c.NewEvaluator(cl)
		if err == nil || !strings.Contains(err.Error(), `answered "this is not JSON", not the protocol`) {
			t.Errorf("NewEvaluator: %v", err)
		}
	})
	t.Run("old-protocol", func(t *testing.T) {
		c := child(t, "old", time.Minute)
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

// withCodes is impl whose evaluators are preempt.CodeFilters, and
// preempt.GateSetters and preempt.BehaviourSetters when impl's are.
type withCodes struct{ preempt.Implementation }

func (w withCodes) NewEvaluator(c *preempt.Cluster) (preempt.Evaluator, error) {
	ev, err := w.Implementation.NewEvaluator(c)
	return &codesEvaluator{ev, preempt.NewNodeOrder(c)}, err
}

type codesEvaluator struct {
	preempt.Evaluator
	order *preempt.NodeOrder
}

func (e *codesEvaluator) FilterCodes(ctx context.Context, pod *v1.Pod, dst []preempt.Code) []preempt.Code {
	return e.order.Codes(e.Evaluator.Filter(ctx, pod), dst)
}
func (e *codesEvaluator) SetFeatureGates(g map[string]bool) { preempt.SetFeatureGates(e.Evaluator, g) }
func (e *codesEvaluator) SetBehaviour(b preempt.Behaviour) {
	if s, ok := e.Evaluator.(preempt.BehaviourSetter); ok {
		s.SetBehaviour(b)
	}
}

// podLevelProblem: n1 (1 cpu) full, n2 (1 cpu) empty, and a preemptor
// whose pod-level requests (2 cpu) exceed its container's (100m): with
// PodLevelResources (on by default) it fits nowhere, with the gate off it
// fits n2.
func podLevelProblem(now time.Time) (*preempt.Cluster, *v1.Pod) {
	c, p := conformance.OnePodFull(now)
	n2 := c.Nodes[0].DeepCopy()
	n2.Name, n2.Labels["kubernetes.io/hostname"] = "n2", "n2"
	c.Nodes = append(c.Nodes, n2)
	p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("100m")
	p.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("1Gi")}}
	return c, p
}

// The filter phase's gates and release behaviour reach the child: on one
// evaluator, set one after the other (first never set: the child's
// defaults), the child's Filter and FilterCodes answer as its
// implementation in process given the same, and the settings change the
// answer (else the test would show nothing).
func TestFilterConfigReachesTheChild(t *testing.T) {
	now := testobj.Epoch.Add(time.Hour)
	podLevelOff := map[string]bool{"PodLevelResources": false, "InPlacePodLevelResourcesVerticalScaling": false,
		"PodLevelResourcesFixDefaulting": false, "PodLevelResourcesFixKubeletQOSClass": false}
	v136, err := preempt.ReleaseBehaviour("v1.36.3")
	if err != nil {
		t.Fatal(err)
	}
	v137, err := preempt.ReleaseBehaviour(preempt.CurrentRelease)
	if err != nil {
		t.Fatal(err)
	}
	gates := func(g map[string]bool) func(preempt.Evaluator) {
		return func(ev preempt.Evaluator) { preempt.SetFeatureGates(ev, g) }
	}
	behaviour := func(b preempt.Behaviour) func(preempt.Evaluator) {
		return func(ev preempt.Evaluator) { ev.(preempt.BehaviourSetter).SetBehaviour(b) }
	}
	for _, tt := range []struct {
		name    string
		child   string
		impl    preempt.Implementation // the child's, in process
		problem func(time.Time) (*preempt.Cluster, *v1.Pod)
		steps   []func(preempt.Evaluator)
	}{
		{"gates/upstream", "upstream-codes", withCodes{upstream.Impl{}}, podLevelProblem,
			[]func(preempt.Evaluator){nil, gates(podLevelOff), gates(nil), gates(podLevelOff), gates(map[string]bool{"PodLevelResources": true})}},
		{"behaviour/reference", "reference-codes", withCodes{reference.Impl{}}, conformance.ResizedInPlace,
			[]func(preempt.Evaluator){nil, behaviour(v136), behaviour(v137), behaviour(v136)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c, pod := tt.problem(now)
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			local, err := tt.impl.NewEvaluator(c)
			if err != nil {
				t.Fatal(err)
			}
			remote, err := child(t, tt.child, 0).NewEvaluator(c)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := remote.(preempt.CodeFilter); !ok {
				t.Fatalf("the child's evaluator is no preempt.CodeFilter")
			}
			order := preempt.NewNodeOrder(c)
			answers := map[string]bool{}
			for i, set := range tt.steps {
				if set != nil {
					set(local)
					set(remote)
				}
				want := local.Filter(ctx, pod)
				if diff := cmp.Diff(want, remote.Filter(ctx, pod)); diff != "" {
					t.Errorf("step %d: Filter differs (-in process +over the wire):\n%s", i, diff)
				}
				wantCodes := order.Codes(want, nil)
				if diff := cmp.Diff(wantCodes, remote.(preempt.CodeFilter).FilterCodes(ctx, pod, nil)); diff != "" {
					t.Errorf("step %d: FilterCodes differs (-in process +over the wire):\n%s", i, diff)
				}
				answers[fmt.Sprint(wantCodes)] = true
			}
			if len(answers) < 2 {
				t.Errorf("every setting gives the same filter codes %v: the problem shows nothing", answers)
			}
		})
	}
}

// A filter phase that fails in the child answers nothing found, and the
// evaluator's next Preempt is an Error decision naming the failure (the
// one after it asks the child again); a stream, which filters with
// FilterCodes, stops on it.
func TestFilterFailureReachesTheDecision(t *testing.T) {
	cl, pod := problem(t)
	c := child(t, "filter-panic", 0)
	ctx := context.Background()
	r, err := harness.Decide(ctx, c, cl, pod, preempt.DefaultConfig(), 0, synth.Base())
	if err != nil {
		t.Fatal(err)
	}
	want := "wire: the filter phase (Filter) failed in the child: misbehaving-filter-panic panicked in Filter: no filter today"
	if r.Decision.Status != preempt.Error || r.Decision.Message != want {
		t.Errorf("decision %s %q, want an Error saying %q", r.Decision.Status, r.Decision.Message, want)
	}
	if len(r.Feasible)+len(r.Filter.NodeStatuses) != 0 {
		t.Errorf("the failed filter phase answered %+v, want nothing found", r.Filter)
	}
	// The error was the decision's: the next Preempt is the child's (the
	// reference's, which has not failed).
	ev, err := c.NewEvaluator(cl)
	if err != nil {
		t.Fatal(err)
	}
	ev.Filter(ctx, pod)
	if d := harness.Preempt(ctx, ev, cl, r.Request); d.Status != preempt.Error {
		t.Errorf("first Preempt after the failed Filter: %s %q, want Error", d.Status, d.Message)
	}
	refDecision, err := harness.Run(ctx, reference.Impl{}, cl, r.Request)
	if err != nil {
		t.Fatal(err)
	}
	if d := harness.Preempt(ctx, ev, cl, r.Request); !cmp.Equal(refDecision, d) {
		t.Errorf("second Preempt: %s %q, want the reference's %s %q", d.Status, d.Message, refDecision.Status, refDecision.Message)
	}

	_, err = harness.RunStream(ctx, c, harness.Stream{Cluster: cl, Preemptors: []*v1.Pod{pod}, Config: preempt.DefaultConfig(), Now: synth.Base()})
	wantStream := "wire: the filter phase (FilterCodes) failed in the child: misbehaving-filter-panic panicked in FilterCodes: no filter codes today"
	if err == nil || !strings.Contains(err.Error(), wantStream) {
		t.Errorf("RunStream: %v, want an error saying %q", err, wantStream)
	}
}
