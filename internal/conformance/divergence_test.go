package conformance

// The tests named in docs/divergences.md: each pins one rule the contract
// fixes where upstream (upstream.Version) is left to chance, and shows upstream, driven
// from outside, following it (or, for the final tie, not).

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"

	"github.com/preemptbench/preemptbench/internal/agreement"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"

	"github.com/preemptbench/preemptbench/upstream"
)

func allUnschedulable(c *preempt.Cluster) map[string]preempt.Code {
	m := map[string]preempt.Code{}
	for _, n := range c.Nodes {
		m[n.Name] = preempt.Unschedulable
	}
	return m
}

func run(t *testing.T, impl preempt.Implementation, c *preempt.Cluster, req *preempt.Request) preempt.Decision {
	t.Helper()
	d, err := harness.Run(context.Background(), impl, c, req)
	if err != nil {
		t.Fatalf("%s: %v", impl.Name(), err)
	}
	return d
}

// Upstream picks among nodes equal on all five criteria by map order; the
// reference takes the first in candidate order.
func TestDivergenceFinalTie(t *testing.T) {
	s := synth.MustBuild("ties", 30, 1)
	req := &preempt.Request{Pod: s.Pod, Filter: allUnschedulable(s.Cluster), Config: preempt.DefaultConfig(), Now: s.Now}
	refEv, _ := reference.Impl{}.NewEvaluator(s.Cluster)
	upEv, err := upstream.Impl{}.NewEvaluator(s.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	dr, err := refEv.FindCandidates(context.Background(), req)
	if err != nil || len(dr.Candidates) != 30 {
		t.Fatalf("want 30 candidates, got %d (%v)", len(dr.Candidates), err)
	}
	ties := agreement.EqualBest(refEv, dr.Candidates, req)
	if len(ties) != 30 {
		t.Fatalf("want all 30 nodes equal-best, got %v", ties)
	}
	picks := map[string]bool{}
	for range 30 {
		if got := refEv.SelectCandidate(dr.Candidates, req); got.Node != dr.Candidates[0].Node {
			t.Fatalf("reference picked %s, want the first candidate %s", got.Node, dr.Candidates[0].Node)
		}
		got := upEv.SelectCandidate(dr.Candidates, req)
		if !slices.Contains(ties, got.Node) {
			t.Fatalf("upstream picked %s, not equal-best", got.Node)
		}
		picks[got.Node] = true
	}
	if len(picks) < 2 {
		t.Errorf("upstream picked %v in 30 tries; its map order should have varied", picks)
	}
}

// The offset is an input: with one candidate wanted, the dry run stops at
// the first potential node from the offset, in node-name order.
func TestDivergenceOffsetIsAnInput(t *testing.T) {
	s := synth.MustBuild("basic", 10, 1)
	cfg := preempt.Config{MinCandidateNodesPercentage: 0, MinCandidateNodesAbsolute: 1}
	names := []string{}
	for _, n := range s.Cluster.Nodes {
		names = append(names, n.Name)
	}
	slices.Sort(names)
	for offset := range int32(20) {
		req := &preempt.Request{Pod: s.Pod, Filter: allUnschedulable(s.Cluster), Config: cfg, Offset: offset, Now: s.Now}
		want := names[int(offset)%len(names)]
		for _, impl := range []preempt.Implementation{reference.Impl{}, upstream.Impl{}} {
			if d := run(t, impl, s.Cluster, req); d.NominatedNode != want || len(d.Candidates) != 1 {
				t.Errorf("%s offset %d: nominated %s with %d candidates, want %s alone", impl.Name(), offset, d.NominatedNode, len(d.Candidates), want)
			}
		}
	}
}

// Potential nodes are taken in name order, not in the order the cluster
// lists them (upstream: map order).
func TestDivergencePotentialNodesInNameOrder(t *testing.T) {
	b := synth.MustBuild("basic", 3, 1)
	c := b.Cluster
	c.Nodes = []*v1.Node{c.Nodes[2], c.Nodes[0], c.Nodes[1]} // node-2, node-0, node-1
	cfg := preempt.Config{MinCandidateNodesAbsolute: 3, MinCandidateNodesPercentage: 0}
	req := &preempt.Request{Pod: b.Pod, Filter: allUnschedulable(c), Config: cfg, Now: b.Now}
	for _, impl := range []preempt.Implementation{reference.Impl{}, upstream.Impl{}} {
		var got []string
		for _, cand := range run(t, impl, c, req).Candidates {
			got = append(got, cand.Node)
		}
		if diff := cmp.Diff([]string{"node-0", "node-1", "node-2"}, got); diff != "" {
			t.Errorf("%s candidate order (-want +got):\n%s", impl.Name(), diff)
		}
	}
}

// The dry run is upstream's with one worker: it visits exactly the nodes up
// to the stop rule. With 16 workers upstream may check nodes past it and
// which candidates it keeps depends on timing.
func TestDivergenceSequentialDryRun(t *testing.T) {
	s := synth.MustBuild("basic", 50, 1)
	cfg := preempt.Config{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 2} // 5 candidates
	req := &preempt.Request{Pod: s.Pod, Filter: allUnschedulable(s.Cluster), Config: cfg, Offset: 7, Now: s.Now}
	names := []string{}
	for _, n := range s.Cluster.Nodes {
		names = append(names, n.Name)
	}
	slices.Sort(names)
	want := names[7:12]
	for _, impl := range []preempt.Implementation{reference.Impl{}, upstream.Impl{Parallelism: 1}} {
		var got []string
		for _, c := range run(t, impl, s.Cluster, req).Candidates {
			got = append(got, c.Node)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s candidates (-want +got):\n%s", impl.Name(), diff)
		}
	}
	par := run(t, upstream.Impl{Parallelism: 16}, s.Cluster, req)
	if len(par.Candidates) != 5 {
		t.Errorf("parallel upstream kept %d candidates, want the list capacity 5", len(par.Candidates))
	}
	for _, c := range par.Candidates {
		if !slices.Contains(names, c.Node) {
			t.Errorf("parallel upstream candidate %s is not a node", c.Node)
		}
	}
}

// Two victims equal in priority and start time: upstream's MoreImportantPod
// cannot order them (its sort.Slice order then decides who is reprieved);
// the contract orders them by namespace and name, so "a" is reprieved.
func TestDivergenceVictimTieOrder(t *testing.T) {
	b := &preempt.Cluster{}
	b.Nodes = []*v1.Node{testobj.MakeNode().Name("n").Allocatable(map[v1.ResourceName]string{v1.ResourceCPU: "2", v1.ResourcePods: "10"}).Obj()}
	for _, name := range []string{"b", "a"} {
		b.Pods = append(b.Pods, synth.NewPod(synth.PodSpec{Name: name, Node: "n", MilliCPU: 1000, Age: time.Minute}))
	}
	if schedutil.MoreImportantPod(b.Pods[0], b.Pods[1]) || schedutil.MoreImportantPod(b.Pods[1], b.Pods[0]) {
		t.Fatal("upstream orders the two pods; the test needs a tie")
	}
	pod := synth.NewPod(synth.PodSpec{Name: "p", Priority: 10, MilliCPU: 1000, Age: -1})
	req := &preempt.Request{Pod: pod, Filter: allUnschedulable(b), Config: preempt.DefaultConfig(), Now: synth.Base().Add(time.Hour)}
	for _, impl := range []preempt.Implementation{reference.Impl{}, upstream.Impl{}} {
		d := run(t, impl, b, req)
		if diff := cmp.Diff([]preempt.Victim{{Namespace: "default", Name: "b"}}, d.Victims); diff != "" {
			t.Errorf("%s victims (-want +got):\n%s", impl.Name(), diff)
		}
	}
}

// A pod without a start time started at Request.Now (upstream: time.Now()
// at each comparison). The latest-start-time criterion then prefers the node
// whose victim has no start time exactly when Now is after the other one.
func TestDivergenceClock(t *testing.T) {
	c := &preempt.Cluster{}
	for i, age := range []time.Duration{30 * time.Minute, -1} { // node-0: started; node-1: no start time
		name := fmt.Sprintf("node-%d", i)
		c.Nodes = append(c.Nodes, testobj.MakeNode().Name(name).Allocatable(map[v1.ResourceName]string{v1.ResourceCPU: "1", v1.ResourcePods: "10"}).Obj())
		c.Pods = append(c.Pods, synth.NewPod(synth.PodSpec{Name: fmt.Sprintf("v%d", i), Node: name, MilliCPU: 1000, Age: age}))
	}
	pod := synth.NewPod(synth.PodSpec{Name: "p", Priority: 10, MilliCPU: 1000, Age: -1})
	started := c.Pods[0].Status.StartTime.Time
	for _, tc := range []struct {
		now  time.Time
		want string
	}{
		{now: started.Add(time.Hour), want: "node-1"},  // no start time = now = newest
		{now: started.Add(-time.Hour), want: "node-0"}, // now before the other start: oldest
	} {
		req := &preempt.Request{Pod: pod, Filter: allUnschedulable(c), Config: preempt.DefaultConfig(), Now: tc.now}
		for _, impl := range []preempt.Implementation{reference.Impl{}, upstream.Impl{}} {
			if d := run(t, impl, c, req); d.NominatedNode != tc.want {
				t.Errorf("%s with now %v: nominated %s, want %s", impl.Name(), tc.now, d.NominatedNode, tc.want)
			}
		}
	}
}

// Scalar resources' reasons come in name order (upstream ranges over a map).
func TestDivergenceScalarReasonOrder(t *testing.T) {
	c := &preempt.Cluster{Nodes: []*v1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse("1"), v1.ResourcePods: resource.MustParse("10"),
		"example.com/zz": resource.MustParse("1"), "example.com/aa": resource.MustParse("1"), "hugepages-2Mi": resource.MustParse("2Mi")}}}}}
	c.Pods = []*v1.Pod{synth.NewPod(synth.PodSpec{Name: "v", Node: "n", Extra: v1.ResourceList{
		"example.com/zz": resource.MustParse("1"), "example.com/aa": resource.MustParse("1"), "hugepages-2Mi": resource.MustParse("2Mi")}})}
	pod := synth.NewPod(synth.PodSpec{Name: "p", Priority: 10, Extra: v1.ResourceList{
		"example.com/zz": resource.MustParse("1"), "example.com/aa": resource.MustParse("1"), "hugepages-2Mi": resource.MustParse("2Mi")}})
	want := []string{"Insufficient example.com/aa", "Insufficient example.com/zz", "Insufficient hugepages-2Mi"}
	for _, impl := range []preempt.Implementation{reference.Impl{}, upstream.Impl{}} {
		ev, err := impl.NewEvaluator(c)
		if err != nil {
			t.Fatal(err)
		}
		fr := ev.Filter(context.Background(), pod)
		if len(fr.NodeStatuses) != 1 {
			t.Fatalf("%s: %+v", impl.Name(), fr)
		}
		if diff := cmp.Diff(want, fr.NodeStatuses[0].Reasons); diff != "" {
			t.Errorf("%s reasons (-want +got):\n%s", impl.Name(), diff)
		}
	}
}
