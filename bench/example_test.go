package bench_test

import (
	"testing"

	"github.com/preemptbench/preemptbench/bench"
	"github.com/preemptbench/preemptbench/reference"
)

// An implementation's module benchmarks every stage under the project's
// names, interleaved with the implementations it is compared with, with
// one benchmark function; its results go through `compare stat` and
// `compare gate` unchanged. reference.Impl stands here for the
// implementation under test.
func ExampleRun() {
	_ = func(b *testing.B) { bench.Run(b, reference.Impl{}) }
}

// One stage alone, every implementation interleaved, named
// BenchmarkDecide/shape=basic/nodes=N/impl=NAME.
func ExampleDecide() {
	_ = func(b *testing.B) { bench.Decide(b, reference.Impl{}) }
}
