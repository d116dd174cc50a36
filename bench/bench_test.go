package bench

import (
	"testing"

	"github.com/preemptbench/preemptbench/internal/registry"
)

// One benchmark per stage, every implementation of the registry:
// BenchmarkStage/shape=S/nodes=N/impl=I.

func BenchmarkPreempt(b *testing.B)                  { Preempt(b, registry.All()...) }
func BenchmarkDecide(b *testing.B)                   { Decide(b, append(registry.All(), Floor())...) }
func BenchmarkDecideCachedPreemptor(b *testing.B)    { DecideCachedPreemptor(b, registry.All()...) }
func BenchmarkDecideCold(b *testing.B)               { DecideCold(b, registry.All()...) }
func BenchmarkNewEvaluator(b *testing.B)             { NewEvaluator(b, registry.All()...) }
func BenchmarkFindCandidates(b *testing.B)           { FindCandidates(b, registry.All()...) }
func BenchmarkDryRunPreemption(b *testing.B)         { DryRunPreemption(b, registry.All()...) }
func BenchmarkSelectVictimsOnNode(b *testing.B)      { SelectVictimsOnNode(b, registry.All()...) }
func BenchmarkSelectCandidate(b *testing.B)          { SelectCandidate(b, registry.All()...) }
func BenchmarkPrepareCandidate(b *testing.B)         { PrepareCandidate(b, registry.All()...) }
func BenchmarkPreemptExtender(b *testing.B)          { PreemptExtender(b, registry.All()...) }
func BenchmarkPreemptExtenderNodeCache(b *testing.B) { PreemptExtenderNodeCache(b, registry.All()...) }
func BenchmarkPreemptionStream(b *testing.B)         { PreemptionStream(b, registry.All()...) }
