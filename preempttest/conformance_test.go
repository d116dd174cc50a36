package preempttest

import (
	"testing"

	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/registry"
)

// TestConformance runs the whole suite against every implementation of
// the registry: the tables with their expected values and the properties
// against the reference. Run the properties long with
//
//	go test ./preempttest -run 'TestConformance/upstream/properties' -rapid.checks=20000
func TestConformance(t *testing.T) {
	for _, impl := range registry.All() {
		t.Run(impl.Name(), func(t *testing.T) { Run(t, impl) })
	}
}

// The fuzz targets check every implementation of the registry but the
// reference against it; `scripts/fuzz.sh` fuzzes each in turn and their
// corpora live in testdata/fuzz.

func FuzzPreempt(f *testing.F) { Fuzz(f, registry.Others()...) }

func FuzzSelectVictimsOnNode(f *testing.F) { FuzzVictims(f, registry.Others()...) }

func FuzzPickOneNode(f *testing.F) { FuzzPick(f, registry.Others()...) }

// FuzzOptimizedParallelDryRun forces optimized's parallel dry run onto
// every input, with more workers than cores.
func FuzzOptimizedParallelDryRun(f *testing.F) {
	Fuzz(f, optimized.Impl{Workers: 3, ParallelFrom: 1})
}
