package upstream_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/upstream"
)

// schedulerGang runs req on c with the adapter's first-fit placement and
// with kube-scheduler's own (Impl.SchedulerPlacement), each through a
// clientset of its own, and returns both decisions, and the pods the
// scheduler's run deleted, sorted (the executor deletes a group's members
// in the order upstream lists them, a set's).
func schedulerGang(t *testing.T, c *preempt.Cluster, req *preempt.PodGroupRequest) (firstFit, sched preempt.PodGroupDecision, deleted []string) {
	t.Helper()
	run := func(impl upstream.Impl) (preempt.PodGroupDecision, []string) {
		ev, err := impl.NewEvaluator(c)
		if err != nil {
			t.Fatal(err)
		}
		cs := harness.NewClientset(c, nil)
		for _, p := range req.Pods {
			if err := cs.Tracker().Add(p); err != nil {
				t.Fatal(err)
			}
		}
		d := ev.(preempt.PodGroupPreempter).PreemptPodGroup(context.Background(), cs, req)
		var deleted []string
		for _, a := range harness.Actions(cs.Actions()) {
			if a.Verb == "delete" {
				deleted = append(deleted, a.Name)
			}
		}
		return d, deleted
	}
	firstFit, _ = run(upstream.Impl{})
	sched, deleted = run(upstream.Impl{SchedulerPlacement: true})
	slices.Sort(deleted)
	return firstFit, sched, deleted
}

func gangRequest(pg *preempt.PodGroup, synchronous bool, members ...*v1.Pod) *preempt.PodGroupRequest {
	cfg := preempt.DefaultConfig()
	cfg.Synchronous = synchronous
	cfg.FeatureGates = genericWorkload
	return &preempt.PodGroupRequest{PodGroup: pg, Pods: members, Config: cfg, Now: testobj.Epoch}
}

// Where each member has one node it can go to, or where the answer does
// not depend on the hosts, kube-scheduler's own placement and first fit
// give one decision.
func TestSchedulerPlacementAgreesWithFirstFit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		c       *preempt.Cluster
		req     *preempt.PodGroupRequest
		status  preempt.Code
		deleted []string
		// message is the scheduler's where first fit's differs.
		message string
	}{
		{
			name: "each member pinned to its node, one victim on each",
			c:    twoNodes(pgPod("v1", "n1", "", 0, "600m").Obj(), pgPod("v2", "n2", "", 0, "600m").Obj()),
			req: gangRequest(gang("g", 10, 2), true,
				pgPod("m0", "", "g", 10, "600m").HostnameSelector("n2").Obj(), pgPod("m1", "", "g", 10, "600m").HostnameSelector("n1").Obj()),
			status: preempt.Success, deleted: []string{"v1", "v2"},
		},
		{
			name: "asynchronous: the executor's goroutine is waited for",
			c:    twoNodes(pgPod("v1", "n1", "", 0, "600m").Obj(), pgPod("v2", "n2", "", 0, "600m").Obj()),
			req: gangRequest(gang("g", 10, 2), false,
				pgPod("m0", "", "g", 10, "600m").HostnameSelector("n2").Obj(), pgPod("m1", "", "g", 10, "600m").HostnameSelector("n1").Obj()),
			status: preempt.Success, deleted: []string{"v1", "v2"},
		},
		{
			name: "the reprieve keeps the victim on the node no member needs",
			c:    twoNodes(pgPod("v1", "n1", "", 0, "600m").Obj(), pgPod("v2", "n2", "", 0, "600m").Obj()),
			req:  gangRequest(gang("g", 10, 1), true, pgPod("m0", "", "g", 10, "600m").HostnameSelector("n2").Obj()),
			// minCount 1: v1 is reprieved.
			status: preempt.Success, deleted: []string{"v2"},
		},
		{
			// Upstream lists a group victim's members from a set; the
			// contract's (namespace, name) order is kept.
			name: "a mode All group victim across three nodes",
			c: &preempt.Cluster{Nodes: []*v1.Node{pgNode("n1", "1"), pgNode("n2", "1"), pgNode("n3", "1")},
				Pods:      []*v1.Pod{pgPod("vc", "n1", "pg1", 0, "600m").Obj(), pgPod("va", "n2", "pg1", 0, "600m").Obj(), pgPod("vb", "n3", "pg1", 0, "600m").Obj()},
				PodGroups: []*preempt.PodGroup{group("pg1", 0).DisruptionModeAll().Obj()}},
			req: gangRequest(gang("g", 10, 3), true, pgPod("m0", "", "g", 10, "600m").HostnameSelector("n3").Obj(),
				pgPod("m1", "", "g", 10, "600m").HostnameSelector("n2").Obj(), pgPod("m2", "", "g", 10, "600m").HostnameSelector("n1").Obj()),
			status: preempt.Success, deleted: []string{"va", "vb", "vc"},
		},
		{
			name: "no victim below the group's priority",
			c:    twoNodes(pgPod("v1", "n1", "", 20, "600m").Obj(), pgPod("v2", "n2", "", 20, "600m").Obj()),
			req:  gangRequest(gang("g", 10, 2), true, pgPod("m0", "", "g", 10, "600m").Obj(), pgPod("m1", "", "g", 10, "600m").Obj()),
			// PodGroupPostFilter refuses before it schedules anything.
			status: preempt.UnschedulableAndUnresolvable,
		},
		{
			name: "minCount out of reach, whatever the hosts",
			c:    twoNodes(pgPod("v1", "n1", "", 0, "600m").Obj(), pgPod("v2", "n2", "", 0, "600m").Obj()),
			req: gangRequest(gang("g", 10, 3), true,
				pgPod("m0", "", "g", 10, "600m").Obj(), pgPod("m1", "", "g", 10, "600m").Obj(), pgPod("m2", "", "g", 10, "600m").Obj()),
			status: preempt.Unschedulable,
			// v1.37.2's podGroupSchedulingDefaultAlgorithm returns
			// GangScheduling's PlacementFeasible status as it is when
			// it stops the loop, without errPodGroupUnschedulable's
			// "pod group is unschedulable, " in front; first fit's
			// function does the same.
			message: "pod group preemption: minCount (3) cannot be satisfied: 2 scheduled, 0 remaining",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ff, sched, deleted := schedulerGang(t, tc.c, tc.req)
			if sched.Status != tc.status {
				t.Fatalf("scheduler placement: status %s %q, want %s", sched.Status, sched.Message, tc.status)
			}
			if !strings.HasPrefix(sched.Message, "pod group preemption: ") {
				t.Errorf("scheduler placement: message %q lacks PodGroupPostFilter's prefix", sched.Message)
			}
			ff.Actions, sched.Actions = nil, nil
			if tc.message != "" {
				if sched.Message != tc.message {
					t.Errorf("scheduler placement: message %q, want %q", sched.Message, tc.message)
				}
			}
			if diff := cmp.Diff(ff, sched); diff != "" {
				t.Errorf("decisions differ (-firstfit +scheduler):\n%s", diff)
			}
			if diff := cmp.Diff(tc.deleted, deleted); diff != "" {
				t.Errorf("scheduler placement: deleted (-want +got):\n%s", diff)
			}
		})
	}
}

