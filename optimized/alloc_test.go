package optimized_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// basicRequest builds the basic shape at n nodes and its request, with the
// filter codes of the reference's filter phase.
func basicRequest(t testing.TB, n int) (*preempt.Cluster, *preempt.Request) {
	return shapeRequest(t, "basic", n)
}

// shapeRequest is basicRequest for any shape.
func shapeRequest(t testing.TB, shape string, n int) (*preempt.Cluster, *preempt.Request) {
	t.Helper()
	s := synth.MustBuild(shape, n, 1)
	ref, err := reference.Impl{}.NewEvaluator(s.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	fr := ref.Filter(context.Background(), s.Pod)
	return s.Cluster, &preempt.Request{Pod: s.Pod, Filter: fr.Codes(), Config: preempt.DefaultConfig(), Now: s.Now}
}

func skipUnderRace(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
}

// TestSelectVictimsOnNodeAllocatesNothing: on the basic shape the
// preemptor evicts all four pods of a node; on basic-v1.36 it reprieves
// one of them (the reprieve path allocates nothing either).
func TestSelectVictimsOnNodeAllocatesNothing(t *testing.T) {
	skipUnderRace(t)
	for _, tc := range []struct {
		shape   string
		victims int
	}{{"basic", 4}, {"basic-v1.36", 3}} {
		c, req := shapeRequest(t, tc.shape, 50)
		ev, err := optimized.Impl{}.NewEvaluator(c)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		ev.SelectVictimsOnNode(ctx, req, "node-3") // warm the scratch buffers
		allocs := testing.AllocsPerRun(100, func() {
			if v, _, st := ev.SelectVictimsOnNode(ctx, req, "node-3"); !st.IsSuccess() || len(v) != tc.victims {
				t.Fatalf("%s: victims %v status %+v", tc.shape, v, st)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: SelectVictimsOnNode allocates %v times per call, want 0", tc.shape, allocs)
		}
	}
}

func TestSelectCandidateAllocatesNothing(t *testing.T) {
	skipUnderRace(t)
	c, req := basicRequest(t, 200)
	ev, err := optimized.Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dr, err := ev.FindCandidates(ctx, req)
	if err != nil || len(dr.Candidates) < 100 {
		t.Fatalf("%d candidates, %v", len(dr.Candidates), err)
	}
	ev.SelectCandidate(dr.Candidates, req)
	allocs := testing.AllocsPerRun(100, func() {
		if ev.SelectCandidate(dr.Candidates, req) == nil {
			t.Fatal("no candidate")
		}
	})
	if allocs != 0 {
		t.Errorf("SelectCandidate allocates %v times per call, want 0", allocs)
	}
}

// decisionAllocs is the allocations of FindCandidates + SelectCandidate on
// a warm evaluator.
func decisionAllocs(t *testing.T, n int, workers int) float64 {
	allocs, _ := decisionCost(t, n, workers, false)
	return allocs
}

// decisionCost is the allocations and the bytes allocated per decision
// (FindCandidates + SelectCandidate on a warm evaluator), with or without
// Request.ReuseOutput.
func decisionCost(t *testing.T, n int, workers int, reuse bool) (allocs float64, bytes uint64) {
	c, req := basicRequest(t, n)
	req.ReuseOutput = reuse
	ev, err := optimized.Impl{Workers: workers}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	decide := func() {
		dr, err := ev.FindCandidates(ctx, req)
		if err != nil || ev.SelectCandidate(dr.Candidates, req) == nil {
			t.Fatalf("no decision: %v", err)
		}
	}
	decide()
	// The least of three measures: with the parallel dry run on a loaded
	// machine, a run now and then allocates once more (the scheduler's, not
	// the decision's).
	least := testing.AllocsPerRun(20, decide)
	for range 2 {
		least = min(least, testing.AllocsPerRun(20, decide))
	}
	bytes = ^uint64(0)
	for range 3 { // the least of three measures, as above
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 20 {
			decide()
		}
		runtime.ReadMemStats(&after)
		bytes = min(bytes, (after.TotalAlloc-before.TotalAlloc)/20)
	}
	return least, bytes
}

// With Request.ReuseOutput a decision allocates no list: only the worker
// goroutines of a parallel dry run (two each, and one to wait for them)
// and, from parallelOutputFrom candidates, output's second writer; the
// same few bytes at 500 and at 15,000 nodes, and the same allocations at
// 5000 (500 candidates) and 15,000 (without it the lists grow with the
// candidates).
func TestDecisionReusingOutputAllocatesNoList(t *testing.T) {
	skipUnderRace(t)
	for _, workers := range []int{1, 4} {
		_, smallBytes := decisionCost(t, 500, workers, true)
		midAllocs, _ := decisionCost(t, 5000, workers, true)
		largeAllocs, largeBytes := decisionCost(t, 15000, workers, true)
		if budget := float64(2*workers + 2); midAllocs > budget || largeAllocs > budget || midAllocs != largeAllocs {
			t.Errorf("workers=%d: %v allocations at 5000 nodes, %v at 15000, budget %v", workers, midAllocs, largeAllocs, budget)
		}
		// 4 KiB of slack: a goroutine's stack growth, a timer now and then.
		if largeBytes > smallBytes+4096 {
			t.Errorf("workers=%d: bytes per decision grow with the cluster: %d at 500 nodes, %d at 15000", workers, smallBytes, largeBytes)
		}
		_, ownedBytes := decisionCost(t, 15000, workers, false)
		if ownedBytes < 10*largeBytes {
			t.Errorf("workers=%d: %d bytes per decision without ReuseOutput, %d with it: want the lists gone", workers, ownedBytes, largeBytes)
		}
		t.Logf("workers=%d: bytes per decision with ReuseOutput %d (500 nodes), %d (15000); without %d (15000)", workers, smallBytes, largeBytes, ownedBytes)
	}
}

// The budget for a whole decision: the three result lists (candidates,
// their victims' shared backing array, node statuses) plus, when the dry run
// is parallel, the worker goroutines and output's second writer; the same
// at 5000 and 15,000 nodes.
func TestDecisionAllocationBudget(t *testing.T) {
	skipUnderRace(t)
	for _, workers := range []int{1, 4} {
		small, large := decisionAllocs(t, 5000, workers), decisionAllocs(t, 15000, workers)
		budget := float64(4 + 2*workers)
		if small > budget || large > budget {
			t.Errorf("workers=%d: %v allocations at 5000 nodes, %v at 15000, budget %v", workers, small, large, budget)
		}
		if small != large {
			t.Errorf("workers=%d: allocations grow with the cluster: %v at 5000 nodes, %v at 15000", workers, small, large)
		}
	}
}
