package optimized

import (
	"github.com/preemptbench/preemptbench/preempt"
)

// scratch is one worker's reusable memory.
type scratch struct {
	use, nom     nodeUse
	potential    []int32
	violating    []int32
	nonViolating []int32
	victims      []int32 // appended to across a dry run; results slice into it
	pdbAllowed   []int32
	pdbEpoch     []uint32
	epoch        uint32
	grp          groupScratch // podgroup.go
}

// reset sizes the scratch for decision d and forgets the last dry run's
// victims.
func (sc *scratch) reset(d *decision) {
	sc.use.used = resize(sc.use.used, len(d.fit.wants))
	sc.nom.used = resize(sc.nom.used, len(d.fit.wants))
	if d.topo != nil {
		sc.use.topo = resize32(sc.use.topo, d.topo.counters())
		sc.nom.topo = resize32(sc.nom.topo, d.topo.counters())
	}
	if n := len(d.s.pdbAllowed); len(sc.pdbAllowed) < n {
		sc.pdbAllowed = make([]int32, n)
		sc.pdbEpoch = make([]uint32, n)
		sc.epoch = 0
	}
	sc.victims = sc.victims[:0]
}

func resize32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func resize(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n)
	}
	return s[:n]
}

// result is one node's outcome of SelectVictimsOnNode.
type result struct {
	code          preempt.Code
	reasons       []string // fixed reasons, or nil with mask set
	mask          uint64   // NodeResourcesFit's failures, see decision.reasons
	victims       []int32  // in importance order, into a scratch's victims
	numViolations int32
}

// nominatedUse sums the nominated pods of equal or higher priority on node n
// (other than the preemptor) into sc.nom.
func (d *decision) nominatedUse(n int32, sc *scratch) {
	nom := &sc.nom
	clear(nom.used)
	clear(nom.topo)
	nom.node = n
	nom.pods = 0
	nom.ports = nom.ports[:0]
	nom.vols = nom.vols[:0]
	nom.disk, nom.rwop = 0, 0
	s := d.s
	for _, p := range s.nomOf[n] {
		if s.priority[p] < d.priority || s.podUID[p] == string(d.pod.UID) {
			continue
		}
		d.addPod(nom, p, 1)
	}
}

// loadNode sets u to node n with its bound pods, and returns them.
func (d *decision) loadNode(n int32, u *nodeUse) []int32 {
	s := d.s
	base := int(n) * s.dims
	for i, dim := range d.fit.dims {
		u.used[i] = s.requested[base+int(dim)]
	}
	bound := s.boundOf[n]
	u.pods = int64(len(bound))
	u.node = n
	clear(u.topo)
	u.ports = u.ports[:0]
	if d.ports.on() {
		for _, p := range bound {
			u.addPorts(s.ports[s.portStart[p]:s.portStart[p+1]])
		}
	}
	u.vols = u.vols[:0]
	if d.vols != nil {
		for _, p := range bound {
			u.addVolumes(d.vols.x, p, 1)
		}
	}
	u.disk, u.rwop = 0, 0
	if d.vol != nil {
		for _, p := range bound {
			if r, ok := d.vol.restrictions.refs[p]; ok && r.disk {
				u.disk++
			}
		}
	}
	return bound
}

// selectVictims is SelectVictimsOnNode on node n.
func (d *decision) selectVictims(n int32, sc *scratch) result {
	s := d.s
	if d.groupedNode(n) {
		return d.selectGroupVictims(n, sc)
	}
	if d.topo == nil && !d.ports.on() && d.vols == nil && d.vol == nil && d.dra == nil && len(d.fit.dims) <= maxSimpleDims && s.presorted[n] && len(s.nomOf[n]) == 0 {
		return d.selectVictimsSimple(n, sc)
	}
	u := &sc.use
	// The node as it is, then without every lower-priority pod.
	bound := d.loadNode(n, u)
	// Potential victims, in importance order when the node's pods are
	// presorted (removal order does not matter: sums and a port set).
	sc.potential = sc.potential[:0]
	ordered := bound
	if s.presorted[n] {
		ordered = s.sortedOf[n]
	}
	for _, p := range ordered {
		if s.priority[p] < d.priority {
			sc.potential = append(sc.potential, p)
			d.addPod(u, p, -1)
		}
	}
	if len(sc.potential) == 0 {
		return result{code: preempt.UnschedulableAndUnresolvable, reasons: reasonsNoVictims}
	}
	if d.preFilterFailed() != nil {
		return result{code: preempt.Error, reasons: d.vol.removePodFailure()}
	}
	if r := d.nodeFilters(n); r != nil {
		return result{code: d.nodeFiltersCode(), reasons: r}
	}
	d.nominatedUse(n, sc)
	if code, r, mask := d.fits(n, u, &sc.nom); code != preempt.Success {
		return result{code: code, reasons: r, mask: mask}
	}

	if !s.presorted[n] {
		d.sortByImportance(sc.potential)
	}
	d.splitByPDBViolation(sc)

	first := len(sc.victims)
	numViolations := int32(0)
	reprieve := func(p int32) bool {
		d.addPod(u, p, 1)
		if code, _, _ := d.fits(n, u, &sc.nom); code == preempt.Success {
			return true
		}
		d.addPod(u, p, -1)
		sc.victims = append(sc.victims, p)
		return false
	}
	for _, p := range sc.violating {
		if !reprieve(p) {
			numViolations++
		}
	}
	for _, p := range sc.nonViolating {
		reprieve(p)
	}
	victims := sc.victims[first:len(sc.victims):len(sc.victims)]
	if len(sc.violating) > 0 && len(sc.nonViolating) > 0 {
		d.sortByImportance(victims)
	}
	return result{code: preempt.Success, victims: victims, numViolations: numViolations}
}

