package upstream_test

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/upstream"
)

// pdbOrderCluster is docs/upstream-findings.md's cluster: two nodes of 2
// cpu, each full with two 1-cpu pods of priority 0 that a 2-cpu preemptor
// must both evict. PDB a (app=a) allows no disruption, PDB b (team=x)
// one. On n1, p1 is app=a and team=x, p2 team=x; on n2, r1 is app=a and
// r2 has no labels. n1's pods started ten minutes after n2's.
func pdbOrderCluster() (*preempt.Cluster, *v1.Pod) {
	c := &preempt.Cluster{
		Nodes: []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Obj()},
		Pods: []*v1.Pod{
			pod("p1", "n1", 0, "1", "1Gi").Label("app", "a").Label("team", "x").StartTime(now.Add(-50 * time.Minute)).Obj(),
			pod("p2", "n1", 0, "1", "1Gi").Label("team", "x").StartTime(now.Add(-50 * time.Minute)).Obj(),
			pod("r1", "n2", 0, "1", "1Gi").Label("app", "a").StartTime(now.Add(-60 * time.Minute)).Obj(),
			pod("r2", "n2", 0, "1", "1Gi").StartTime(now.Add(-60 * time.Minute)).Obj(),
		},
		PDBs: []*policyv1.PodDisruptionBudget{
			testobj.MakePDB().Namespace("default").Name("a").MatchLabel("app", "a").DisruptionsAllowed(0).Obj(),
			testobj.MakePDB().Namespace("default").Name("b").MatchLabel("team", "x").DisruptionsAllowed(1).Obj(),
		},
	}
	return c, pod("preemptor", "", 10, "2", "1Gi").Obj()
}

// Upstream v1.37's FilterVictimsWithPDBViolation stops counting a pod's
// budgets at the first it takes below zero, so with overlapping budgets
// the order of the PDB lister decides the violations, and here the node:
// listed a, b (the contract's order) upstream's own code picks n1; listed
// b, a it picks n2. kube-scheduler's lister lists from an informer's map.
func TestPDBOrderChangesTheDecision(t *testing.T) {
	c, p := pdbOrderCluster()
	decide := func(impl preempt.Implementation) preempt.Decision {
		t.Helper()
		r, err := harness.Decide(context.Background(), impl, c, p, preempt.DefaultConfig(), 0, now)
		if err != nil {
			t.Fatal(err)
		}
		return r.Decision
	}
	sorted, reversed := inBothPDBOrders(func() preempt.Decision { return decide(upstream.Impl{}) })
	for _, d := range []struct {
		order string
		d     preempt.Decision
	}{{"a, b", sorted}, {"b, a", reversed}} {
		t.Logf("PDBs listed %s: %s on %s, %d PDB violation(s), victims %v; candidates %v", d.order, d.d.Status, d.d.NominatedNode, d.d.NumPDBViolations, d.d.Victims, d.d.Candidates)
	}
	if sorted.NominatedNode != "n1" || reversed.NominatedNode != "n2" {
		t.Errorf("upstream chose %q with PDBs listed a, b and %q with b, a; want n1 and n2", sorted.NominatedNode, reversed.NominatedNode)
	}
	if ref := decide(reference.Impl{}); ref.NominatedNode != sorted.NominatedNode {
		t.Errorf("the reference chose %q, upstream in the contract's order %q", ref.NominatedNode, sorted.NominatedNode)
	}
}

