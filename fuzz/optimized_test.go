package fuzz

import (
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
