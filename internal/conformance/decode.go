package conformance

import (
	"github.com/preemptbench/preemptbench/internal/extendertest"
	"github.com/preemptbench/preemptbench/preempt"
)

// Decode reads a Spec from any bytes: each field takes the next byte,
// reduced into its range; bytes past the end read as zero. Small inputs are
// small problems (the first byte chooses 1 to 16 nodes), and every byte
// string decodes. Encode writes a Spec back so that Decode(Encode(s)) is s
// for every Spec that Decode can produce.
func Decode(data []byte) Spec {
	return (&byteReader{data: data}).spec()
}

// DecodeGang reads a problem with a gang preemptor from any bytes, as
// GenGang draws them: a Spec (Decode), then the gang (its priority,
// minCount, policies, 1 to 4 members, each nominated or not, and up to one
// member already scheduled).
func DecodeGang(data []byte) Input {
	r := &byteReader{data: data}
	s := r.spec()
	g := &GangSpec{Priority: r.intn(len(priorities)), MinCount: r.intn(5), Never: r.intn(10) == 0, GroupPolicy: r.intn(3)}
	for range 1 + r.intn(4) {
		ps := r.pod(0)
		ps.Node = r.intn(len(s.Nodes) + 1)
		g.Members = append(g.Members, ps)
	}
	for range r.intn(2) {
		g.Scheduled = append(g.Scheduled, r.intn(len(s.Nodes)))
	}
	// Read after the rest (inputs older than them end before): 0 to 3
	// child groups (0: a PodGroup gang, then TopologyAwareWorkloadScheduling
	// or not), the composite's minGroupCount, each child's minCount, each
	// member's child, each child's creation (minutes before Base), the
	// member that fits nowhere (0 none).
	if g.Children = r.intn(4); g.Children > 0 {
		g.MinGroupCount = r.intn(4)
		for range g.Children {
			g.ChildMinCounts = append(g.ChildMinCounts, r.intn(4))
		}
		for i := range g.Members {
			g.Members[i].Group = r.intn(g.Children)
		}
		for range g.Children {
			g.ChildCreated = append(g.ChildCreated, r.intn(4))
		}
		g.Unplaceable = r.intn(len(g.Members) + 1)
	} else {
		g.TAS = r.intn(4) == 3
	}
	// Read last (older inputs end before): what validatePodGroup refuses
	// (GangSpec.Refuse, 0 mostly), the members being deleted (a bit each).
	if v := r.intn(32); v <= 4 {
		g.Refuse = v
	}
	g.Deleting = r.intn(16)
	s.Gang = g
	return gangInput(s)
}

func (r *byteReader) spec() Spec {
	var s Spec
	n := 1 + r.intn(16)
	for range n {
		ns := NodeSpec{
			CPU: r.intn(len(nodeCPUs)), Memory: r.intn(len(nodeMemGi)), Pods: r.intn(len(nodePods)),
			Ephemeral: r.intn(len(nodeEphGi)), Foo: r.intn(len(nodeFoo)), Zone: r.intn(len(zones)), Unresolvable: r.intn(5) == 4,
		}
		for range r.intn(8) {
			ns.Bound = append(ns.Bound, r.pod(0))
		}
		s.Nodes = append(s.Nodes, ns)
	}
	for range r.intn(MaxNominated + 1) {
		s.Nominated = append(s.Nominated, r.pod(n))
	}
	for range r.intn(MaxPDBs + 1) {
		s.PDBs = append(s.PDBs, PDBSpec{
			Namespace: r.intn(len(pdbNS)), Selector: r.intn(len(selectors)), App: r.intn(len(pdbApps)),
			Allowed: r.intn(3), Disrupted: r.intn(9),
		})
	}
	s.Preemptor = r.pod(0)
	s.PreemptNever = r.intn(8) == 7
	s.PreemptorNominated = r.intn(n + 1)
	s.SameStart = r.intn(2) == 1
	s.Offset = r.intn(2*n + 1)
	s.Percentage = r.intn(len(percentages))
	s.Absolute = r.intn(len(absolutes))
	s.Topology = r.intn(3) == 2
	s.Synchronous = r.intn(2) == 1
	for range r.intn(MaxExtenders + 1) {
		s.Extenders = append(s.Extenders, ExtenderSpec{
			Behaviour: r.intn(len(extendertest.Behaviours())), Ignorable: r.intn(2) == 1,
			NodeCache: r.intn(2) == 1, Managed: r.intn(4) == 3,
		})
	}
	s.Fault = r.intn(256)
	s.Preempting = r.intn(256)
	s.Codes = r.intn(2) == 1
	s.ReuseOutput = r.intn(2) == 1
	s.Namespaces = r.intn(len(namespaceSets))
	s.PDBsReversed = r.intn(2) == 1
	s.Resized = r.intn(4)
	s.ResizeShape = r.intn(len(resizes))
	// The first seven switches, as the corpora were written: a byte below
	// 128 is their mask (0, as a missing byte, leaves them on), any other
	// leaves them on. The later ones (firstSwitches on) take a byte after
	// the groups, so that the corpora keep their meaning.
	if v := r.intn(3 << firstSwitches); v < 1<<firstSwitches {
		s.Switches = v
	}
	r.groups(&s)
	if later := len(preempt.Switches) - firstSwitches; later > 0 {
		// Two bytes in three leave them on.
		if v := r.intn(3 << later); v < 1<<later {
			s.Switches |= v << firstSwitches
		}
	}
	return s
}

