package preempt

import (
	"cmp"
	"slices"

	policyv1 "k8s.io/api/policy/v1"
)

// SortedPDBs returns the PodDisruptionBudgets in the contract's order, by
// namespace then name (see the package documentation), as a new slice.
func SortedPDBs(pdbs []*policyv1.PodDisruptionBudget) []*policyv1.PodDisruptionBudget {
	out := slices.Clone(pdbs)
	SortPDBs(out)
	return out
}

// SortPDBs sorts pdbs in place in the contract's order.
func SortPDBs(pdbs []*policyv1.PodDisruptionBudget) {
	slices.SortStableFunc(pdbs, func(a, b *policyv1.PodDisruptionBudget) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
}
