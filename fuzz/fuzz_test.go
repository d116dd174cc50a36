package fuzz

import (
	"testing"

	"github.com/preemptbench/preemptbench/internal/conformance"
	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/optimized"
)

// The targets pass their F and T to conformance's seeds and bodies, which
// take interfaces (preempttest.Fuzz and the others are the same behind a
// *testing.F): so this file compiles too where a libFuzzer build swaps its
// testing package for go-118-fuzz-build's (.clusterfuzzlite/build.sh,
// scripts/libfuzzer.sh).

func FuzzPreempt(f *testing.F) {
	conformance.AddSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { conformance.FuzzBody(t, data, registry.Others()...) })
}

func FuzzSelectVictimsOnNode(f *testing.F) {
	conformance.AddSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { conformance.FuzzVictimsBody(t, data, registry.Others()...) })
}

func FuzzPickOneNode(f *testing.F) {
	conformance.AddSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { conformance.FuzzPickBody(t, data, registry.Others()...) })
}

func FuzzGang(f *testing.F) {
	conformance.AddSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { conformance.FuzzGangBody(t, data, registry.Others()...) })
}

func FuzzOptimizedParallelDryRun(f *testing.F) {
	conformance.AddSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		conformance.FuzzBody(t, data, optimized.Impl{Workers: 3, ParallelFrom: 1})
	})
}
