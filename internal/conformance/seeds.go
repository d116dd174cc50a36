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

// PickSeeds are one problem per pair of adjacent criteria of
// pickOneNodeForPreemption, where the two candidates tie on every
// criterion before the pair and the pair's two criteria disagree: node-00
// wins on one, node-01 on the other. A pick with the two criteria swapped
// (or one dropped) chooses the other node. They name, in order, the
// criterion that decides: fewest PDB violations (over the lowest highest
// priority), lowest highest priority (over the smallest sum), smallest
// sum of priorities (over the fewest victims: with the sum's offset of
// 2^31 per victim, only extreme priorities make them disagree), fewest
// victims (over the latest start).
func PickSeeds() map[string]Spec {
	// Nodes of 1 cpu; the preemptor (priority 100, 1 cpu) needs every
	// pod of a node gone.
	two := func(a, b []PodSpec) Spec {
		return Spec{
			Nodes:      []NodeSpec{{CPU: 0, Bound: a}, {CPU: 0, Bound: b}},
			Preemptor:  PodSpec{Priority: 12, CPU: 4},
			Percentage: 3, Absolute: 5,
		}
	}
	pdb := two([]PodSpec{{Priority: 8, CPU: 4, App: 1}}, []PodSpec{{Priority: 9, CPU: 4}}) // priority 1 under a PDB; 5
	pdb.PDBs = []PDBSpec{{Selector: 0, App: 0, Allowed: 0}}
	return map[string]Spec{
		"PDBViolations": pdb,
		// {5, 5} against {10, -100}.
		"HighestPriority": two([]PodSpec{{Priority: 9, CPU: 3}, {Priority: 9, CPU: 3}}, []PodSpec{{Priority: 11, CPU: 3}, {Priority: 5, CPU: 3}}),
		// {0, MinInt32, MinInt32} (sum 2^31, 3 victims) against {0,
		// MinInt32+1} (sum 2^31+1, 2 victims).
		"SumOfPriorities": two([]PodSpec{{Priority: 0, CPU: 3}, {Priority: 1, CPU: 2}, {Priority: 1, CPU: 2}}, []PodSpec{{Priority: 0, CPU: 3}, {Priority: 3, CPU: 3}}),
		// {0 started at 10m, MinInt32} against {0 started at 0m}: the same
		// sum, 2 victims against 1.
		"NumVictims": two([]PodSpec{{Priority: 0, CPU: 3, Start: 6}, {Priority: 1, CPU: 3, Start: 6}}, []PodSpec{{Priority: 0, CPU: 4, Start: 1}}),
	}
}
