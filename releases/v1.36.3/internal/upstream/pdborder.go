package upstream

import (
	policy "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	policylisters "k8s.io/client-go/listers/policy/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

// sortedPDBLister is the informer's PodDisruptionBudget lister with List in
// the contract's order, (namespace, name): upstream lists them from the
// informer's map, and from v1.37 FilterVictimsWithPDBViolation stops at the
// first PodDisruptionBudget a victim takes below zero, so with overlapping
// budgets the order decides which budgets the later victims still find.
//
// pdbOrder is that order; TestPDBOrderChangesTheDecision swaps it for
// another to show that upstream's decision depends on it.
type sortedPDBLister struct {
	policylisters.PodDisruptionBudgetLister
}

func (l sortedPDBLister) List(selector labels.Selector) ([]*policy.PodDisruptionBudget, error) {
	pdbs, err := l.PodDisruptionBudgetLister.List(selector)
	if err != nil {
		return nil, err
	}
	pdbOrder(pdbs)
	return pdbs, nil
}

var pdbOrder = preempt.SortPDBs
