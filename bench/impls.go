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

// Stages are the names of the benchmarks of Suite, in the order they run;
// bench_test.go has BenchmarkX for each X.
var Stages = func() []string {
	var names []string
	for _, s := range Suite {
		names = append(names, s.Name)
	}
	return names
}()
