package conformance

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/internal/agreement"
	"github.com/preemptbench/preemptbench/preempt"
)

// The fuzz helpers decode any bytes into a problem (Decode) and demand that
// each of impls agrees with the reference on it. They add Seeds to the
// corpus; `go test` runs them on the seeds and on testdata/fuzz, and
// `go test -fuzz` explores from there. A module fuzzes its implementation
// with one line:
//
//	func FuzzConformance(f *testing.F) { conformance.Fuzz(f, myimpl.Impl{}) }

func addSeeds(f *testing.F) {
	for _, s := range Seeds() {
		f.Add(Encode(s))
	}
}

// Fuzz checks the whole decision and every stage.
func Fuzz(f *testing.F, impls ...preempt.Implementation) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := Decode(data).Build()
		compared := false
		for _, impl := range impls {
			if CheckAgainstReference(t, in, impl) {
				compared = true
				CheckStages(t, in, impl)
			}
		}
		skipUnlessCompared(t, compared)
	})
}

// FuzzGang checks gang preemption (PodGroupPreempter) against the
// reference on DecodeGang's problems: pod groups as victims and a gang
// preemptor, GenericWorkload on.
func FuzzGang(f *testing.F, impls ...preempt.Implementation) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := DecodeGang(data)
		compared := false
		for _, impl := range impls {
			if CheckGang(t, in, impl) == Compared {
				compared = true
			}
		}
		skipUnlessCompared(t, compared)
	})
}

// FuzzVictims checks SelectVictimsOnNode on every node, the
// cheapest stage to fuzz.
func FuzzVictims(f *testing.F, impls ...preempt.Implementation) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := Decode(data).Build()
		ref := newReferenceEvaluator(t, in)
		ctx := context.Background()
		compared := false
		defer func() { skipUnlessCompared(t, compared) }()
		for _, impl := range impls {
			ev := evaluatorUnlessRefused(t, in, impl)
			if ev == nil {
				continue
			}
			compared = true
			for _, n := range in.Cluster.Nodes {
				vr, nr, sr := ref.SelectVictimsOnNode(ctx, in.Request, n.Name)
				vo, no, so := ev.SelectVictimsOnNode(ctx, in.Request, n.Name)
				if diff := cmp.Diff([]any{vr, nr, sr}, []any{slices.Clone(vo), no, so}); diff != "" {
					t.Fatalf("SelectVictimsOnNode(%s) (-reference +%s):\n%s", n.Name, impl.Name(), diff)
				}
			}
		}
	})
}

// FuzzPick checks pickOneNodeForPreemption (SelectCandidate) on
// the reference dry run's candidates, every node a candidate, in the order
// found and rotated by the last input byte.
func FuzzPick(f *testing.F, impls ...preempt.Implementation) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := Decode(data).Build()
		in.Request.Config.MinCandidateNodesAbsolute = 100 // every node a candidate
		ref := newReferenceEvaluator(t, in)
		dr, _ := ref.FindCandidates(context.Background(), in.Request)
		cands := dr.Candidates
		if len(cands) > 0 && len(data) > 0 {
			k := int(data[len(data)-1]) % len(cands)
			cands = append(slices.Clone(cands[k:]), cands[:k]...)
		}
		compared := false
		for _, impl := range impls {
			ev := evaluatorUnlessRefused(t, in, impl)
			if ev == nil {
				continue
			}
			compared = true
			checkSelectCandidate(t, ref, ev, cands, in.Request, impl)
		}
		skipUnlessCompared(t, compared)
	})
}

// checkSelectCandidate compares SelectCandidate of ev with the
// reference's; an implementation that breaks the final tie at random may
// pick any equal-best candidate.
func checkSelectCandidate(t TB, ref, ev preempt.Evaluator, cands []preempt.Candidate, req *preempt.Request, impl preempt.Implementation) {
	t.Helper()
	want, got := ref.SelectCandidate(cands, req), ev.SelectCandidate(cands, req)
	if agreement.TieIsRandom(impl) && want != nil && got != nil && got.Node != want.Node {
		if ties := agreement.EqualBest(ref, cands, req); slices.Contains(ties, got.Node) {
			return
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("SelectCandidate (-reference +%s):\n%s", impl.Name(), diff)
	}
}

// evaluatorUnlessRefused builds impl's evaluator for in; nil when impl
// refuses in (preempt.Limited).
func evaluatorUnlessRefused(t TB, in Input, impl preempt.Implementation) preempt.Evaluator {
	t.Helper()
	if refused(t, in, impl) {
		return nil
	}
	ev, err := impl.NewEvaluator(in.Cluster)
	if err != nil {
		t.Fatalf("%s: %v", impl.Name(), err)
	}
	return ev
}

// skipUnlessCompared reports an input every implementation refused as
// skipped, never as passed.
func skipUnlessCompared(t *testing.T, compared bool) {
	if !compared && !t.Failed() {
		t.Skip("every implementation refuses this input (preempt.Limited)")
	}
}
