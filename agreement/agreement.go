// Package agreement decides what "the same decision" means between the
// reference and another implementation, allowing for upstream's one
// remaining source of chance: the final tie of pickOneNodeForPreemption,
// which upstream breaks by map order.
package agreement

import (
	"context"
	"errors"
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
//
// The candidates compared are those SelectCandidate saw: the dry run's,
// after the extenders of req (called again: they must answer the same
// arguments the same way). The API calls fs name fail, as they did.
func Expected(ctx context.Context, refEv preempt.Evaluator, c *preempt.Cluster, req *preempt.Request, ref, got preempt.Decision, other preempt.Implementation, fs ...harness.Fault) (want preempt.Decision, note string, err error) {
	if !TieIsRandom(other) || ref.Status != preempt.Success || got.Status != preempt.Success || got.NominatedNode == ref.NominatedNode {
		return ref, "", nil
	}
	cands, err := Selectable(ctx, c, req, ref.Candidates)
	if err != nil {
		return ref, "", err
	}
	ties := EqualBest(refEv, cands, req)
	if !slices.Contains(ties, got.NominatedNode) {
		return ref, "", fmt.Errorf("%s nominated %s, not among the equal-best candidates %v (reference: %s)", other.Name(), got.NominatedNode, ties, ref.NominatedNode)
	}
	i := slices.IndexFunc(cands, func(c preempt.Candidate) bool { return c.Node == got.NominatedNode })
	cand := cands[i]
	cs := harness.NewClient(c, req.Pod, fs...)
	want = ref
	want.ActuationErrors, want.PreemptorActivated = nil, false
	if err := refEv.PrepareCandidate(ctx, cs, &cand, req); err != nil {
		var bg *preempt.BackgroundError
		if !errors.As(err, &bg) {
			return ref, "", fmt.Errorf("reference PrepareCandidate(%s): %w", cand.Node, err)
		}
		want.ActuationErrors, want.PreemptorActivated = bg.Victims, true
	}
	want.NominatedNode, want.Victims, want.NumPDBViolations = cand.Node, cand.Victims, cand.NumPDBViolations
	want.Actions = cs.Recorded()
	note = fmt.Sprintf("%s broke the final tie among the equal-best nodes %v at %s (map order); the reference takes list order, %s", other.Name(), ties, got.NominatedNode, ref.NominatedNode)
	return want, note, nil
}

// Selectable is the candidates SelectCandidate chooses among: the dry
// run's, after the extenders of req, called again (they must answer the
// same arguments the same way).
func Selectable(ctx context.Context, c *preempt.Cluster, req *preempt.Request, dryRun []preempt.Candidate) ([]preempt.Candidate, error) {
	cands, err := preempt.CallExtenders(ctx, req.Config.Extenders, req.Pod, dryRun, preempt.NodePodsOf(c))
	if err != nil {
		return nil, fmt.Errorf("extenders, called again: %w", err)
	}
	return cands, nil
}
