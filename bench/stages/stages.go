// Package stages names the benchmarks of bench.Suite, in the order they
// run, for programs that name them without running them (the compare
// command): importing bench itself would link the conformance suite and
// its test helpers into them. bench's tests check the two lists agree.
package stages

// Names are bench.Suite's names, in order.
var Names = []string{
	"Preempt", "Decide", "DecideCachedPreemptor", "DecideCold",
	"NewEvaluator", "FindCandidates",
	"DryRunPreemption", "SelectVictimsOnNode",
	"SelectCandidate", "PrepareCandidate",
	"PreemptExtender", "PreemptExtenderNodeCache",
	"PreemptionStream",
}
