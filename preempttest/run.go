package preempttest

import (
	"fmt"
	"runtime"
	"testing"

	"pgregory.net/rapid"

	"github.com/preemptbench/preemptbench/preempt"
)

// Run runs the whole conformance suite against impl: every table (with
// its expected values) and every property (against the reference), each
// as a subtest.
func Run(t *testing.T, impl preempt.Implementation) {
	t.Helper()
	t.Run("tables", func(t *testing.T) { RunTables(t, impl) })
	t.Run("properties", func(t *testing.T) { RunProperties(t, impl) })
}

// A Table is one table test of the suite: explicit cases with expected
// values, run against impl.
type Table struct {
	Name string
	Test func(t *testing.T, impl preempt.Implementation)
}

// Tables lists the table tests: first upstream's own cases ported
// (Upstream*), then the project's stage tests.
func Tables() []Table {
	return []Table{
		{"UpstreamPostFilter", testUpstreamPostFilter},
		{"UpstreamDryRunPreemption", testUpstreamDryRunPreemption},
		{"UpstreamSelectBestCandidate", testUpstreamSelectBestCandidate},
		{"UpstreamPodEligibleToPreemptOthers", testUpstreamPodEligibleToPreemptOthers},
		{"UpstreamPreempt", testUpstreamPreempt},
		{"UpstreamFilterVictimsWithPDBViolation", testUpstreamFilterVictimsWithPDBViolation},
		{"UpstreamAffinityAndSpread", testUpstreamAffinityAndSpread},
		{"UpstreamPrepareCandidate", testUpstreamPrepareCandidate},
		{"UpstreamRemoveNominatedNodeName", testUpstreamRemoveNominatedNodeName},
		{"UpstreamPreemptPod", testUpstreamPreemptPod},
		{"FilterResources", testFilterResources},
		{"FilterHostPorts", testFilterHostPorts},
		{"FilterUnresolvablePlugins", testFilterUnresolvablePlugins},
		{"FilterNominatedPods", testFilterNominatedPods},
		{"PodEligibleToPreemptOthersExtra", testPodEligibleToPreemptOthersExtra},
		{"SelectVictimsOnNodeOrder", testSelectVictimsOnNodeOrder},
		{"SelectVictimsOnNodeNominatedPods", testSelectVictimsOnNodeNominatedPods},
		{"SelectVictimsOnNodeHostPorts", testSelectVictimsOnNodeHostPorts},
		{"SelectVictimsOnNodePDB", testSelectVictimsOnNodePDB},
		{"FindCandidates", testFindCandidates},
		{"FindCandidatesNoNodes", testFindCandidatesNoNodes},
		{"DryRunPreemptionStopRule", testDryRunPreemptionStopRule},
		{"DryRunPreemptionErrors", testDryRunPreemptionErrors},
		{"SelectCandidateCriteria", testSelectCandidateCriteria},
		{"SelectCandidateClock", testSelectCandidateClock},
		{"PrepareCandidate", testPrepareCandidate},
		{"PrepareCandidatePatches", testPrepareCandidatePatches},
		{"PreemptDecision", testPreemptDecision},
		{"PreemptFitErrorMessage", testPreemptFitErrorMessage},
		{"Extenders", testExtenders},
		{"ActuationFaults", testActuationFaults},
		{"RunningPreemption", testRunningPreemption},
		{"InputsUnchanged", testInputsUnchanged},
		{"StagesWithUnknownNames", testStagesWithUnknownNames},
	}
}

// RunTables runs every table against impl, each as a subtest.
func RunTables(t *testing.T, impl preempt.Implementation) {
	t.Helper()
	for _, tt := range Tables() {
		t.Run(tt.Name, func(t *testing.T) { tt.Test(t, impl) })
	}
}

// A Property is a rapid property of the suite: it draws a problem and
// checks impl against the reference on it.
type Property struct {
	Name  string
	Check func(t *rapid.T, impl preempt.Implementation)
}

// Properties lists the differential properties. Each draws clusters of 1
// to MaxNodes nodes.
func Properties() []Property {
	return []Property{
		{"Decision", func(t *rapid.T, impl preempt.Implementation) {
			CheckAgainstReference(t, Gen(MaxNodes).Draw(t, "input"), impl)
		}},
		{"Stages", func(t *rapid.T, impl preempt.Implementation) {
			CheckStages(t, Gen(MaxNodes).Draw(t, "input"), impl)
		}},
		{"EvaluatorReuse", func(t *rapid.T, impl preempt.Implementation) {
			ins := GenMany(MaxNodes, 6).Draw(t, "inputs")
			CheckReuse(t, ins, impl)
			for _, in := range ins {
				CheckAgainstReference(t, in, impl)
			}
		}},
	}
}

// RunProperties runs every property against impl under rapid (the number
// of checks is rapid's -rapid.checks, 100 by default), then the whole
// decision again at GOMAXPROCS 1, 2 and 8.
func RunProperties(t *testing.T, impl preempt.Implementation) {
	t.Helper()
	for _, p := range Properties() {
		t.Run(p.Name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) { p.Check(rt, impl) })
		})
	}
	decision := Properties()[0]
	for _, procs := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("%s/GOMAXPROCS=%d", decision.Name, procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			rapid.Check(t, func(rt *rapid.T) { decision.Check(rt, impl) })
		})
	}
}
