package upstream_test

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/preemptbench/preemptbench/harness"
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
	sorted := decide(upstream.Impl{})
	restore := upstream.SetPDBOrder(func(pdbs []*policyv1.PodDisruptionBudget) {
		preempt.SortPDBs(pdbs)
		slices.Reverse(pdbs)
	})
	reversed := decide(upstream.Impl{})
	restore()
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
