package bench

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"

	"github.com/preemptbench/preemptbench/registry"
)

// One benchmark per stage, every implementation of the registry:
// BenchmarkStage/shape=S/nodes=N/impl=I.

func BenchmarkPreempt(b *testing.B)                  { Preempt(b, registry.All()...) }
func BenchmarkDecide(b *testing.B)                   { Decide(b, registry.All()...) }
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

// Every stage of Stages (what the compare command lists and runs) has its
// BenchmarkX in this file, in the same order, and no other.
func TestStagesHaveBenchmarks(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "bench_test.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var benchmarks []string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && strings.HasPrefix(fn.Name.Name, "Benchmark") {
			benchmarks = append(benchmarks, strings.TrimPrefix(fn.Name.Name, "Benchmark"))
		}
	}
	if !slices.Equal(Stages(), benchmarks) {
		t.Errorf("Stages() = %v, bench_test.go's benchmarks are %v", Stages(), benchmarks)
	}
}
