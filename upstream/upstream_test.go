package upstream_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/upstream"
)

// now is the decisions' clock, 2026-01-02T03:04:05Z.
var now = testobj.Epoch.AddDate(0, 0, 1).Add(3*time.Hour + 4*time.Minute + 5*time.Second)

// node is a node of cpu, 32Gi and 110 pods.
func node(name, cpu string) *testobj.NodeWrapper {
	return testobj.MakeNode().Name(name).Allocatable(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: "32Gi", v1.ResourcePods: "110"})
}

// pod is a pod of namespace default and uid uid-<name> with one container
// c requesting cpu and mem, bound to nodeName ("" for none).
func pod(name, nodeName string, prio int32, cpu, mem string) *testobj.PodWrapper {
	return testobj.MakePod().Namespace("default").Name(name).UID("uid-" + name).Node(nodeName).Priority(prio).Container("c").CPU(cpu).Memory(mem)
}

// smallCluster: three nodes (4 cpu, 32Gi, 110 pods) with four pods of
// priority 0 at 900m/500Mi each, and on node-b a pod of priority 5
// nominated there.
func smallCluster() *preempt.Cluster {
	c := &preempt.Cluster{}
	for _, n := range []string{"node-a", "node-b", "node-c"} {
		c.Nodes = append(c.Nodes, node(n, "4").Obj())
		for i := 0; i < 4; i++ {
			p := pod(fmt.Sprintf("%s-p%d", n, i), n, 0, "900m", "500Mi")
			if i == 0 {
				// one pod with a start time; the others take the request's
				p.StartTime(now.Add(-time.Hour))
			}
			c.Pods = append(c.Pods, p.Obj())
		}
	}
	c.Pods = append(c.Pods, pod("nominated", "", 5, "100m", "1Mi").NominatedNodeName("node-b").Obj())
	return c
}

func preemptor() *v1.Pod {
	return pod("preemptor", "", 10, "3000m", "1Gi").Obj()
}

func allUnschedulable(c *preempt.Cluster) map[string]preempt.Code {
	m := map[string]preempt.Code{}
	for _, n := range c.Nodes {
		m[n.Name] = preempt.Unschedulable
	}
	return m
}

func victims(names ...string) []preempt.Victim {
	var out []preempt.Victim
	for _, n := range names {
		out = append(out, preempt.Victim{Namespace: "default", Name: n, Priority: 0})
	}
	return out
}

func victimActions(names ...string) []preempt.Action {
	var out []preempt.Action
	for _, n := range names {
		out = append(out,
			preempt.Action{Verb: "patch", Subresource: "status", Namespace: "default", Name: n, Sets: []string{"conditions[DisruptionTarget]"}},
			preempt.Action{Verb: "delete", Namespace: "default", Name: n},
		)
	}
	return out
}

