package conformance

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
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
		{"UpstreamSelectVictimsOnNode", testUpstreamSelectVictimsOnNode},
		{"UpstreamFilterVictimsWithPDBViolation", testUpstreamFilterVictimsWithPDBViolation},
		{"UpstreamAffinityAndSpread", testUpstreamAffinityAndSpread},
		{"UpstreamPrepareCandidate", testUpstreamPrepareCandidate},
		{"UpstreamRemoveNominatedNodeName", testUpstreamRemoveNominatedNodeName},
		{"UpstreamPreemptPod", testUpstreamPreemptPod},
		{"UpstreamPodGroupSelectVictimsOnDomain", testUpstreamPodGroupSelectVictimsOnDomain},
		{"UpstreamPodGroupPreempt", testUpstreamPodGroupPreempt},
		{"UpstreamPodGroupIntegration", testUpstreamPodGroupIntegration},
		{"FilterResources", testFilterResources},
		{"FilterHostPorts", testFilterHostPorts},
		{"FilterUnresolvablePlugins", testFilterUnresolvablePlugins},
		{"FilterNominatedPods", testFilterNominatedPods},
		{"FilterNamespaceSelector", testFilterNamespaceSelector},
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
		{"PodGroupVictims", testPodGroupVictims},
		{"GangPreemption", testGangPreemption},
		{"ReleaseBehaviours", testReleaseBehaviours},
	}
}

// RunTables runs every table against impl, each as a subtest.
func RunTables(t *testing.T, impl preempt.Implementation) {
	t.Helper()
	for _, tt := range Tables() {
		t.Run(tt.Name, func(t *testing.T) { tt.Test(t, impl) })
	}
}

// An Outcome is what one check of a property did with its problem.
type Outcome int

const (
	// Compared: the implementation answered and was compared.
	Compared Outcome = iota
	// Refused: the implementation refused the problem (preempt.Limited);
	// nothing was compared.
	Refused
	// NotApplicable: the property checks a promise the implementation does
	// not make (an optional interface, such as preempt.Updater).
	NotApplicable
)

// A Property is a rapid property of the suite: it draws a problem, checks
// impl against the reference on it and says what it did.
type Property struct {
	Name  string
	Check func(t *rapid.T, impl preempt.Implementation) Outcome
}

func outcome(compared bool) Outcome {
	if compared {
		return Compared
	}
	return Refused
}

// Properties lists the differential properties. Each draws clusters of 1
// to MaxNodes nodes.
func Properties() []Property {
	return []Property{
		{"Decision", func(t *rapid.T, impl preempt.Implementation) Outcome {
			return outcome(CheckAgainstReference(t, Gen(MaxNodes).Draw(t, "input"), impl))
		}},
		{"Stages", func(t *rapid.T, impl preempt.Implementation) Outcome {
			return outcome(CheckStages(t, Gen(MaxNodes).Draw(t, "input"), impl))
		}},
		{"EvaluatorReuse", func(t *rapid.T, impl preempt.Implementation) Outcome {
			ins := GenMany(MaxNodes, 6).Draw(t, "inputs")
			compared := CheckReuse(t, ins, impl)
			for _, in := range ins {
				compared = CheckAgainstReference(t, in, impl) || compared
			}
			return outcome(compared)
		}},
		{"Update", func(t *rapid.T, impl preempt.Implementation) Outcome {
			return CheckUpdate(t, Gen(MaxNodes).Draw(t, "input"), GenChange().Draw(t, "change"), impl)
		}},
		{"GangDecision", func(t *rapid.T, impl preempt.Implementation) Outcome {
			return CheckGang(t, GenGang(MaxNodes).Draw(t, "input"), impl)
		}},
		// GangVolumes: the gang decision on problems whose members have
		// volumes and resource claims (GenGangVolumes). An implementation
		// that does not model them in a gang (a refusal of volumes or
		// dynamic resource allocation "in a gang") makes no promise
		// there; a gang the reference refuses a member of is refused.
		{"GangVolumes", func(t *rapid.T, impl preempt.Implementation) Outcome {
			in := GenGangVolumes(MaxVolumeNodes).Draw(t, "input")
			if refusedGangMember(in) {
				return Refused
			}
			if refusedGangVolumes(in, impl) {
				return NotApplicable
			}
			return CheckGang(t, in, impl)
		}},
		// Volumes: the decision on problems with storage (GenVolumes). An
		// implementation that does not model the volume filters
		// (preempt.VolumeGaps refused) makes no promise here.
		{"Volumes", func(t *rapid.T, impl preempt.Implementation) Outcome {
			in := GenVolumes(MaxVolumeNodes).Draw(t, "input")
			if u := refusedVolumes(in, impl); u {
				return NotApplicable
			}
			return outcome(CheckAgainstReference(t, in, impl))
		}},
		// Claims: the decision on problems with devices and resource
		// claims (GenClaims). An implementation that does not model
		// DynamicResources (preempt.ClaimGaps refused) makes no promise
		// here.
		{"Claims", func(t *rapid.T, impl preempt.Implementation) Outcome {
			in := GenClaims(MaxVolumeNodes).Draw(t, "input")
			if refusedClaims(in, impl) {
				return NotApplicable
			}
			return outcome(CheckAgainstReference(t, in, impl))
		}},
	}
}

