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
//
// # Index
//
//   - [Run]: every stage's benchmark for impls, interleaved; a module's
//     one-line BenchmarkPreemption.
//   - One stage each: [Decide], [DecideCachedPreemptor], [DecideCold],
//     [NewEvaluator], [FindCandidates], [DryRunPreemption],
//     [SelectVictimsOnNode], [SelectCandidate], [PrepareCandidate],
//     [Preempt], [PreemptExtender], [PreemptExtenderNodeCache], and
//     [PreemptionStream] (scheduler_perf's workloads as streams).
//   - Fixtures: [FixtureFor], [EvaluatorFor], [StreamOf], [GangStreamFor],
//     [Sizes], [Stages]; the flags -bench.nodes, -bench.shapes,
//     -bench.preemptors, -bench.gangs, -bench.feature-gates, -bench.large.
//   - [Floor]: the floor of a decision (package bench/floor) as
//     impl=floor of Decide.
//   - The gate's trust knobs: [SlowdownPercent], [ParseKnob], [Spin].
package bench