// The gang path (PodGroupEvaluator) lists PodDisruptionBudgets through a
// lister of its own, taken from the informer factory: the order decides
// its violations too. On one node of 1 cpu, the mode-All group g0 (p17
// app=b, p47 app=a, 100m each, priority MinInt32) and p46 (app=a, 600m,
// MinInt32) leave 200m; the gang's one member asks 500m, so g0 is
// reprieved and p46 evicted. PDB pdb-0 (app in a, b) allows two
// disruptions, pdb-1 (app=b) none. Listed pdb-0, pdb-1 (the contract's
// order), g0's p17 takes pdb-0 to 1 and violates pdb-1, p47 takes pdb-0 to
// 0, and p46 violates pdb-0: 1 violation. Listed pdb-1, pdb-0, p17 stops
// at pdb-1 and p46 finds pdb-0 at 1: none.
func TestPDBOrderChangesTheGangDecision(t *testing.T) {
	started := now.Add(-time.Hour)
	c := &preempt.Cluster{
		Nodes: []*v1.Node{node("n1", "1").Obj()},
		Pods: []*v1.Pod{
			pod("p17", "n1", math.MinInt32, "100m", "1Mi").Label("app", "b").StartTime(started).PodGroupName("g0").Obj(),
			pod("p46", "n1", math.MinInt32, "600m", "1Mi").Label("app", "a").StartTime(started).Obj(),
			pod("p47", "n1", math.MinInt32, "100m", "1Mi").Label("app", "a").StartTime(started).PodGroupName("g0").Obj(),
		},
		PodGroups: []*preempt.PodGroup{
			testobj.MakePodGroup().Namespace("default").Name("g0").UID("uid-g0").Priority(math.MinInt32).BasicPolicy().DisruptionModeAll().Obj(),
		},
		PDBs: []*policyv1.PodDisruptionBudget{
			testobj.MakePDB().Namespace("default").Name("pdb-1").MatchLabel("app", "b").DisruptionsAllowed(0).Obj(),
			testobj.MakePDB().Namespace("default").Name("pdb-0").Selector(testobj.MakeLabelSelector().In("app", []string{"a", "b"}).Obj()).DisruptionsAllowed(2).Obj(),
		},
	}
	m0 := pod("m0", "", 0, "500m", "1Mi").PodGroupName("gang").Obj()
	gang := testobj.MakePodGroup().Namespace("default").Name("gang").UID("uid-gang").Priority(0).BasicPolicy().Obj()
	req := &preempt.PodGroupRequest{PodGroup: gang, Pods: []*v1.Pod{m0}, Now: now,
		Config: preempt.Config{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100, Synchronous: true, FeatureGates: map[string]bool{preempt.GenericWorkloadGate: true}}}
	decide := func(impl preempt.Implementation) preempt.PodGroupDecision {
		t.Helper()
		ev, err := impl.NewEvaluator(c)
		if err != nil {
			t.Fatal(err)
		}
		cs := harness.NewClient(c, nil)
		return ev.(preempt.PodGroupPreempter).PreemptPodGroup(context.Background(), cs, req)
	}
	sorted, reversed := inBothPDBOrders(func() preempt.PodGroupDecision { return decide(upstream.Impl{}) })
	for _, d := range []struct {
		order string
		d     preempt.PodGroupDecision
	}{{"pdb-0, pdb-1", sorted}, {"pdb-1, pdb-0", reversed}} {
		t.Logf("PDBs listed %s: %s %q, %d PDB violation(s), victims %v", d.order, d.d.Status, d.d.Message, d.d.NumPDBViolations, d.d.Victims)
	}
	want := []preempt.Victim{{Namespace: "default", Name: "p46", Priority: math.MinInt32}}
	if sorted.Status != preempt.Success || !cmp.Equal(sorted.Victims, want) || !cmp.Equal(reversed.Victims, want) {
		t.Fatalf("victims %v and %v, want %v in both orders", sorted.Victims, reversed.Victims, want)
	}
	if sorted.NumPDBViolations != 1 || reversed.NumPDBViolations != 0 {
		t.Errorf("upstream counted %d violation(s) with PDBs listed pdb-0, pdb-1 and %d with pdb-1, pdb-0; want 1 and 0", sorted.NumPDBViolations, reversed.NumPDBViolations)
	}
	if ref := decide(reference.Impl{}); ref.NumPDBViolations != sorted.NumPDBViolations {
		t.Errorf("the reference counted %d violation(s), upstream in the contract's order %d", ref.NumPDBViolations, sorted.NumPDBViolations)
	}
}

// inBothPDBOrders runs decide with upstream's PDB lister in the contract's
// order, then in the reverse order.
func inBothPDBOrders[T any](decide func() T) (sorted, reversed T) {
	sorted = decide()
	restore := upstream.SetPDBOrder(func(pdbs []*policyv1.PodDisruptionBudget) {
		preempt.SortPDBs(pdbs)
		slices.Reverse(pdbs)
	})
	defer restore()
	return sorted, decide()
}
