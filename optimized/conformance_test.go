package optimized_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/preemptbench/preemptbench/internal/conformance"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempttest"
)

// The registry's optimized.Impl{} runs the dry run in parallel only on
// large clusters; these force the parallel path onto the suite's small
// ones, with more workers than cores. (Its fuzz target,
// FuzzOptimizedParallelDryRun, lives with the others in package fuzz, so
// that CI builds one instrumented test binary.)

func TestConformanceParallelDryRun(t *testing.T) {
	preempttest.Run(t, optimized.Impl{Workers: 3, ParallelFrom: 1})
}

func TestConformanceAnyWorkerCount(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		workers := rapid.IntRange(2, 8).Draw(t, "workers")
		conformance.CheckAgainstReference(t, conformance.Gen(conformance.MaxNodes).Draw(t, "input"), optimized.Impl{Workers: workers, ParallelFrom: 1})
	})
}
