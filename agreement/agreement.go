// Package agreement decides what "the same decision" means between the
// reference and another implementation, allowing for upstream's one
// remaining source of chance: the final tie of pickOneNodeForPreemption,
// which upstream breaks by map order.
package agreement

import (
	"context"
	"fmt"
	"slices"

	"github.com/preemptbench/preemptbench/harness"
	"github.com/preemptbench/preemptbench/preempt"
)

// RandomFinalTie is implemented by implementations (upstream) whose
// SelectCandidate breaks the last tie at random among equal-best nodes.
type RandomFinalTie interface {
	RandomFinalTie() bool
}

// TieIsRandom reports whether impl breaks the final tie at random.
func TieIsRandom(impl preempt.Implementation) bool {
	r, ok := impl.(RandomFinalTie)
	return ok && r.RandomFinalTie()
}

// EqualBest lists the candidates pickOneNodeForPreemption cannot tell apart
// from the best one: those ev picks when moved to the front of the list.
func EqualBest(ev preempt.Evaluator, cands []preempt.Candidate, req *preempt.Request) []string {
	var out []string
	for i := range cands {
		reordered := append([]preempt.Candidate{cands[i]}, slices.Delete(slices.Clone(cands), i, i+1)...)
		if best := ev.SelectCandidate(reordered, req); best != nil && best.Node == cands[i].Node {
			out = append(out, cands[i].Node)
		}
	}
	return out
}

// Expected returns the decision other must match: ref itself, or, when
// other breaks the final tie at random and chose another of the equal-best
// nodes, the decision refEv makes had it chosen that node (its victims and
// the API calls of actuating it). note says when the tie was reconciled; an
// error says other chose a node that is not equal-best.
func Expected(ctx context.Context, refEv preempt.Evaluator, c *preempt.Cluster, req *preempt.Request, ref, got preempt.Decision, other preempt.Implementation) (want preempt.Decision, note string, err error) {
	if !TieIsRandom(other) || ref.Status != preempt.Success || got.Status != preempt.Success || got.NominatedNode == ref.NominatedNode {
		return ref, "", nil
	}
	ties := EqualBest(refEv, ref.Candidates, req)
	if !slices.Contains(ties, got.NominatedNode) {
		return ref, "", fmt.Errorf("%s nominated %s, not among the equal-best candidates %v (reference: %s)", other.Name(), got.NominatedNode, ties, ref.NominatedNode)
	}
	i := slices.IndexFunc(ref.Candidates, func(c preempt.Candidate) bool { return c.Node == got.NominatedNode })
	cand := ref.Candidates[i]
	cs := harness.NewClientset(c, req.Pod)
	cs.ClearActions()
	if err := refEv.PrepareCandidate(ctx, cs, &cand, req); err != nil {
		return ref, "", fmt.Errorf("reference PrepareCandidate(%s): %w", cand.Node, err)
	}
	want = ref
	want.NominatedNode, want.Victims, want.NumPDBViolations = cand.Node, cand.Victims, cand.NumPDBViolations
	want.Actions = harness.Actions(cs.Actions())
	note = fmt.Sprintf("%s broke the final tie among the equal-best nodes %v at %s (map order); the reference takes list order, %s", other.Name(), ties, got.NominatedNode, ref.NominatedNode)
	return want, note, nil
}
