package fuzz

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/reference"
)

// The fuzz targets decode any bytes into a problem (Decode) and demand that
// optimized agrees with the reference. `go test` runs them on the seeds and
// on testdata/fuzz; `scripts/fuzz.sh` fuzzes each in turn.

func addSeeds(f *testing.F) {
	for _, s := range Seeds() {
		f.Add(Encode(s))
	}
}

// FuzzPreempt: the whole decision and every stage, with the parallel dry
// run forced on.
func FuzzPreempt(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := Decode(data).Build()
		CheckAgainstReference(t, in, optimized.Impl{Workers: 3, ParallelFrom: 1})
		CheckStages(t, in, optimized.Impl{Workers: 2, ParallelFrom: 1})
	})
}

// FuzzSelectVictimsOnNode: SelectVictimsOnNode on every node.
func FuzzSelectVictimsOnNode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := Decode(data).Build()
		ref, _ := reference.Impl{}.NewEvaluator(in.Cluster)
		opt, _ := optimized.Impl{}.NewEvaluator(in.Cluster)
		ctx := context.Background()
		for _, n := range in.Cluster.Nodes {
			vr, nr, sr := ref.SelectVictimsOnNode(ctx, in.Request, n.Name)
			vo, no, so := opt.SelectVictimsOnNode(ctx, in.Request, n.Name)
			if diff := cmp.Diff([]any{vr, nr, sr}, []any{slices.Clone(vo), no, so}); diff != "" {
				t.Fatalf("SelectVictimsOnNode(%s) (-reference +optimized):\n%s", n.Name, diff)
			}
		}
	})
}

// FuzzPickOneNode: pickOneNodeForPreemption on the dry run's candidates,
// in the order found and rotated by the last input byte.
func FuzzPickOneNode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := Decode(data).Build()
		in.Request.Config.MinCandidateNodesAbsolute = 100 // every node a candidate
		ref, _ := reference.Impl{}.NewEvaluator(in.Cluster)
		opt, _ := optimized.Impl{}.NewEvaluator(in.Cluster)
		dr, _ := ref.FindCandidates(context.Background(), in.Request)
		cands := dr.Candidates
		if len(cands) > 0 && len(data) > 0 {
			k := int(data[len(data)-1]) % len(cands)
			cands = append(slices.Clone(cands[k:]), cands[:k]...)
		}
		if diff := cmp.Diff(ref.SelectCandidate(cands, in.Request), opt.SelectCandidate(cands, in.Request)); diff != "" {
			t.Fatalf("SelectCandidate (-reference +optimized):\n%s", diff)
		}
	})
}
