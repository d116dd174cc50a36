package harness

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/testobj"
)

// podIndex keeps the others in order, whatever the positions of the
// gone pods, repeated or absent ones included, over removals and appends
// on one list.
func TestPodIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := rng.IntN(12)
		made := 0
		newPod := func() *v1.Pod {
			p := testobj.MakePod().Name(fmt.Sprint(made)).Obj()
			made++
			return p
		}
		ps := make([]*v1.Pod, n)
		for i := range ps {
			ps[i] = newPod()
		}
		x := newPodIndex(ps)
		want := slices.Clone(ps)
		for op := range 20 {
			if rng.IntN(3) == 0 {
				p := newPod()
				ps = x.add(ps, p)
				want = append(want, p)
			} else {
				var gone []*v1.Pod
				for range rng.IntN(5) {
					if len(ps) > 0 && rng.IntN(4) > 0 {
						gone = append(gone, ps[rng.IntN(len(ps))])
					} else {
						gone = append(gone, newPod()) // not in ps
					}
				}
				before := slices.Clone(ps)
				ps = x.remove(ps, gone)
				want = slices.DeleteFunc(want, func(p *v1.Pod) bool { return slices.Contains(gone, p) })
				if !slices.Equal(ps, want) {
					t.Fatalf("trial %d op %d: %v without %v = %v, want %v", trial, op, names(before), names(gone), names(ps), names(want))
				}
			}
			if len(x.seqs) != len(ps) || !slices.IsSorted(x.seqs) {
				t.Fatalf("trial %d op %d: numbers %v for %d pods", trial, op, x.seqs, len(ps))
			}
		}
	}
}

func names(ps []*v1.Pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}