// Where the scheduler's scoring prefers another node than the first in
// name order, kube-scheduler's placement takes the scored node: n1 and n2
// are both full; with the potential victims gone first fit puts the
// member on n1 (2 CPUs), the scheduler on the least allocated n2 (4
// CPUs), so the victim is v2, not v1.
func TestSchedulerPlacementTakesTheScoredNode(t *testing.T) {
	node := func(name, cpu string) *v1.Node {
		return testobj.MakeNode().Name(name).Hostname().Allocatable(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: "8Gi", v1.ResourcePods: "100"}).Obj()
	}
	c := &preempt.Cluster{Nodes: []*v1.Node{node("n1", "2"), node("n2", "4")},
		Pods: []*v1.Pod{pgPod("v1", "n1", "", 0, "1500m").Obj(), pgPod("v2", "n2", "", 0, "3500m").Obj()}}
	for _, synchronous := range []bool{true, false} {
		req := gangRequest(gang("g", 10, 1), synchronous, pgPod("m0", "", "g", 10, "1").Obj())
		ff, sched, deleted := schedulerGang(t, c, req)
		if ff.Status != preempt.Success || len(ff.Nominations) != 1 || ff.Nominations[0].Node != "n1" || len(ff.Victims) != 1 || ff.Victims[0].Name != "v1" {
			t.Fatalf("first fit: %+v, want m0 on n1 preempting v1", ff)
		}
		want := preempt.PodGroupDecision{
			Status:      preempt.Success,
			Message:     "pod group preemption: found a placement for podgroup, preempting 1 victims",
			Nominations: []preempt.Nomination{{Namespace: "default", Name: "m0", Node: "n2"}},
			Victims:     []preempt.Victim{{Namespace: "default", Name: "v2"}},
		}
		sched.Actions = nil
		if diff := cmp.Diff(want, sched); diff != "" {
			t.Errorf("synchronous=%t: scheduler placement (-want +got):\n%s", synchronous, diff)
		}
		if diff := cmp.Diff([]string{"v2"}, deleted); diff != "" {
			t.Errorf("synchronous=%t: deleted (-want +got):\n%s", synchronous, diff)
		}
	}

	// Under TopologyAwareWorkloadScheduling the scheduler's placement
	// algorithm runs (podGroupSchedulingPlacementAlgorithm: one placement
	// for a group without topology constraints), which first fit does
	// not model: the same node.
	req := gangRequest(gang("g", 10, 1), true, pgPod("m0", "", "g", 10, "1").Obj())
	req.Config.FeatureGates = map[string]bool{"GenericWorkload": true, "TopologyAwareWorkloadScheduling": true}
	ev, err := upstream.Impl{SchedulerPlacement: true}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	d := ev.(preempt.PodGroupPreempter).PreemptPodGroup(context.Background(), harness.NewClientset(c, nil), req)
	if d.Status != preempt.Success || len(d.Nominations) != 1 || d.Nominations[0].Node != "n2" || len(d.Victims) != 1 || d.Victims[0].Name != "v2" {
		t.Errorf("TopologyAwareWorkloadScheduling: %+v, want m0 on n2 preempting v2", d)
	}
}