// splitByPDBViolation is FilterVictimsWithPDBViolation (v1.37) over
// sc.potential: each matching PDB's budget, in the contract's order, is
// counted down until one goes below zero: the pod violates, and the PDBs
// after it keep their budget (preempt.SwitchPDBStopAtFirstViolation;
// v1.36's filterPodsWithPDBViolation counts every matching budget down).
// Budgets live in sc.pdbAllowed, reset lazily by epoch.
func (d *decision) splitByPDBViolation(sc *scratch) {
	s := d.s
	sc.violating, sc.nonViolating = sc.violating[:0], sc.nonViolating[:0]
	if len(s.pdbAllowed) == 0 { // no PDB in the cluster: none violated
		sc.nonViolating = append(sc.nonViolating, sc.potential...)
		return
	}
	sc.epoch++
	if sc.epoch == 0 { // wrapped: forget every stamp
		clear(sc.pdbEpoch)
		sc.epoch = 1
	}
	for _, p := range sc.potential {
		violates := false
		for _, pdb := range s.pdbOf[s.pdbStart[p]:s.pdbStart[p+1]] {
			if sc.pdbEpoch[pdb] != sc.epoch {
				sc.pdbEpoch[pdb] = sc.epoch
				sc.pdbAllowed[pdb] = s.pdbAllowed[pdb]
			}
			sc.pdbAllowed[pdb]--
			if sc.pdbAllowed[pdb] < 0 {
				violates = true
				if d.b.PDBStopAtFirstViolation {
					break
				}
			}
		}
		if violates {
			sc.violating = append(sc.violating, p)
		} else {
			sc.nonViolating = append(sc.nonViolating, p)
		}
	}
}

// maxSimpleDims bounds the wants of selectVictimsSimple's fixed arrays.
const maxSimpleDims = 4

// selectVictimsSimple is selectVictims for the common node: no nominated
// pod on it, its pods presorted, and a preemptor without host ports or
// topology state. The node's free amounts of the wanted dimensions live
// in a fixed array; fits is the comparison of the wants with them.
func (d *decision) selectVictimsSimple(n int32, sc *scratch) result {
	s := d.s
	nd := len(d.fit.dims)
	dims, amounts := d.fit.dims[:nd], d.fit.amounts[:nd]
	base := int(n) * s.dims
	alloc, used := s.alloc[base:base+s.dims], s.requested[base:base+s.dims]
	var free, total [maxSimpleDims]int64
	for i, dim := range dims {
		total[i] = alloc[dim]
		free[i] = alloc[dim] - used[dim]
	}
	pods, allowed := int64(len(s.boundOf[n])), s.allowedPods[n]
	sc.potential = sc.potential[:0]
	for _, p := range s.sortedOf[n] {
		if s.priority[p] < d.priority {
			sc.potential = append(sc.potential, p)
			req := s.req[int(p)*s.dims : int(p+1)*s.dims]
			for i, dim := range dims {
				free[i] += req[dim]
			}
			pods--
		}
	}
	if len(sc.potential) == 0 {
		return result{code: preempt.UnschedulableAndUnresolvable, reasons: reasonsNoVictims}
	}
	if r := d.nodeFilters(n); r != nil {
		return result{code: d.nodeFiltersCode(), reasons: r}
	}
	// fits, as decision.fits computes it with no nominated pod.
	var mask uint64
	unresolvable := false
	if pods+1 > allowed {
		mask |= 1 << 63
	}
	for i, amount := range amounts {
		if amount > free[i] {
			mask |= 1 << i
			if amount > total[i] {
				unresolvable = true
			}
		}
	}
	if mask != 0 {
		code := preempt.Unschedulable
		if unresolvable {
			code = preempt.UnschedulableAndUnresolvable
		}
		return result{code: code, mask: mask}
	}
	if d.volumes != nil { // VolumeBinding
		if code, r := d.volumes.filter(n); code != preempt.Success {
			return result{code: code, reasons: r}
		}
	}
	d.splitByPDBViolation(sc)
	first := len(sc.victims)
	numViolations := int32(0)
	// reprieve puts p back when the preemptor still fits beside it.
	reprieve := func(p int32) bool {
		if pods+2 > allowed {
			return false
		}
		req := s.req[int(p)*s.dims : int(p+1)*s.dims]
		for i, dim := range dims {
			if amounts[i] > free[i]-req[dim] {
				return false
			}
		}
		for i, dim := range dims {
			free[i] -= req[dim]
		}
		pods++
		return true
	}
	for _, p := range sc.violating {
		if !reprieve(p) {
			sc.victims = append(sc.victims, p)
			numViolations++
		}
	}
	for _, p := range sc.nonViolating {
		if !reprieve(p) {
			sc.victims = append(sc.victims, p)
		}
	}
	victims := sc.victims[first:len(sc.victims):len(sc.victims)]
	if len(sc.violating) > 0 && len(sc.nonViolating) > 0 {
		d.sortByImportance(victims)
	}
	return result{code: preempt.Success, victims: victims, numViolations: numViolations}
}
