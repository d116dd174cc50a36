package upstream_test

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/internal/harness"
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
	mk := func(name, node string, start time.Time, labels map[string]string) *v1.Pod {
		p := pod(name, node, 0, "1", "1Gi")
		p.Labels = labels
		st := metav1.NewTime(start)
		p.Status.StartTime = &st
		return p
	}
	pdb := func(name, key, value string, allowed int32) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}},
			Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
		}
	}
	n1, n2 := node("n1"), node("n2")
	for _, n := range []*v1.Node{n1, n2} {
		n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("2")
	}
	c := &preempt.Cluster{
		Nodes: []*v1.Node{n1, n2},
		Pods: []*v1.Pod{
			mk("p1", "n1", now.Add(-50*time.Minute), map[string]string{"app": "a", "team": "x"}),
			mk("p2", "n1", now.Add(-50*time.Minute), map[string]string{"team": "x"}),
			mk("r1", "n2", now.Add(-60*time.Minute), map[string]string{"app": "a"}),
			mk("r2", "n2", now.Add(-60*time.Minute), nil),
		},
		PDBs: []*policyv1.PodDisruptionBudget{pdb("a", "app", "a", 0), pdb("b", "team", "x", 1)},
	}
	return c, pod("preemptor", "", 10, "2", "1Gi")
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
	n1 := node("n1")
	n1.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("1")
	mk := func(name, cpu, app string, group bool) *v1.Pod {
		p := pod(name, "n1", math.MinInt32, cpu, "1Mi")
		p.Labels = map[string]string{"app": app}
		st := metav1.NewTime(now.Add(-time.Hour))
		p.Status.StartTime = &st
		if group {
			p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To("g0")}
		}
		return p
	}
	pdb := func(name string, sel metav1.LabelSelector, allowed int32) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &sel},
			Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
		}
	}
	group := func(name string, prio int32, all bool) *preempt.PodGroup {
		pg := &preempt.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
			Spec: schedulingv1beta1.PodGroupSpec{Priority: ptr.To(prio),
				SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}}}}
		if all {
			pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
		}
		return pg
	}
	c := &preempt.Cluster{
		Nodes:     []*v1.Node{n1},
		Pods:      []*v1.Pod{mk("p17", "100m", "b", true), mk("p46", "600m", "a", false), mk("p47", "100m", "a", true)},
		PodGroups: []*preempt.PodGroup{group("g0", math.MinInt32, true)},
		PDBs: []*policyv1.PodDisruptionBudget{
			pdb("pdb-1", metav1.LabelSelector{MatchLabels: map[string]string{"app": "b"}}, 0),
			pdb("pdb-0", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}}, 2),
		},
	}
	m0 := pod("m0", "", 0, "500m", "1Mi")
	m0.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To("gang")}
	req := &preempt.PodGroupRequest{PodGroup: group("gang", 0, false), Pods: []*v1.Pod{m0}, Now: now,
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
