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
