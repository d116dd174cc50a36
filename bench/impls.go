// Package bench holds the `go test -bench` suites of every implementation
// and every stage of DefaultPreemption (bench_test.go), the fixtures they
// share, and the knobs the gate's trust test uses to fake a regression.
//
// Benchmark names pivot in benchstat and `compare stat`:
// BenchmarkDecide/shape=basic/nodes=5000/impl=reference, every part
// key=value, sizes first, implementation last.
package bench

import (
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/upstream"
)

// Impls are the implementations every benchmark runs, in column order of
// the comparison tables. Append new implementations here.
var Impls = []preempt.Implementation{reference.Impl{}, upstream.Impl{}, optimized.Impl{}}

// Stages are the benchmarks of bench_test.go, BenchmarkX for each X, in
// the order they run.
var Stages = []string{
	"Preempt", "Decide", "DecideCold", "NewEvaluator", "FindCandidates",
	"DryRunPreemption", "SelectVictimsOnNode", "SelectCandidate", "PrepareCandidate",
}
