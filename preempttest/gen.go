package preempttest

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/preemptbench/preemptbench/extendertest"
	"github.com/preemptbench/preemptbench/harness"
	"github.com/preemptbench/preemptbench/preempt"
)

// Input is one preemption problem.
type Input struct {
	Cluster *preempt.Cluster
	Request *preempt.Request
	// Faults are the API calls the fake clientset fails.
	Faults []harness.Fault
}

func (in Input) String() string {
	return fmt.Sprintf("%d nodes, %d pods, %d pdbs, offset %d, config %+v, faults %v", len(in.Cluster.Nodes), len(in.Cluster.Pods), len(in.Cluster.PDBs), in.Request.Offset, in.Request.Config, in.Faults)
}

// Gen generates valid problems of 1 to maxNodes nodes.
func Gen(maxNodes int) *rapid.Generator[Input] {
	return rapid.Custom(func(t *rapid.T) Input { return GenSpec(maxNodes).Draw(t, "spec").Build() })
}

// GenMany generates one cluster and several requests on it, for checking
// that an evaluator serves many decisions as well as one.
func GenMany(maxNodes, maxRequests int) *rapid.Generator[[]Input] {
	return rapid.Custom(func(t *rapid.T) []Input {
		s := GenSpec(maxNodes).Draw(t, "spec")
		var out []Input
		for range rapid.IntRange(1, maxRequests).Draw(t, "requests") {
			s.Preemptor = genPodSpec(t, 0)
			s.PreemptNever = rapid.IntRange(0, 9).Draw(t, "preemptNever") == 0
			s.PreemptorNominated = rapid.IntRange(0, len(s.Nodes)).Draw(t, "preemptorNominated")
			s.Offset = rapid.IntRange(0, 2*len(s.Nodes)).Draw(t, "offset")
			out = append(out, s.Build())
		}
		return out
	})
}

// GenSpec draws Specs of 1 to maxNodes nodes.
func GenSpec(maxNodes int) *rapid.Generator[Spec] {
	return rapid.Custom(func(t *rapid.T) Spec {
		idx := func(table int, label string) int { return rapid.IntRange(0, table-1).Draw(t, label) }
		s := Spec{SameStart: rapid.Bool().Draw(t, "sameStart"), Topology: rapid.IntRange(0, 2).Draw(t, "topology") == 0}
		n := rapid.IntRange(1, min(maxNodes, MaxNodes)).Draw(t, "nodes")
		for range n {
			ns := NodeSpec{
				CPU: idx(len(nodeCPUs), "nodeCPU"), Memory: idx(len(nodeMemGi), "nodeMem"), Pods: idx(len(nodePods), "nodePods"),
				Ephemeral: idx(len(nodeEphGi), "nodeEph"), Foo: idx(len(nodeFoo), "nodeFoo"), Zone: idx(len(zones), "zone"),
				Unresolvable: rapid.IntRange(0, 4).Draw(t, "unresolvable") == 0,
			}
			for range rapid.IntRange(0, MaxPodsOnNode).Draw(t, "podsOnNode") {
				ns.Bound = append(ns.Bound, genPodSpec(t, 0))
			}
			s.Nodes = append(s.Nodes, ns)
		}
		for range rapid.IntRange(0, MaxNominated).Draw(t, "nominated") {
			s.Nominated = append(s.Nominated, genPodSpec(t, n))
		}
		for range rapid.IntRange(0, MaxPDBs).Draw(t, "pdbs") {
			s.PDBs = append(s.PDBs, PDBSpec{
				Namespace: idx(len(pdbNS), "pdbNamespace"), Selector: idx(len(selectors), "selector"), App: idx(len(pdbApps), "pdbApp"),
				Allowed: idx(3, "allowed"), Disrupted: rapid.IntRange(0, 8).Draw(t, "disrupted"),
			})
		}
		s.Preemptor = genPodSpec(t, 0)
		s.PreemptNever = rapid.IntRange(0, 9).Draw(t, "preemptNever") == 0
		if rapid.Bool().Draw(t, "preemptorIsNominated") {
			s.PreemptorNominated = rapid.IntRange(1, n).Draw(t, "preemptorNominated")
		}
		s.Offset = rapid.IntRange(0, 2*n).Draw(t, "offset")
		s.Percentage = idx(len(percentages), "percentage")
		s.Absolute = idx(len(absolutes), "absolute")
		s.Synchronous = rapid.Bool().Draw(t, "synchronous")
		if rapid.IntRange(0, 2).Draw(t, "withExtenders") == 0 {
			for range rapid.IntRange(1, MaxExtenders).Draw(t, "extenders") {
				s.Extenders = append(s.Extenders, ExtenderSpec{
					Behaviour: idx(len(extendertest.Behaviours()), "extenderBehaviour"),
					Ignorable: rapid.Bool().Draw(t, "extenderIgnorable"),
					NodeCache: rapid.Bool().Draw(t, "extenderNodeCache"),
					Managed:   rapid.IntRange(0, 3).Draw(t, "extenderManaged") == 0,
				})
			}
		}
		if rapid.IntRange(0, 7).Draw(t, "withPreempting") == 0 {
			s.Preempting = rapid.IntRange(1, 1000).Draw(t, "preempting")
		}
		if rapid.IntRange(0, 3).Draw(t, "withFault") == 0 {
			s.Fault = rapid.IntRange(1, 1000).Draw(t, "fault")
		}
		s.Codes = rapid.Bool().Draw(t, "codes")
		s.ReuseOutput = rapid.Bool().Draw(t, "reuseOutput")
		s.Namespaces = idx(len(namespaceSets), "namespaces")
		s.PDBsReversed = rapid.Bool().Draw(t, "pdbsReversed")
		if rapid.IntRange(0, 3).Draw(t, "withResized") == 0 {
			s.Resized = rapid.IntRange(1, 3).Draw(t, "resized")
			s.ResizeShape = idx(len(resizes), "resizeShape")
		}
		return s
	})
}

func genPodSpec(t *rapid.T, nodes int) PodSpec {
	idx := func(table int, label string) int { return rapid.IntRange(0, table-1).Draw(t, label) }
	ps := PodSpec{
		Priority: idx(len(priorities), "priority"), CPU: idx(len(podCPUs), "cpu"), Memory: idx(len(podMemMi), "mem"),
		Ephemeral: idx(len(podEphGi), "eph"), Foo: idx(len(podFoo), "foo"), Port: idx(len(portTable), "port"),
		App: idx(len(apps), "app"), Start: idx(len(startMinute), "start"), Namespace: idx(len(namespaces), "namespace"),
		Terminated: idx(len(terminated), "terminated"), Affinity: idx(len(affinities), "affinity"),
		Spread: idx(len(spreads), "spread"),
	}
	if nodes > 0 {
		ps.Node = rapid.IntRange(0, nodes-1).Draw(t, "nominatedTo")
	}
	return ps
}
