package upstream

import policy "k8s.io/api/policy/v1"

// SetPDBOrder makes the adapter list PodDisruptionBudgets in order's
// order instead of the contract's, until restore is called: upstream's
// own informer order is a map's.
func SetPDBOrder(order func([]*policy.PodDisruptionBudget)) (restore func()) {
	old := pdbOrder
	pdbOrder = order
	return func() { pdbOrder = old }
}