// refusedGangMember reports whether the reference refuses in's gang for a
// member (UnmodelledPodGroup, reference/gang.go gangMemberGaps: what it
// refuses of a single pod).
func refusedGangMember(in Input) bool {
	mine, _ := in.Gang.OfDefaultScheduler()
	kept, _ := mine.WithoutDeleting()
	return harness.PodGroupRefusal(reference.Impl{}, in.Cluster, kept) != nil
}

// refusedGangVolumes reports whether impl refuses in's gang for its
// members' volumes or claims.
func refusedGangVolumes(in Input, impl preempt.Implementation) bool {
	var u *preempt.Unmodelled
	mine, _ := in.Gang.OfDefaultScheduler()
	kept, _ := mine.WithoutDeleting()
	err := harness.PodGroupRefusal(impl, in.Cluster, kept)
	return errors.As(err, &u) && strings.HasSuffix(u.Feature, " in a gang") &&
		(strings.HasPrefix(u.Feature, "volumes") || strings.HasPrefix(u.Feature, "dynamic resource allocation"))
}

// refusedClaims reports whether impl refuses in for its claims.
func refusedClaims(in Input, impl preempt.Implementation) bool {
	var u *preempt.Unmodelled
	err := harness.Refusal(impl, in.Cluster, in.Request.Pod)
	return errors.As(err, &u) && strings.HasPrefix(u.Feature, "dynamic resource allocation")
}

// MaxVolumeNodes bounds the nodes of the Volumes property's problems.
const MaxVolumeNodes = 16

// refusedVolumes reports whether impl refuses in for its volumes.
func refusedVolumes(in Input, impl preempt.Implementation) bool {
	var u *preempt.Unmodelled
	err := harness.Refusal(impl, in.Cluster, in.Request.Pod)
	return errors.As(err, &u) && u.Feature == "volumes"
}

// CheckProperty runs p on impl under rapid (the number of checks is
// rapid's -rapid.checks, 100 by default) and counts what each check did.
// The counts are logged; a property that compared nothing fails when
// every problem was refused (an implementation that refuses everything
// passes nothing) and is skipped when it does not apply to impl.
func CheckProperty(t rapid.TB, p Property, impl preempt.Implementation) {
	t.Helper()
	var counts [3]int
	rapid.Check(t, func(rt *rapid.T) { counts[p.Check(rt, impl)]++ })
	compared, refusedN, na := counts[Compared], counts[Refused], counts[NotApplicable]
	t.Logf("%s on %s: %d problems compared, %d refused, %d not applicable", p.Name, impl.Name(), compared, refusedN, na)
	switch {
	case compared == 0 && na > 0:
		t.Skipf("%s: does not apply to %s (an optional promise it does not make)", p.Name, impl.Name())
	case compared == 0:
		t.Fatalf("%s: %s refused every one of the %d problems drawn: nothing was compared", p.Name, impl.Name(), refusedN)
	}
}

// RunProperties runs every property against impl (CheckProperty), then
// the whole decision again at GOMAXPROCS 1, 2 and 8.
func RunProperties(t *testing.T, impl preempt.Implementation) {
	t.Helper()
	for _, p := range Properties() {
		t.Run(p.Name, func(t *testing.T) { CheckProperty(t, p, impl) })
	}
	decision := Properties()[0]
	for _, procs := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("%s/GOMAXPROCS=%d", decision.Name, procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			CheckProperty(t, decision, impl)
		})
	}
}
