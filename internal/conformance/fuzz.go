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

// AddSeeds adds Seeds to f's corpus, in a test binary only: a libFuzzer
// build (go-118-fuzz-build) calls the whole target, seeding included, for
// every input, and its F.Add does nothing.
func AddSeeds(f interface{ Add(args ...any) }) {
	if !testing.Testing() {
		return
	}
	for _, s := range Seeds() {
		f.Add(Encode(s))
	}
}

// Each helper's check of one input is exported too (FuzzBody,
// FuzzGangBody, FuzzVictimsBody, FuzzPickBody), for a target that must
// compile against another testing package: a libFuzzer build of a native
// target (go-118-fuzz-build, as OSS-Fuzz and ClusterFuzzLite build it)
// swaps the testing package of the target's file for its own, whose
// *testing.F a helper taking the standard one cannot accept. The fuzz
// package's targets are written so (fuzz/fuzz_test.go).

// FuzzT is what a fuzz body needs of its *testing.T: the standard one has
// it, and so has the T of go-118-fuzz-build's testing package.
type FuzzT interface {
	TB
	Skip(args ...any)
}

// Fuzz checks the whole decision and every stage.
func Fuzz(f *testing.F, impls ...preempt.Implementation) {
	AddSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { FuzzBody(t, data, impls...) })
}

// FuzzBody is Fuzz's check of one input.
func FuzzBody(t FuzzT, data []byte, impls ...preempt.Implementation) {
	in := Decode(data).Build()
	compared := false
	for _, impl := range impls {
		if CheckAgainstReference(t, in, impl) {
			compared = true
			CheckStages(t, in, impl)
		}
	}
	skipUnlessCompared(t, compared)
}

// FuzzGang checks gang preemption (PodGroupPreempter) against the
// reference on DecodeGang's problems: pod groups as victims and a gang
// preemptor, GenericWorkload on.
func FuzzGang(f *testing.F, impls ...preempt.Implementation) {
	AddSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { FuzzGangBody(t, data, impls...) })
}

// FuzzGangBody is FuzzGang's check of one input.
func FuzzGangBody(t FuzzT, data []byte, impls ...preempt.Implementation) {
	in := DecodeGang(data)
	compared := false
	for _, impl := range impls {
		if CheckGang(t, in, impl) == Compared {
			compared = true
		}
	}
	skipUnlessCompared(t, compared)
}

// FuzzVictims checks SelectVictimsOnNode on every node, the
// cheapest stage to fuzz.
func FuzzVictims(f *testing.F, impls ...preempt.Implementation) {
	AddSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { FuzzVictimsBody(t, data, impls...) })
}

// FuzzVictimsBody is FuzzVictims's check of one input.
func FuzzVictimsBody(t FuzzT, data []byte, impls ...preempt.Implementation) {
	in := Decode(data).Build()
	ref := newReferenceEvaluator(t, in)
	ctx := context.Background()
	compared := forEachEvaluator(t, in, impls, func(impl preempt.Implementation, ev preempt.Evaluator) {
		for _, n := range in.Cluster.Nodes {
			vr, nr, sr := ref.SelectVictimsOnNode(ctx, in.Request, n.Name)
			vo, no, so := ev.SelectVictimsOnNode(ctx, in.Request, n.Name)
			if diff := cmp.Diff([]any{vr, nr, sr}, []any{slices.Clone(vo), no, so}); diff != "" {
				t.Fatalf("SelectVictimsOnNode(%s) (-reference +%s):\n%s", n.Name, impl.Name(), diff)
			}
		}
	})
	skipUnlessCompared(t, compared)
}

// FuzzPick checks pickOneNodeForPreemption (SelectCandidate) on
// the reference dry run's candidates, every node a candidate, in the order
// found and rotated by the last input byte.
func FuzzPick(f *testing.F, impls ...preempt.Implementation) {
	AddSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { FuzzPickBody(t, data, impls...) })
}

// FuzzPickBody is FuzzPick's check of one input.
func FuzzPickBody(t FuzzT, data []byte, impls ...preempt.Implementation) {
	in := Decode(data).Build()
	in.Request.Config.MinCandidateNodesAbsolute = 100 // every node a candidate
	ref := newReferenceEvaluator(t, in)
	dr, _ := ref.FindCandidates(context.Background(), in.Request)
	cands := dr.Candidates
	if len(cands) > 0 && len(data) > 0 {
		k := int(data[len(data)-1]) % len(cands)
		cands = append(slices.Clone(cands[k:]), cands[:k]...)
	}
	compared := forEachEvaluator(t, in, impls, func(impl preempt.Implementation, ev preempt.Evaluator) {
		checkSelectCandidate(t, ref, ev, cands, in.Request, impl)
	})
	skipUnlessCompared(t, compared)
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

// forEachEvaluator calls check with the evaluator of each of impls that
// does not refuse in; false when every one refuses.
func forEachEvaluator(t TB, in Input, impls []preempt.Implementation, check func(preempt.Implementation, preempt.Evaluator)) (compared bool) {
	for _, impl := range impls {
		if ev := evaluatorUnlessRefused(t, in, impl); ev != nil {
			compared = true
			check(impl, ev)
		}
	}
	return compared
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
// skipped, never as passed. It runs only after every check returned (a
// failed check stops the body with Fatalf), so it need not ask t.Failed,
// which go-118-fuzz-build's T does not support.
func skipUnlessCompared(t FuzzT, compared bool) {
	if !compared {
		t.Skip("every implementation refuses this input (preempt.Limited)")
	}
}