// firstSwitches are the switches (preempt.Switches' first) whose mask is
// the byte after ResizeShape; the later ones' is the spec's last byte.
const firstSwitches = 7

// groups reads pod groups, after every other field (inputs older than
// them end before and decode without groups): a byte for the gates (0 no
// groups, 1 GenericWorkload, 2 with CompositePodGroup, 3 groups with the
// gate off), the composites and the PodGroups, then each bound pod's and
// each nominated pod's group (0 for none), as genGroups draws them.
func (r *byteReader) groups(s *Spec) {
	mode := r.intn(4)
	if mode == 0 {
		return
	}
	s.GenericWorkload, s.Composite = mode != 3, mode == 2
	group := func(parents int) GroupSpec {
		return GroupSpec{All: r.intn(2) == 1, Priority: r.intn(len(priorities)), Parent: r.intn(parents + 1)}
	}
	if s.Composite {
		for range 1 + r.intn(2) {
			s.Composites = append(s.Composites, group(2))
		}
	}
	for range 1 + r.intn(3) {
		s.Groups = append(s.Groups, group(len(s.Composites)))
	}
	for i := range s.Nodes {
		for j := range s.Nodes[i].Bound {
			s.Nodes[i].Bound[j].Group = r.intn(len(s.Groups) + 1)
		}
	}
	for j := range s.Nominated {
		s.Nominated[j].Group = r.intn(len(s.Groups) + 1)
	}
}

type byteReader struct {
	data []byte
	pos  int
}

func (r *byteReader) intn(n int) int {
	var b byte
	if r.pos < len(r.data) {
		b = r.data[r.pos]
	}
	r.pos++
	return int(b) % n
}

func (r *byteReader) pod(nodes int) PodSpec {
	ps := PodSpec{
		Priority: r.intn(len(priorities)), CPU: r.intn(len(podCPUs)), Memory: r.intn(len(podMemMi)),
		Ephemeral: r.intn(len(podEphGi)), Foo: r.intn(len(podFoo)), Port: r.intn(len(portTable)),
		App: r.intn(len(apps)), Start: r.intn(len(startMinute)), Namespace: r.intn(len(namespaces)),
		Terminated: r.intn(len(terminated)), Affinity: r.intn(len(affinities)), Spread: r.intn(len(spreads)),
	}
	if nodes > 0 {
		ps.Node = r.intn(nodes)
	}
	return ps
}

// Encode is Decode's inverse on the Specs Decode produces (1 to 16 nodes,
// at most 7 pods on a node, 1 to 3 PodGroups and 1 or 2 composites when
// there are any).
func Encode(s Spec) []byte {
	var out []byte
	put := func(v int) { out = append(out, byte(v)) }
	flag := func(b bool, v int) {
		if b {
			put(v)
		} else {
			put(0)
		}
	}
	pod := func(ps PodSpec, nominated bool) {
		for _, v := range []int{ps.Priority, ps.CPU, ps.Memory, ps.Ephemeral, ps.Foo, ps.Port, ps.App, ps.Start, ps.Namespace, ps.Terminated, ps.Affinity, ps.Spread} {
			put(v)
		}
		if nominated {
			put(ps.Node)
		}
	}
	put(len(s.Nodes) - 1)
	for _, ns := range s.Nodes {
		for _, v := range []int{ns.CPU, ns.Memory, ns.Pods, ns.Ephemeral, ns.Foo, ns.Zone} {
			put(v)
		}
		flag(ns.Unresolvable, 4)
		put(len(ns.Bound))
		for _, ps := range ns.Bound {
			pod(ps, false)
		}
	}
	put(len(s.Nominated))
	for _, ps := range s.Nominated {
		pod(ps, true)
	}
	put(len(s.PDBs))
	for _, p := range s.PDBs {
		for _, v := range []int{p.Namespace, p.Selector, p.App, p.Allowed, p.Disrupted} {
			put(v)
		}
	}
	pod(s.Preemptor, false)
	flag(s.PreemptNever, 7)
	put(s.PreemptorNominated)
	flag(s.SameStart, 1)
	put(s.Offset)
	put(s.Percentage)
	put(s.Absolute)
	flag(s.Topology, 2)
	flag(s.Synchronous, 1)
	put(len(s.Extenders))
	for _, e := range s.Extenders {
		put(e.Behaviour)
		flag(e.Ignorable, 1)
		flag(e.NodeCache, 1)
		flag(e.Managed, 3)
	}
	put(s.Fault)
	put(s.Preempting)
	flag(s.Codes, 1)
	flag(s.ReuseOutput, 1)
	put(s.Namespaces)
	flag(s.PDBsReversed, 1)
	put(s.Resized)
	put(s.ResizeShape)
	put(s.Switches & (1<<firstSwitches - 1))
	later := s.Switches >> firstSwitches
	switch {
	case len(s.Groups) == 0:
		put(0)
		put(later)
		return out
	case s.Composite:
		put(2)
	case s.GenericWorkload:
		put(1)
	default:
		put(3)
	}
	group := func(g GroupSpec) {
		flag(g.All, 1)
		put(g.Priority)
		put(g.Parent)
	}
	if s.Composite {
		put(len(s.Composites) - 1)
		for _, g := range s.Composites {
			group(g)
		}
	}
	put(len(s.Groups) - 1)
	for _, g := range s.Groups {
		group(g)
	}
	for _, ns := range s.Nodes {
		for _, ps := range ns.Bound {
			put(ps.Group)
		}
	}
	for _, ps := range s.Nominated {
		put(ps.Group)
	}
	put(later)
	return out
}
