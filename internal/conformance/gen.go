package conformance

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pgregory.net/rapid"

	"github.com/preemptbench/preemptbench/internal/extendertest"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/preempt"
)

// Input is one preemption problem.
type Input struct {
	Cluster *preempt.Cluster
	Request *preempt.Request
	// Faults are the API calls the fake clientset fails.
	Faults []harness.Fault
	// Gang is a gang preemptor on Cluster (GenericWorkload on), nil for
	// none: the GangDecision property's.
	Gang *preempt.PodGroupRequest
	// Switched: the request's behaviour switches were drawn
	// (Spec.Switches), not asked for by a test: AtRelease drops them for
	// an implementation that runs one release's own code.
	Switched bool
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

// GenVolumes draws problems of 1 to maxNodes nodes whose cluster has
// storage and whose preemptor has volumes (VolumeSpec), without
// extenders (whose failures upstream reports in the order its goroutines
// meet them).
func GenVolumes(maxNodes int) *rapid.Generator[Input] {
	return rapid.Custom(func(t *rapid.T) Input {
		s := GenSpec(maxNodes).Draw(t, "spec")
		s.Extenders = nil
		s.Volumes = genVolumes(t, &s)
		// Drawn last, so that the draws before are those of the
		// reproducers committed before it was added.
		s.Volumes.Capacities = genCapacities(t)
		return s.Build()
	})
}

// GenClaims draws problems of 1 to maxNodes nodes whose cluster has
// devices and whose preemptor has resource claims (ClaimSpec), without
// extenders.
func GenClaims(maxNodes int) *rapid.Generator[Input] {
	return rapid.Custom(func(t *rapid.T) Input {
		s := GenSpec(maxNodes).Draw(t, "spec")
		s.Extenders = nil
		s.Claims = genClaims(t, &s)
		return s.Build()
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
		if rapid.IntRange(0, 2).Draw(t, "withSwitches") == 0 {
			s.Switches = rapid.IntRange(1, 1<<len(preempt.Switches)-1).Draw(t, "switches")
		}
		genGroups(t, &s)
		return s
	})
}

// genGroups draws pod groups (half the time GenericWorkload on, a third
// of those with composites) and the pods' membership.
func genGroups(t *rapid.T, s *Spec) {
	s.GenericWorkload = rapid.Bool().Draw(t, "genericWorkload")
	if !s.GenericWorkload && rapid.IntRange(0, 3).Draw(t, "groupsGateOff") != 0 {
		return
	}
	s.Composite = s.GenericWorkload && rapid.IntRange(0, 2).Draw(t, "composite") == 0
	group := func(label string, parents int) GroupSpec {
		return GroupSpec{All: rapid.Bool().Draw(t, label+"All"), Priority: rapid.IntRange(0, len(priorities)-1).Draw(t, label+"Priority"),
			Parent: rapid.IntRange(0, parents).Draw(t, label+"Parent")}
	}
	if s.Composite {
		for range rapid.IntRange(1, 2).Draw(t, "composites") {
			s.Composites = append(s.Composites, group("composite", 2))
		}
	}
	for range rapid.IntRange(1, 3).Draw(t, "groups") {
		s.Groups = append(s.Groups, group("group", len(s.Composites)))
	}
	for i := range s.Nodes {
		for j := range s.Nodes[i].Bound {
			if rapid.IntRange(0, 1).Draw(t, "inGroup") == 0 {
				s.Nodes[i].Bound[j].Group = rapid.IntRange(1, len(s.Groups)).Draw(t, "group")
			}
		}
	}
	for j := range s.Nominated {
		if rapid.IntRange(0, 2).Draw(t, "nominatedInGroup") == 0 {
			s.Nominated[j].Group = rapid.IntRange(1, len(s.Groups)).Draw(t, "group")
		}
	}
}

// GenGang draws problems with a gang preemptor (GenericWorkload on).
func GenGang(maxNodes int) *rapid.Generator[Input] {
	return rapid.Custom(func(t *rapid.T) Input { return gangInput(genGangSpec(t, maxNodes)) })
}

// genGangSpec draws a Spec with a gang preemptor, as GenGang has it (the
// draws of the GangDecision property's failure files: change them and
// those files replay other problems).
func genGangSpec(t *rapid.T, maxNodes int) Spec {
	s := GenSpec(maxNodes).Draw(t, "spec")
	s.GenericWorkload = true
	s.Extenders = nil // extenders take no part in gang preemption
	g := &GangSpec{Priority: rapid.IntRange(0, len(priorities)-1).Draw(t, "gangPriority"), MinCount: rapid.IntRange(0, 4).Draw(t, "minCount"),
		Never: rapid.IntRange(0, 9).Draw(t, "gangNever") == 0, GroupPolicy: rapid.IntRange(0, 5).Draw(t, "groupPolicy")}
	if g.GroupPolicy > 2 {
		g.GroupPolicy = 0
	}
	for i := range rapid.IntRange(1, 4).Draw(t, "members") {
		ps := genPodSpec(t, 0)
		if rapid.IntRange(0, 2).Draw(t, "memberNominated") == 0 {
			ps.Node = rapid.IntRange(1, len(s.Nodes)).Draw(t, "memberNominatedTo")
		}
		if rapid.IntRange(0, 7).Draw(t, "memberDeleting") == 0 {
			// A member being deleted and nominated in a gang of
			// priority 0 or less is refused (PodGroupRequest.
			// CycleRefusal): drawn rarely.
			if ps.Node == 0 || groupPriority(g.Priority) > 0 || rapid.IntRange(0, 7).Draw(t, "deletingNominated") == 0 {
				g.Deleting |= 1 << i
			}
		}
		g.Members = append(g.Members, ps)
	}
	if r := rapid.IntRange(0, 31).Draw(t, "refuse"); r <= 4 {
		g.Refuse = r
	}
	for range rapid.IntRange(0, 1).Draw(t, "gangScheduled") {
		g.Scheduled = append(g.Scheduled, rapid.IntRange(0, len(s.Nodes)-1).Draw(t, "gangScheduledOn"))
	}
	// GangScheduling's PreEnqueue holds a gang back until minCount of
	// its pods are known: mostly draw gangs the queue lets through.
	if known := len(g.Members) + len(g.Scheduled); g.MinCount > known && rapid.IntRange(0, 7).Draw(t, "gangHeldBack") != 0 {
		g.MinCount = known
	}
	if rapid.IntRange(0, 3).Draw(t, "compositeGang") == 0 {
		g.Children = rapid.IntRange(1, 3).Draw(t, "children")
		g.MinGroupCount = rapid.IntRange(0, 3).Draw(t, "minGroupCount")
		for range g.Children {
			g.ChildMinCounts = append(g.ChildMinCounts, rapid.IntRange(0, 3).Draw(t, "childMinCount"))
			g.ChildCreated = append(g.ChildCreated, rapid.IntRange(0, 3).Draw(t, "childCreated"))
		}
		for i := range g.Members {
			g.Members[i].Group = rapid.IntRange(0, g.Children-1).Draw(t, "memberChild")
		}
		// PreEnqueue holds the tree back until minGroupCount children
		// have their minCount of pods: mostly draw trees it admits.
		if rapid.IntRange(0, 7).Draw(t, "treeHeldBack") != 0 {
			known := make([]int, g.Children)
			for _, m := range g.Members {
				known[m.Group]++
			}
			known[0] += len(g.Scheduled)
			for k := range g.ChildMinCounts {
				g.ChildMinCounts[k] = min(g.ChildMinCounts[k], known[k])
			}
		}
		switch rapid.IntRange(0, 2).Draw(t, "unplaceableKind") {
		case 0:
			g.Unplaceable = rapid.IntRange(1, len(g.Members)).Draw(t, "unplaceable")
		case 1:
			// A child that fails after placing members: the last
			// member fits nowhere and its child's minCount needs
			// every member; the composite's basic policy is met by
			// any other child.
			for len(g.Members) < 3 {
				g.Members = append(g.Members, genPodSpec(t, 0))
			}
			if g.Children < 2 {
				g.Children = 2
				g.ChildMinCounts, g.ChildCreated = append(g.ChildMinCounts, 0), append(g.ChildCreated, 0)
			}
			last := len(g.Members) - 1
			g.Unplaceable = last + 1
			c := g.Members[last].Group
			g.Members[last-1].Group = c // placed before the child fails
			// The first member in another child, which it alone
			// satisfies.
			g.Members[0].Group = (c + 1) % g.Children
			g.ChildMinCounts[g.Members[0].Group] = 0
			for i := range g.Members {
				g.Members[i].Node = 0 // no ongoing preemption
			}
			g.Never, g.GroupPolicy = false, 0
			g.Priority = len(priorities) - 1 // 100: above most pods
			g.ChildMinCounts[c] = 0
			for _, m := range g.Members {
				if m.Group == c {
					g.ChildMinCounts[c]++
				}
			}
			g.MinGroupCount = 0
		}
	} else {
		g.TAS = rapid.IntRange(0, 4).Draw(t, "gangTAS") == 0
	}
	s.Gang = g
	return s
}

// gangInput builds s with its gang as GenGang and DecodeGang have it:
// GenericWorkload on, no extenders (they take no part in gang
// preemption), no composites among the victims unless the gang is one
// (only then is CompositePodGroup on), and every bound pod started at
// its own second: upstream's gang path
// sorts victims with sort.Slice on MoreImportantVictim alone, so units
// equal on it come in the snapshot's order, not the contract's
// (docs/upstream-findings.md); distinct start times leave no such tie.
func gangInput(s Spec) Input {
	s.GenericWorkload = true
	s.Extenders = nil
	if s.Gang == nil || s.Gang.Children == 0 {
		s.Composite = false
		s.Composites = nil
		for i := range s.Groups {
			s.Groups[i].Parent = 0
		}
	}
	in := s.Build()
	for i, p := range in.Cluster.Pods {
		if preempt.IsBound(p) {
			st := metav1.NewTime(Base().Add(time.Duration(i) * time.Second))
			p.Status.StartTime = &st
		}
	}
	return in
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
