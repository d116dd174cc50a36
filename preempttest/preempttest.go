package preempttest

import (
	"testing"

	"github.com/preemptbench/preemptbench/internal/conformance"
	"github.com/preemptbench/preemptbench/preempt"
)

// Run runs the whole conformance suite against impl: every table (with
// its expected values) and every property (against the reference), each
// as a subtest.
func Run(t *testing.T, impl preempt.Implementation) {
	t.Helper()
	conformance.Run(t, impl)
}

// RunTables runs every table against impl, each as a subtest.
func RunTables(t *testing.T, impl preempt.Implementation) {
	t.Helper()
	conformance.RunTables(t, impl)
}

// RunProperties runs every property against impl, each as a subtest, then
// the whole decision again at GOMAXPROCS 1, 2 and 8. -rapid.checks sets
// the number of problems a property draws (100 by default).
func RunProperties(t *testing.T, impl preempt.Implementation) {
	t.Helper()
	conformance.RunProperties(t, impl)
}

// Fuzz checks, on any bytes, the whole decision and every stage of each of
// impls against the reference.
func Fuzz(f *testing.F, impls ...preempt.Implementation) { conformance.Fuzz(f, impls...) }

// FuzzGang checks gang preemption (preempt.PodGroupPreempter) of each of
// impls against the reference: pod groups as victims and a gang preemptor,
// GenericWorkload on.
func FuzzGang(f *testing.F, impls ...preempt.Implementation) { conformance.FuzzGang(f, impls...) }

// FuzzVictims checks SelectVictimsOnNode on every node, the cheapest stage
// to fuzz.
func FuzzVictims(f *testing.F, impls ...preempt.Implementation) {
	conformance.FuzzVictims(f, impls...)
}

// FuzzPick checks SelectCandidate (pickOneNodeForPreemption) on the
// reference dry run's candidates.
func FuzzPick(f *testing.F, impls ...preempt.Implementation) { conformance.FuzzPick(f, impls...) }
