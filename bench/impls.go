// Package bench holds the `go test -bench` suites of every stage of
// DefaultPreemption (suite.go), exported so that any implementation, in
// this module or another, is measured under the project's names; the
// fixtures they share; and the knobs the gate's trust test uses to fake a
// regression. This module's benchmarks (bench_test.go) run the suites for
// every implementation of the registry.
//
// Benchmark names pivot in benchstat and `compare stat`:
// BenchmarkDecide/shape=basic/nodes=5000/impl=reference, every part
// key=value, sizes first, implementation last.
package bench

// Stages returns the names of the suite's benchmarks, in the order Run
// runs them; bench_test.go has BenchmarkX for each X.
func Stages() []string {
	var names []string
	for _, s := range suite {
		names = append(names, s.Name)
	}
	return names
}
