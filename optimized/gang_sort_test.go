package optimized

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

// TestSortUnitsKeyed: the keyed sort gives sortUnits' order on units
// drawn to tie at every criterion (equal priorities, ranks, sizes and
// starts, the extremes of each), presorted or not, and falls back for a
// size it cannot pack.
func TestSortUnitsKeyed(t *testing.T) {
	c := &preempt.Cluster{Nodes: []*v1.Node{groupNode("n1")}}
	for i := range 64 {
		c.Pods = append(c.Pods, groupPod(fmt.Sprintf("p%02d", 63-i), "n1", "", 0).Obj())
	}
	s, err := Prepare(c)
	if err != nil {
		t.Fatal(err)
	}
	d := &decision{s: s}
	prios := []int32{math.MinInt32, -1, 0, 1, 1000, math.MaxInt32}
	ranks := []int8{math.MinInt8, 0, 1, 2, math.MaxInt8}
	sizes := []int32{1, 2, 3, maxKeyedSize}
	starts := []int64{math.MinInt64, -5, 0, 7, math.MaxInt64}
	rng := rand.New(rand.NewPCG(1, 2))
	var keys, tmp []unitKey
	var buf []unitRef
	for round := range 400 {
		n := rng.IntN(65)
		var us []unitRef
		for _, p := range rng.Perm(64)[:n] {
			us = append(us, unitRef{unit: -1, pod: int32(p), prio: prios[rng.IntN(len(prios))], rank: ranks[rng.IntN(len(ranks))],
				size: sizes[rng.IntN(len(sizes))], earliest: starts[rng.IntN(len(starts))]})
		}
		if round%7 == 0 && n > 0 {
			us[0].size = maxKeyedSize + 1 // the fallback
		}
		want := slices.Clone(us)
		d.sortUnits(want)
		if round%5 == 0 {
			us = slices.Clone(want) // already sorted
		}
		keys, tmp, buf = d.sortUnitsKeyed(us, keys, tmp, buf)
		if diff := cmp.Diff(want, us, cmp.AllowUnexported(unitRef{})); diff != "" {
			t.Fatalf("round %d (-sortUnits +sortUnitsKeyed):\n%s", round, diff)
		}
	}
}
