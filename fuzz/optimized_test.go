package fuzz

import (
	"fmt"
	"runtime"
	"testing"

	"pgregory.net/rapid"

	"github.com/preemptbench/preemptbench/optimized"
)

// TestOptimizedAgreesWithReference: on every generated cluster the
// optimized implementation makes exactly the reference's decision (no tie
// allowance), with the default number of workers.
func TestOptimizedAgreesWithReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		CheckAgainstReference(t, Gen(64).Draw(t, "input"), optimized.Impl{})
	})
}

// TestOptimizedParallelAgreesWithReference forces the parallel dry run
// onto every cluster, with more workers than cores.
func TestOptimizedParallelAgreesWithReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		workers := rapid.IntRange(2, 8).Draw(t, "workers")
		CheckAgainstReference(t, Gen(64).Draw(t, "input"), optimized.Impl{Workers: workers, ParallelFrom: 1})
	})
}

func TestOptimizedStagesAgreeWithReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		CheckStages(t, Gen(64).Draw(t, "input"), optimized.Impl{Workers: 2, ParallelFrom: 1})
	})
}

func TestOptimizedEvaluatorReuse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ins := GenMany(64, 6).Draw(t, "inputs")
		CheckReuse(t, ins, optimized.Impl{Workers: 2, ParallelFrom: 1})
		for _, in := range ins {
			CheckAgainstReference(t, in, optimized.Impl{})
		}
	})
}

// TestOptimizedAcrossGOMAXPROCS: the same decisions at GOMAXPROCS 1, 2
// and 8, with the default worker count (GOMAXPROCS) and the parallel dry
// run forced on.
func TestOptimizedAcrossGOMAXPROCS(t *testing.T) {
	for _, procs := range []int{1, 2, 8} {
		t.Run(fmt.Sprint(procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			rapid.Check(t, func(t *rapid.T) {
				CheckAgainstReference(t, Gen(64).Draw(t, "input"), optimized.Impl{ParallelFrom: 1})
			})
		})
	}
}
