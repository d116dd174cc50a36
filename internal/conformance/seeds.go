package conformance

// Seeds are the fuzz targets' starting points, one per situation the table
// tests pin (cases_*.go): the basic shape, PDB violations, host
// ports, nominated pods, ties, extreme priorities, preemptionPolicy Never,
// a terminating victim on the nominated node, nothing resolvable.
func Seeds() []Spec {
	full := func(prio, cpu int) []PodSpec { // four pods filling a 4-cpu node
		var out []PodSpec
		for range 4 {
			out = append(out, PodSpec{Priority: prio, CPU: cpu, Start: 3})
		}
		return out
	}
	node := func(bound []PodSpec) NodeSpec { return NodeSpec{CPU: 2, Memory: 2, Pods: 2, Bound: bound} }
	basic := Spec{
		Nodes:      []NodeSpec{node(full(0, 4)), node(full(0, 4)), node(full(0, 4))},
		Preemptor:  PodSpec{Priority: 11, CPU: 6},
		Percentage: 3, Absolute: 5,
	}
	pdb := basic
	pdb.Nodes = []NodeSpec{node(nil), node(nil)}
	for i := range pdb.Nodes {
		for j := range 4 {
			pdb.Nodes[i].Bound = append(pdb.Nodes[i].Bound, PodSpec{Priority: 8, CPU: 4, App: 1 + (i+j)%2, Start: j})
		}
	}
	pdb.PDBs = []PDBSpec{{Selector: 0, App: 0, Allowed: 0}, {Selector: 5, Allowed: 1, Disrupted: 2}}
	ports := basic
	ports.Nodes = []NodeSpec{node([]PodSpec{{Priority: 8, CPU: 4, Port: 3}, {Priority: 8, CPU: 4}}), node([]PodSpec{{Priority: 8, CPU: 4, Port: 5}})}
	ports.Preemptor = PodSpec{Priority: 11, CPU: 3, Port: 3}
	nominated := basic
	nominated.Nominated = []PodSpec{{Node: 0, Priority: 12, CPU: 4}, {Node: 1, Priority: 8, CPU: 4}}
	ties := basic
	ties.SameStart = true
	extremes := basic
	extremes.Nodes = []NodeSpec{node(full(1, 4)), node([]PodSpec{{Priority: 1, CPU: 6}, {Priority: 3, CPU: 4}}), node(full(5, 4))}
	never := basic
	never.PreemptNever = true
	terminating := basic
	terminating.Nodes = []NodeSpec{node([]PodSpec{{Priority: 0, CPU: 4, Terminated: 9}, {Priority: 0, CPU: 4}}), node(full(0, 4))}
	terminating.PreemptorNominated = 1
	unresolvable := basic
	unresolvable.Nodes = []NodeSpec{{CPU: 0, Bound: full(0, 2)}, {CPU: 2, Unresolvable: true, Bound: full(0, 4)}}
	return []Spec{basic, pdb, ports, nominated, ties, extremes, never, terminating, unresolvable}
}
