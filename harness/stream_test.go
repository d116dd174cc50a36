package harness

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// withoutAll keeps the others in order, whatever the positions of the
// gone pods, repeated or absent ones included.
func TestWithoutAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var at []int
	for trial := range 2000 {
		n := rng.IntN(12)
		ps := make([]*v1.Pod, n)
		for i := range ps {
			ps[i] = &v1.Pod{}
			ps[i].Name = fmt.Sprint(i)
		}
		var gone []*v1.Pod
		for range rng.IntN(5) {
			if n > 0 && rng.IntN(4) > 0 {
				gone = append(gone, ps[rng.IntN(n)])
			} else {
				gone = append(gone, &v1.Pod{}) // not in ps
			}
		}
		var want []*v1.Pod
		for _, p := range ps {
			if !slices.Contains(gone, p) {
				want = append(want, p)
			}
		}
		backing := ps
		var got []*v1.Pod
		got, at = withoutAll(slices.Clone(ps), gone, at)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: %v without %v = %v, want %v", trial, names(backing), names(gone), names(got), names(want))
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
