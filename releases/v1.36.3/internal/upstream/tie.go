package upstream

import "github.com/preemptbench/preemptbench/preempt"

// RandomFinalTie: upstream's pickOneNodeForPreemption ranges over a map, so
// among candidates equal on all five criteria its pick is random.
// With ListOrderTie it breaks the tie in list order, as the contract does.
func (i Impl) RandomFinalTie() bool { return !i.ListOrderTie }

// Deterministic is the implementation with ListOrderTie set (see
// harness.Deterministic).
func (i Impl) Deterministic() preempt.Implementation {
	i.ListOrderTie = true
	return i
}