// The scheduler runs PodGroupPostFilter only after its own attempt was
// Unschedulable: a gang that fits is placed, a gang the scheduler refuses
// is failed before any attempt, and the decision is an error saying so.
// A request Placement is refused beside the scheduler's.
func TestSchedulerPlacementRefusals(t *testing.T) {
	c := &preempt.Cluster{Nodes: []*v1.Node{pgNode("n1", "1"), pgNode("n2", "1")}}
	ev, err := upstream.Impl{SchedulerPlacement: true}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		req     *preempt.PodGroupRequest
		message string
	}{
		{
			name:    "the gang fits without preemption",
			req:     gangRequest(gang("g", 10, 1), true, pgPod("m0", "", "g", 10, "600m").HostnameSelector("n2").Obj()),
			message: "the scheduler placed pod group default/g without preemption (PodGroupPostFilter did not run): default/m0 on n2",
		},
		{
			// validatePodGroup: every member at the group's priority.
			name:    "a member's priority is not the group's",
			req:     gangRequest(gang("g", 10, 1), true, pgPod("m0", "", "g", 100, "600m").Obj()),
			message: "the scheduler neither placed nor preempted for pod group default/g (PodGroupPostFilter did not run): Error: all pods in a single pod group should have the same priority as the pod group's priority, got 100 and 10",
		},
		{
			name: "a request Placement",
			req: func() *preempt.PodGroupRequest {
				r := gangRequest(gang("g", 10, 1), true, pgPod("m0", "", "g", 10, "600m").Obj())
				r.Placement = preempt.FirstFit
				return r
			}(),
			message: "the scheduler placement runs kube-scheduler's own pod-group scheduling: the request's Placement must be nil",
		},
		{
			name: "minCount above the members: the queue holds the group back",
			req:  gangRequest(gang("g", 10, 2), true, pgPod("m0", "", "g", 10, "600m").Obj()),
			// GangScheduling's PreEnqueue waits for minCount members.
			message: "the scheduling queue does not offer pod group default/g for scheduling (members not in the active queue: default/m0;",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := harness.NewClientset(c, nil)
			d := ev.(preempt.PodGroupPreempter).PreemptPodGroup(context.Background(), cs, tc.req)
			if d.Status != preempt.Error || !strings.HasPrefix(d.Message, tc.message) {
				t.Fatalf("got %s %q, want Error %q", d.Status, d.Message, tc.message)
			}
		})
	}
}

// Tied nodes go as kube-scheduler breaks the tie. v1.37.2 draws a random
// tie-breaker (NodePluginScores.Randomizer) only for nodes an extender
// scored (prioritizeNodes): otherwise the feasible list's order settles
// it, the scheduler's node tree listing zones interleaved (a, c, b here)
// from where the last filter pass stopped. With every node emptied of its
// victim, first fit puts m1 on b, the scheduler on c (c and b tie).
func TestSchedulerPlacementBreaksTiesInNodeTreeOrder(t *testing.T) {
	node := func(name, zone string) *v1.Node {
		return testobj.MakeNode().Name(name).Hostname().Label(v1.LabelTopologyZone, zone).
			Allocatable(map[v1.ResourceName]string{v1.ResourceCPU: "1", v1.ResourcePods: "100"}).Obj()
	}
	c := &preempt.Cluster{Nodes: []*v1.Node{node("a", "z1"), node("b", "z1"), node("c", "z2")},
		Pods: []*v1.Pod{pgPod("va", "a", "", 0, "600m").Obj(), pgPod("vb", "b", "", 0, "600m").Obj(), pgPod("vc", "c", "", 0, "600m").Obj()}}
	req := gangRequest(gang("g", 10, 2), true, pgPod("m0", "", "g", 10, "600m").Obj(), pgPod("m1", "", "g", 10, "600m").Obj())
	ff, sched, deleted := schedulerGang(t, c, req)
	nodes := func(d preempt.PodGroupDecision) (noms, victims []string) {
		for _, n := range d.Nominations {
			noms = append(noms, n.Node)
		}
		for _, v := range d.Victims {
			victims = append(victims, v.Name)
		}
		return noms, victims
	}
	if noms, victims := nodes(ff); !cmp.Equal(noms, []string{"a", "b"}) || !cmp.Equal(victims, []string{"va", "vb"}) {
		t.Fatalf("first fit: nominations %v victims %v, want [a b] [va vb]", noms, victims)
	}
	noms, victims := nodes(sched)
	if diff := cmp.Diff([]string{"a", "c"}, noms); diff != "" {
		t.Errorf("scheduler placement: nominations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"va", "vc"}, victims); diff != "" {
		t.Errorf("scheduler placement: victims (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"va", "vc"}, deleted); diff != "" {
		t.Errorf("scheduler placement: deleted (-want +got):\n%s", diff)
	}
}