func TestPreemptSmallCluster(t *testing.T) {
	for _, tc := range []struct {
		offset int32
		node   string
	}{{0, "node-a"}, {1, "node-b"}, {2, "node-c"}, {4, "node-b"}} {
		t.Run(fmt.Sprintf("offset %d", tc.offset), func(t *testing.T) {
			c := smallCluster()
			req := &preempt.Request{
				Pod:    preemptor(),
				Filter: allUnschedulable(c),
				// one candidate is enough: the first node visited wins
				Config: preempt.Config{MinCandidateNodesPercentage: 0, MinCandidateNodesAbsolute: 1},
				Offset: tc.offset,
				Now:    now,
			}
			d, err := harness.Run(context.Background(), upstream.Impl{}, c, req)
			if err != nil {
				t.Fatal(err)
			}
			// node-X-p0 started an hour ago (the most important pod, kept);
			// the others tie on priority and start time and are ordered
			// by name.
			vs := victims(tc.node+"-p1", tc.node+"-p2", tc.node+"-p3")
			// Asynchronous preemption: the nomination first, then the
			// cleared nominations and the victims.
			actions := []preempt.Action{{Verb: "patch", Subresource: "status", Namespace: "default", Name: "preemptor", Sets: []string{"nominatedNodeName=" + tc.node}}}
			if tc.node == "node-b" {
				actions = append(actions, preempt.Action{Verb: "patch", Subresource: "status", Namespace: "default", Name: "nominated", Sets: []string{"nominatedNodeName=null"}})
			}
			actions = append(actions, victimActions(tc.node+"-p1", tc.node+"-p2", tc.node+"-p3")...)
			want := preempt.Decision{
				Status:        preempt.Success,
				Message:       "found a potential placement for pod on node " + tc.node + ", preempting 3 victims",
				NominatedNode: tc.node,
				Victims:       vs,
				Eligible:      true,
				Candidates:    []preempt.Candidate{{Node: tc.node, Victims: vs}},
				NodeStatuses:  []preempt.NodeStatus{},
				Actions:       actions,
			}
			if diff := cmp.Diff(want, d); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPreemptAllCandidates(t *testing.T) {
	// With the default config every node is visited; node-b is the only
	// one whose victims started last (p0 of node-b has no start time).
	c := smallCluster()
	for _, p := range c.Pods {
		if p.Name == "node-b-p0" {
			p.Status.StartTime = nil
		}
	}
	req := &preempt.Request{Pod: preemptor(), Filter: allUnschedulable(c), Config: preempt.DefaultConfig(), Offset: 2, Now: now}
	d, err := harness.Run(context.Background(), upstream.Impl{}, c, req)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != preempt.Success {
		t.Fatalf("status %s %q", d.Status, d.Message)
	}
	var order []string
	for _, cand := range d.Candidates {
		order = append(order, cand.Node)
	}
	if diff := cmp.Diff([]string{"node-c", "node-a", "node-b"}, order); diff != "" {
		t.Errorf("candidate order (-want +got):\n%s", diff)
	}
	// On node-b all four pods tie: p0 is kept (name order), p1..p3 go.
	// On node-a and node-c the victims' earliest start time is also Now,
	// so pickOneNodeForPreemption ties on all criteria; any node is fine.
	if d.NominatedNode == "" {
		t.Errorf("no nominated node")
	}
}

func TestPreemptionPolicyNever(t *testing.T) {
	c := smallCluster()
	p := pod("preemptor", "", 10, "3000m", "1Gi").PreemptionPolicy(v1.PreemptNever).Obj()
	req := &preempt.Request{Pod: p, Filter: allUnschedulable(c), Config: preempt.DefaultConfig(), Now: now}
	d, err := harness.Run(context.Background(), upstream.Impl{}, c, req)
	if err != nil {
		t.Fatal(err)
	}
	want := preempt.Decision{
		Status:       preempt.Unschedulable,
		Message:      "not eligible due to preemptionPolicy=Never.",
		Victims:      []preempt.Victim{},
		Candidates:   []preempt.Candidate{},
		NodeStatuses: []preempt.NodeStatus{},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
}

func TestNoResolvableNode(t *testing.T) {
	c := smallCluster()
	req := &preempt.Request{Pod: preemptor(), Config: preempt.DefaultConfig(), Now: now}
	d, err := harness.Run(context.Background(), upstream.Impl{}, c, req)
	if err != nil {
		t.Fatal(err)
	}
	want := preempt.Decision{
		Status:       preempt.Unschedulable,
		Message:      "0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
		Eligible:     true,
		Victims:      []preempt.Victim{},
		Candidates:   []preempt.Candidate{},
		NodeStatuses: []preempt.NodeStatus{},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
}

func TestNoCandidate(t *testing.T) {
	// A preemptor larger than any node: every node fails after removing
	// all victims.
	c := smallCluster()
	p := pod("preemptor", "", 10, "5", "1Gi").Obj()
	req := &preempt.Request{Pod: p, Filter: map[string]preempt.Code{"node-a": preempt.Unschedulable, "node-c": preempt.Unschedulable}, Config: preempt.DefaultConfig(), Now: now}
	d, err := harness.Run(context.Background(), upstream.Impl{}, c, req)
	if err != nil {
		t.Fatal(err)
	}
	want := preempt.Decision{
		Status:     preempt.Unschedulable,
		Message:    "0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 Insufficient cpu.",
		Eligible:   true,
		Victims:    []preempt.Victim{},
		Candidates: []preempt.Candidate{},
		NodeStatuses: []preempt.NodeStatus{
			{Node: "node-a", Code: preempt.UnschedulableAndUnresolvable, Reasons: []string{"Insufficient cpu"}},
			{Node: "node-c", Code: preempt.UnschedulableAndUnresolvable, Reasons: []string{"Insufficient cpu"}},
		},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
}

func TestPDBViolation(t *testing.T) {
	c := smallCluster()
	for _, p := range c.Pods {
		p.Labels = map[string]string{"app": "x"}
	}
	c.PDBs = []*policyv1.PodDisruptionBudget{testobj.MakePDB().Namespace("default").Name("pdb").MinAvailableCount(1).MatchLabel("app", "x").DisruptionsAllowed(1).Obj()}
	req := &preempt.Request{Pod: preemptor(), Filter: map[string]preempt.Code{"node-a": preempt.Unschedulable}, Config: preempt.DefaultConfig(), Now: now}
	d, err := harness.Run(context.Background(), upstream.Impl{}, c, req)
	if err != nil {
		t.Fatal(err)
	}
	// Importance order p0 (started earlier), p1, p2, p3; the budget allows
	// one disruption, so p1, p2 and p3 violate it and are reprieved first:
	// p1 fits back, p2 and p3 do not; then p0 does not fit either. The
	// victims, in importance order, are p0, p2 and p3, two of them
	// violating.
	vs := victims("node-a-p0", "node-a-p2", "node-a-p3")
	if d.Status != preempt.Success || d.NominatedNode != "node-a" || d.NumPDBViolations != 2 {
		t.Fatalf("got %s %q on %q with %d violations", d.Status, d.Message, d.NominatedNode, d.NumPDBViolations)
	}
	if diff := cmp.Diff(vs, d.Victims); diff != "" {
		t.Errorf("victims (-want +got):\n%s", diff)
	}
}

func TestInputsUnchanged(t *testing.T) {
	c := smallCluster()
	req := &preempt.Request{Pod: preemptor(), Filter: allUnschedulable(c), Config: preempt.DefaultConfig(), Offset: 1, Now: now}
	cBefore := &preempt.Cluster{}
	for _, n := range c.Nodes {
		cBefore.Nodes = append(cBefore.Nodes, n.DeepCopy())
	}
	for _, p := range c.Pods {
		cBefore.Pods = append(cBefore.Pods, p.DeepCopy())
	}
	podBefore := req.Pod.DeepCopy()
	filterBefore := map[string]preempt.Code{}
	for k, v := range req.Filter {
		filterBefore[k] = v
	}

	ev, err := upstream.Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ev.Filter(ctx, req.Pod)
	ev.PodEligibleToPreemptOthers(req)
	dr, err := ev.FindCandidates(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	ev.SelectVictimsOnNode(ctx, req, "node-b")
	best := ev.SelectCandidate(dr.Candidates, req)
	if best == nil {
		t.Fatal("no candidate")
	}
	if err := ev.PrepareCandidate(ctx, harness.NewClientset(c, req.Pod), best, req); err != nil {
		t.Fatal(err)
	}
	ev.Preempt(ctx, harness.NewClientset(c, req.Pod), req)

	if diff := cmp.Diff(cBefore, c); diff != "" {
		t.Errorf("cluster changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(podBefore, req.Pod); diff != "" {
		t.Errorf("preemptor changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(filterBefore, req.Filter); diff != "" {
		t.Errorf("filter changed (-before +after):\n%s", diff)
	}
}

func TestSameRequestTwice(t *testing.T) {
	c := smallCluster()
	ev, err := upstream.Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	// One candidate: with all three, the nodes tie on every criterion and
	// upstream picks one in map order.
	req := &preempt.Request{Pod: preemptor(), Filter: allUnschedulable(c), Config: preempt.Config{MinCandidateNodesAbsolute: 1}, Offset: 1, Now: now}
	run := func() preempt.Decision {
		cs := harness.NewClientset(c, req.Pod)
		cs.ClearActions()
		d := ev.Preempt(context.Background(), cs, req)
		d.Actions = harness.Actions(cs.Actions())
		return d
	}
	first := run()
	if first.Status != preempt.Success {
		t.Fatalf("status %s %q", first.Status, first.Message)
	}
	// A request at another time in between rebuilds the framework.
	other := *req
	other.Now = now.Add(time.Minute)
	_ = ev.Preempt(context.Background(), harness.NewClientset(c, req.Pod), &other)
	second := run()
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("second decision differs (-first +second):\n%s", diff)
	}
}

func TestStages(t *testing.T) {
	c := smallCluster()
	ev, err := upstream.Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p := preemptor()
	fr := ev.Filter(ctx, p)
	want := preempt.FilterResult{
		Feasible: []string{},
		NodeStatuses: []preempt.NodeStatus{
			{Node: "node-a", Code: preempt.Unschedulable, Reasons: []string{"Insufficient cpu"}},
			{Node: "node-b", Code: preempt.Unschedulable, Reasons: []string{"Insufficient cpu"}},
			{Node: "node-c", Code: preempt.Unschedulable, Reasons: []string{"Insufficient cpu"}},
		},
	}
	if diff := cmp.Diff(want, fr); diff != "" {
		t.Errorf("filter (-want +got):\n%s", diff)
	}
	req := &preempt.Request{Pod: p, Filter: fr.Codes(), Config: preempt.Config{MinCandidateNodesAbsolute: 2}, Offset: 2, Now: now}
	dr, err := ev.FindCandidates(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	wantDR := preempt.DryRun{Candidates: []preempt.Candidate{
		{Node: "node-c", Victims: victims("node-c-p1", "node-c-p2", "node-c-p3")},
		{Node: "node-a", Victims: victims("node-a-p1", "node-a-p2", "node-a-p3")},
	}}
	if diff := cmp.Diff(wantDR, dr); diff != "" {
		t.Errorf("dry run (-want +got):\n%s", diff)
	}
	dr2 := ev.DryRunPreemption(ctx, req, []string{"node-a", "node-b", "node-c"}, 2, 2)
	if diff := cmp.Diff(dr, dr2); diff != "" {
		t.Errorf("DryRunPreemption differs from FindCandidates (-find +dry):\n%s", diff)
	}
	vs, n, st := ev.SelectVictimsOnNode(ctx, req, "node-b")
	if diff := cmp.Diff(victims("node-b-p1", "node-b-p2", "node-b-p3"), vs); diff != "" || n != 0 || st.Code != preempt.Success {
		t.Errorf("SelectVictimsOnNode: %d %v (-want +got):\n%s", n, st, diff)
	}
	_, _, st = ev.SelectVictimsOnNode(ctx, req, "no-such-node")
	if st.Code != preempt.Error {
		t.Errorf("unknown node: %v", st)
	}
	// A candidate with fewer victims wins.
	cands := []preempt.Candidate{dr.Candidates[0], {Node: "node-b", Victims: victims("node-b-p1", "node-b-p2")}}
	best := ev.SelectCandidate(cands, req)
	if best == nil || best.Node != "node-b" {
		t.Errorf("SelectCandidate = %+v", best)
	}
	// A candidate without victims makes upstream's pickOneNodeForPreemption
	// index an empty list: no panic, no answer.
	if got := ev.SelectCandidate([]preempt.Candidate{{Node: "node-a"}, {Node: "node-b"}}, req); got != nil {
		t.Errorf("SelectCandidate without victims = %+v", got)
	}
	if ev.SelectCandidate(nil, req) != nil {
		t.Errorf("SelectCandidate(nil) != nil")
	}
	ok, msg := ev.PodEligibleToPreemptOthers(req)
	if !ok || msg != "" {
		t.Errorf("eligible = %v %q", ok, msg)
	}
}

func TestNoUID(t *testing.T) {
	c := smallCluster()
	p := pod("preemptor", "", 10, "3000m", "1Gi").UID("").Obj()
	req := &preempt.Request{Pod: p, Filter: allUnschedulable(c), Config: preempt.DefaultConfig(), Now: now}
	// preempt.Run refuses the request before any implementation runs...
	if _, err := harness.Run(context.Background(), upstream.Impl{}, c, req); err == nil || !strings.Contains(err.Error(), "has no uid") {
		t.Errorf("Run: err = %v, want the missing uid named", err)
	}
	// ...and the evaluator, called directly, answers with an Error status.
	ev, err := upstream.Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	cs := harness.NewClientset(c, p)
	cs.ClearActions()
	d := ev.Preempt(context.Background(), cs, req)
	if d.Status != preempt.Error || d.Message == "" || len(harness.Actions(cs.Actions())) != 0 {
		t.Errorf("got %+v", d)
	}
}

func TestScalarReasonsInNameOrder(t *testing.T) {
	n := testobj.MakeNode().Name("node-a").Allocatable(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "32Gi", v1.ResourcePods: "110",
		"example.com/z": "1", "example.com/a": "1", "example.com/m": "1", "hugepages-2Mi": "1"}).Obj()
	c := &preempt.Cluster{Nodes: []*v1.Node{n}}
	p := pod("preemptor", "", 10, "5", "1Gi").Request("example.com/z", "2").Request("example.com/a", "2").Request("example.com/m", "2").Request("hugepages-2Mi", "2").Obj()
	ev, err := upstream.Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		fr := ev.Filter(context.Background(), p)
		want := []preempt.NodeStatus{{Node: "node-a", Code: preempt.UnschedulableAndUnresolvable, Reasons: []string{
			"Insufficient cpu", "Insufficient example.com/a", "Insufficient example.com/m", "Insufficient example.com/z", "Insufficient hugepages-2Mi",
		}}}
		if diff := cmp.Diff(want, fr.NodeStatuses); diff != "" {
			t.Fatalf("statuses (-want +got):\n%s", diff)
		}
	}
}

func TestNominatedPodsCount(t *testing.T) {
	// A nominated pod of higher priority holds 2 cpu on node-b: the
	// preemptor no longer fits there even without any victim.
	c := smallCluster()
	c.Pods = append(c.Pods, pod("high", "", 20, "2", "1Mi").NominatedNodeName("node-b").Obj())
	ev, err := upstream.Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	req := &preempt.Request{Pod: preemptor(), Filter: allUnschedulable(c), Config: preempt.DefaultConfig(), Now: now}
	vs, _, st := ev.SelectVictimsOnNode(context.Background(), req, "node-b")
	want := preempt.Status{Code: preempt.Unschedulable, Reasons: []string{"Insufficient cpu"}}
	if diff := cmp.Diff(want, st); diff != "" || vs != nil {
		t.Errorf("node-b: victims %v, status (-want +got):\n%s", vs, diff)
	}
	_, _, st = ev.SelectVictimsOnNode(context.Background(), req, "node-a")
	if st.Code != preempt.Success {
		t.Errorf("node-a: %v", st)
	}
}

func TestParallelism(t *testing.T) {
	c := smallCluster()
	req := &preempt.Request{Pod: preemptor(), Filter: allUnschedulable(c), Config: preempt.DefaultConfig(), Now: now}
	d, err := harness.Run(context.Background(), upstream.Impl{Parallelism: 4}, c, req)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != preempt.Success || len(d.Candidates) != 3 || len(d.Victims) != 3 {
		t.Errorf("got %+v", d)
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	c := smallCluster()
	ev, err := upstream.Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	req := &preempt.Request{Pod: preemptor(), Filter: allUnschedulable(c), Config: preempt.DefaultConfig(), Now: now}
	ev.Filter(context.Background(), req.Pod) // first use sets up the shared state
	time.Sleep(1500 * time.Millisecond)
	before := runtime.NumGoroutine()
	for i := 0; i < 20; i++ {
		r := *req
		r.Now = now.Add(time.Duration(i) * time.Second) // a new framework each time
		ev.Preempt(context.Background(), harness.NewClientset(c, req.Pod), &r)
	}
	// NewFramework's own metrics recorders notice their cancelled context
	// within their 1s interval.
	after := 0
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if after = runtime.NumGoroutine(); after <= before+2 {
			return
		}
	}
	t.Errorf("goroutines: %d before, %d after 20 frameworks", before, after)
}
