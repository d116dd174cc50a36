package fuzz

import (
	"testing"

	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempttest"
)

func FuzzPreempt(f *testing.F) { preempttest.Fuzz(f, registry.Others()...) }

func FuzzSelectVictimsOnNode(f *testing.F) { preempttest.FuzzVictims(f, registry.Others()...) }

func FuzzPickOneNode(f *testing.F) { preempttest.FuzzPick(f, registry.Others()...) }

func FuzzGang(f *testing.F) { preempttest.FuzzGang(f, registry.Others()...) }

func FuzzOptimizedParallelDryRun(f *testing.F) {
	preempttest.Fuzz(f, optimized.Impl{Workers: 3, ParallelFrom: 1})
}
