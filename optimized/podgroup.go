package optimized

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/preempt"
)

// Pod groups as victims (GenericWorkload), as the reference models
// v1.37.2 (reference/podgroup.go): a pod whose pod-group hierarchy has an
// ancestor with disruption mode All is preempted with every scheduled
// member of every leaf group under the highest such ancestor, wherever
// they run (a unit); any other pod is a victim of its own. Every pod is a
// victim at its group's priority (GetPodPriority), units are ordered by
// MoreImportantVictim, a unit violates its PDBs when any member does and
// counts every member that does, and the victims come out flattened,
// each with its own priority and its PodGroup.
//
// A snapshot keeps one groupView per value of the CompositePodGroup gate,
// built on the first request under GenericWorkload and kept up to date by
// Update. A node none of whose pods names a pod group takes the
// single-pod path (selectVictims) unchanged: there, every unit is one pod
// at its own priority, and the two orders agree.

// groupView is the pod-group view of a snapshot.
type groupView struct {
	composite bool
	c         *preempt.Cluster // the group objects it reads: the snapshot's, or a gang request's (gangGroups)
	index     *preempt.PodGroupIndex
	// Per pod index (removed pods keep their slots):
	prio   []int32          // priority as a victim (GetPodPriority)
	victim []preempt.Victim // the pod as a victim, naming its PodGroup
	typed  []bool           // names a pod group: a victim of its own is typed as a group
	self   []int32          // p at p: a pod of its own as a member list, self[p:p+1]
	leafOf []int32          // the PodGroup whose members it is among, -1 for none
	unitOf []int32          // the unit it is preempted in, -1 for none
	// rank is each pod's place in (namespace, name, UID) order among the
	// pods the view was built with, the contract's final tie read as one
	// number; a pod added later (Update) has none (compareUnits then
	// compares the strings, in the same order).
	rank []int32
	// leaves are the cluster's PodGroups (in its order), each with its
	// bound members in (namespace, name) order (PodGroupState.
	// ScheduledPods, pinned).
	leaves    []leafGroup
	leafIndex map[string]int32
	units     []groupUnit
	unitIndex map[string]int32
	typedOn   []int32 // node -> its bound pods that name a pod group
	live      int     // pods of the snapshot that name a pod group
	touched   []int32 // units whose members changed, for refresh
}

type leafGroup struct {
	members []int32
	units   []int32 // the units this group is a leaf of
}

// groupUnit is one highest ancestor with disruption mode All.
type groupUnit struct {
	rank   int8    // victimRank: 3 CompositePodGroup, 2 PodGroup
	leaves []int32 // the leaf groups in the walk's order (scheduledUnder)
	// members are the leaves' bound members, in the leaves' order.
	members []int32
	// minStart is the earliest start time of the members that have one;
	// unstarted says some member has none (it starts "now").
	minStart           int64
	started, unstarted bool
}

// earliest is the unit's earliest start at now.
func (u *groupUnit) earliest(now int64) int64 {
	switch {
	case !u.started:
		return now
	case u.unstarted:
		return min(u.minStart, now)
	}
	return u.minStart
}

// groupsFor is s's view under gates: nil without GenericWorkload, or when
// no pod of s names a pod group (every pod is then a plain victim).
func (s *Snapshot) groupsFor(gates map[string]bool) *groupView {
	if !gates[preempt.GenericWorkloadGate] {
		return nil
	}
	i := 0
	if gates[preempt.CompositePodGroupGate] {
		i = 1
	}
	s.groupMu.Lock()
	defer s.groupMu.Unlock()
	g := s.groupViews[i]
	if g == nil {
		g = newGroupView(s, s.cluster, i == 1)
		if g.live > 0 { // the snapshot's view only: a gang's own view (gang.go) is for one request
			g.rank = nameRanks(s)
		}
		s.groupViews[i] = g
	}
	if g.live == 0 {
		return nil
	}
	return g
}

// newGroupView builds the view of s's pods under the group objects of c
// (s's cluster, or one with a gang request's PodGroup in place).
func newGroupView(s *Snapshot, c *preempt.Cluster, composite bool) *groupView {
	g := &groupView{composite: composite, c: c, index: preempt.NewPodGroupIndex(c, composite),
		leafIndex: map[string]int32{}, unitIndex: map[string]int32{}, typedOn: make([]int32, len(s.nodes))}
	for i, pg := range c.PodGroups {
		g.leafIndex[preempt.Key(pg.Namespace, pg.Name)] = int32(i)
	}
	g.leaves = make([]leafGroup, len(c.PodGroups))
	for p := range int32(len(s.pods)) {
		g.addPod(s, p, false)
	}
	for i := range g.leaves {
		l := &g.leaves[i]
		sort.Slice(l.members, func(a, b int) bool { return s.podName[l.members[a]] < s.podName[l.members[b]] })
	}
	for u := range g.units {
		g.refresh(s, int32(u))
	}
	g.touched = g.touched[:0]
	return g
}

// nameRanks is each pod of s's place in (namespace, name, UID) order.
func nameRanks(s *Snapshot) []int32 {
	order := make([]int32, len(s.pods))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return s.compareNames(a, b) })
	rank := make([]int32, len(order))
	for i, p := range order {
		rank[p] = int32(i)
	}
	return rank
}

// compareNames orders pods a and b by namespace, name and UID.
func (s *Snapshot) compareNames(a, b int32) int {
	if c := strings.Compare(s.podNS[a], s.podNS[b]); c != 0 {
		return c
	}
	if c := strings.Compare(s.podName[a], s.podName[b]); c != 0 {
		return c
	}
	return strings.Compare(s.podUID[a], s.podUID[b])
}

// live reports whether pod index p is a pod of s (not removed by Update).
func (s *Snapshot) live(p int32) bool {
	q, ok := s.podIndex[podKey{s.podNS[p], s.podName[p]}]
	return ok && q == p
}

// addPod appends pod index p (the next one) to the view; sorted inserts
// it among its group's members in order (Update), else it is appended
// (newGroupView sorts once).
func (g *groupView) addPod(s *Snapshot, p int32, sorted bool) {
	pod := s.pods[p]
	rec := s.victim[p]
	leaf, unit := int32(-1), int32(-1)
	typed := pod.Spec.SchedulingGroup != nil
	if name, ok := preempt.PodGroupName(pod); ok {
		rec.PodGroup = preempt.Key(pod.Namespace, name)
		if l, ok := g.leafIndex[rec.PodGroup]; ok {
			leaf = l
		}
	}
	if kind, ns, name, ok := g.index.GroupKey(pod); ok {
		unit = g.unit(s, kind, ns, name)
	}
	g.prio = append(g.prio, g.index.VictimPriority(pod))
	g.victim = append(g.victim, rec)
	g.typed = append(g.typed, typed)
	g.self = append(g.self, p)
	g.leafOf = append(g.leafOf, leaf)
	g.unitOf = append(g.unitOf, unit)
	if !typed || !s.live(p) {
		return
	}
	g.live++
	n := s.podNode[p]
	if n < 0 {
		return
	}
	g.typedOn[n]++
	if leaf < 0 {
		return
	}
	l := &g.leaves[leaf]
	at := len(l.members)
	if sorted {
		at, _ = slices.BinarySearchFunc(l.members, s.podName[p], func(q int32, name string) int { return strings.Compare(s.podName[q], name) })
	}
	l.members = slices.Insert(l.members, at, p)
	g.touched = append(g.touched, l.units...)
}

// removePod takes pod index p out of the view (before Update unbinds it).
func (g *groupView) removePod(s *Snapshot, p int32) {
	if !g.typed[p] {
		return
	}
	g.live--
	n := s.podNode[p]
	if n < 0 {
		return
	}
	g.typedOn[n]--
	if leaf := g.leafOf[p]; leaf >= 0 {
		l := &g.leaves[leaf]
		l.members = remove(l.members, p)
		g.touched = append(g.touched, l.units...)
	}
}

// unit is the index of the unit of the group kind/namespace/name, made
// on first sight with its leaves as the reference's scheduledUnder walks
// them: child composites first, then pod groups, each in name order,
// giving up below WorkloadMaxTreeDepth levels.
func (g *groupView) unit(s *Snapshot, kind, namespace, name string) int32 {
	key := kind + "/" + preempt.Key(namespace, name)
	if u, ok := g.unitIndex[key]; ok {
		return u
	}
	u := int32(len(g.units))
	g.unitIndex[key] = u
	var leaves []int32
	walkLeaves(g.c, g.composite, kind, namespace, name, func(pg string) {
		if l, ok := g.leafIndex[preempt.Key(namespace, pg)]; ok {
			leaves = append(leaves, l)
		}
	})
	rank := int8(2)
	if kind == "CompositePodGroup" {
		rank = 3
	}
	g.units = append(g.units, groupUnit{rank: rank, leaves: leaves})
	for _, l := range leaves {
		if !slices.Contains(g.leaves[l].units, u) {
			g.leaves[l].units = append(g.leaves[l].units, u)
		}
	}
	g.touched = append(g.touched, u)
	return u
}

// walkLeaves visits the leaf pod groups under the group kind/namespace/
// name as the reference's scheduledUnder walks them (upstream's
// GetPodGroupStates, its order pinned): child composites first, then pod
// groups, each in name order, giving up below WorkloadMaxTreeDepth levels.
func walkLeaves(c *preempt.Cluster, composite bool, kind, namespace, name string, visit func(podGroup string)) {
	var walk func(kind, name string, depth int)
	walk = func(kind, name string, depth int) {
		if depth >= schedulingv1beta1.WorkloadMaxTreeDepth {
			return
		}
		if kind == "PodGroup" || !composite {
			visit(name)
			return
		}
		var pgs, cpgs []string
		for _, cpg := range c.CompositePodGroups {
			if cpg.Namespace == namespace && preempt.CompositePodGroupParent(cpg) == name {
				cpgs = append(cpgs, cpg.Name)
			}
		}
		for _, pg := range c.PodGroups {
			if pg.Namespace == namespace && preempt.PodGroupParent(pg) == name {
				pgs = append(pgs, pg.Name)
			}
		}
		sort.Strings(cpgs)
		sort.Strings(pgs)
		for _, c := range cpgs {
			walk("CompositePodGroup", c, depth+1)
		}
		for _, pg := range pgs {
			walk("PodGroup", pg, depth+1)
		}
	}
	walk(kind, name, 0)
}

// refresh rebuilds unit u's members and start times from its leaves.
func (g *groupView) refresh(s *Snapshot, u int32) {
	x := &g.units[u]
	x.members = x.members[:0]
	x.started, x.unstarted, x.minStart = false, false, 0
	for _, l := range x.leaves {
		for _, p := range g.leaves[l].members {
			x.members = append(x.members, p)
			switch {
			case !s.hasStart[p]:
				x.unstarted = true
			case !x.started || s.startNanos[p] < x.minStart:
				x.started, x.minStart = true, s.startNanos[p]
			}
		}
	}
}

// groupsSameObjects reports whether the clusters a and b hold the same
// PodGroup and CompositePodGroup objects.
func groupsSameObjects(a, b *preempt.Cluster) bool {
	return slices.Equal(a.PodGroups, b.PodGroups) && slices.Equal(a.CompositePodGroups, b.CompositePodGroups)
}

// updateGroupsBegin is Update's first step for the views: a cluster
// with other group objects drops them (the next request rebuilds).
func (s *Snapshot) updateGroupsBegin(c *preempt.Cluster) {
	if !groupsSameObjects(s.cluster, c) {
		s.groupViews = [2]*groupView{}
	}
}

// groupsRemoved and groupsAdded follow Update's removal (before the pod is
// unbound) and addition (after appendPod) of pod index p.
func (s *Snapshot) groupsRemoved(p int32) {
	for _, g := range s.groupViews {
		if g != nil {
			g.removePod(s, p)
		}
	}
}

func (s *Snapshot) groupsAdded(p int32) {
	for _, g := range s.groupViews {
		if g != nil {
			g.addPod(s, p, true)
		}
	}
}

// groupsRefreshed ends Update: the units whose members changed are rebuilt.
func (s *Snapshot) groupsRefreshed() {
	for _, g := range s.groupViews {
		if g == nil {
			continue
		}
		slices.Sort(g.touched)
		for _, u := range slices.Compact(g.touched) {
			g.refresh(s, u)
		}
		g.touched = g.touched[:0]
	}
}

// victimPriorities are the pods' priorities as victims under gates.
func (s *Snapshot) victimPriorities(gates map[string]bool) []int32 {
	if g := s.groupsFor(gates); g != nil {
		return g.prio
	}
	return s.priority
}

// victimRecords are the pods as victims under the decision's gates (with
// their PodGroup under GenericWorkload).
func (d *decision) victimRecords() []preempt.Victim {
	if d.groups != nil {
		return d.groups.victim
	}
	return d.s.victim
}

// nameVictimGroups names each victim's PodGroup under gates: an
// extender's answer names pods only.
func (s *Snapshot) nameVictimGroups(victims []preempt.Victim, gates map[string]bool) {
	g := s.groupsFor(gates)
	if g == nil {
		return
	}
	for i, v := range victims {
		if p, ok := s.podIndex[podKey{v.Namespace, v.Name}]; ok {
			victims[i].PodGroup = g.victim[p].PodGroup
		}
	}
}

// groupedNode reports whether node n takes the group-aware path.
func (d *decision) groupedNode(n int32) bool {
	return d.groups != nil && d.groups.typedOn[n] > 0
}

// unitRef is a potential victim on the checked node: a unit, or a pod of
// its own.
type unitRef struct {
	unit       int32 // the view's unit, -1 for a pod of its own
	pod        int32 // the pod of its own, or the unit's first member
	prio       int32
	rank       int8
	victim     bool // not reprieved (selectGroupVictims)
	size       int32
	earliest   int64
	violations int32
}

// groupScratch is a worker's memory for the group-aware path.
type groupScratch struct {
	units                   []unitRef
	violating, nonViolating []unitRef // the gang path's split (gang.go)
	seen                    []uint32  // unit -> epoch it was seen on the checked node
	epoch                   uint32
	remote                  remoteTopology
}

func (gs *groupScratch) next(units int) {
	if len(gs.seen) < units {
		gs.seen = make([]uint32, units+units/2)
		gs.epoch = 0
	}
	gs.epoch++
	if gs.epoch == 0 {
		clear(gs.seen)
		gs.epoch = 1
	}
}

func (d *decision) members(r *unitRef) []int32 {
	if r.unit < 0 {
		return d.groups.self[r.pod : r.pod+1 : r.pod+1]
	}
	return d.groups.units[r.unit].members
}

// compareUnits is upstream's MoreImportantVictim, with the contract's
// final tie (the first pod's namespace, name and UID), as a three-way
// comparison: negative when a is more important than b, each key read
// once.
func (d *decision) compareUnits(a, b *unitRef) int {
	if a.prio != b.prio {
		return cmp.Compare(b.prio, a.prio)
	}
	if a.rank != b.rank {
		return cmp.Compare(b.rank, a.rank)
	}
	if a.size != b.size {
		return cmp.Compare(b.size, a.size)
	}
	if a.earliest != b.earliest {
		return cmp.Compare(a.earliest, b.earliest)
	}
	pa, pb := a.pod, b.pod
	if g := d.groups; g != nil && int(pa) < len(g.rank) && int(pb) < len(g.rank) {
		return cmp.Compare(g.rank[pa], g.rank[pb])
	}
	return d.s.compareNames(pa, pb)
}

func (d *decision) sortUnits(us []unitRef) {
	slices.SortFunc(us, func(a, b unitRef) int { return d.compareUnits(&a, &b) })
}

var reasonsRemoteTopology = []string{"optimized: a pod group's members on other nodes beside topology spread state are not modelled"}

// remoteTopology is what the checked node's unit members on other nodes
// (remote members) count for in InterPodAffinity's state, as its
// RemovePod and AddPod move it on their own nodes: net changes per
// topology pair of the three counts. The counters of nodeUse.topo hold the
// checked node's own pods; remote members are few, so a short list.
type remoteTopology struct {
	on      bool // some remote member went through the state
	entries []remoteCount
}

// Kinds of remoteCount: InterPodAffinity's three counts.
const (
	remoteAffinity = iota
	remoteAnti
	remoteExisting
)

type remoteCount struct {
	kind  int8
	pair  pair
	delta int32
}

func (r *remoteTopology) reset() { r.on, r.entries = false, r.entries[:0] }

func (r *remoteTopology) add(kind int8, key, value string, delta int32) {
	r.on = true
	for i := range r.entries {
		if e := &r.entries[i]; e.kind == kind && e.pair.key == key && e.pair.value == value {
			e.delta += delta
			return
		}
	}
	r.entries = append(r.entries, remoteCount{kind, pair{key, value}, delta})
}

func (r *remoteTopology) get(kind int8, key, value string) int {
	for _, e := range r.entries {
		if e.kind == kind && e.pair.key == key && e.pair.value == value {
			return int(e.delta)
		}
	}
	return 0
}

// contributeRemote is InterPodAffinity's AddPod (sign 1) or RemovePod
// (-1) of pod p on its own node, which is not the checked one
// (upstream's updateWithPod, on the remote node's pairs).
func (t *affinityState) contributeRemote(s *Snapshot, r *remoteTopology, p, sign int32) {
	if !t.on {
		return
	}
	e, l := s.pods[p], s.nodeLabels(s.podNode[p])
	for _, term := range s.antiTerms[p] {
		if v, ok := l[term.TopologyKey]; ok && term.Matches(t.pod, t.nsLabels) {
			r.add(remoteExisting, term.TopologyKey, v, sign)
		}
	}
	if matchesAll(t.aff, e) {
		for _, term := range t.aff {
			if v, ok := l[term.TopologyKey]; ok {
				r.add(remoteAffinity, term.TopologyKey, v, sign)
			}
		}
	}
	for i := range t.anti {
		if v, ok := l[t.anti[i].TopologyKey]; ok && t.anti[i].Matches(e, nil) {
			r.add(remoteAnti, t.anti[i].TopologyKey, v, sign)
		}
	}
}

// groupFits is decision.fits on the group-aware path: with remote members
// through InterPodAffinity's state (spread off: refused otherwise), its
// Filter reads their counts too.
func (d *decision) groupFits(n int32, u, nom *nodeUse, r *remoteTopology) (preempt.Code, []string, uint64) {
	if !r.on {
		return d.fits(n, u, nom)
	}
	plain := *d // NodePorts, NodeResourcesFit and the volume plugins alone
	plain.topo, plain.dra = nil, nil
	if code, reasons, mask := plain.fits(n, u, nom); code != preempt.Success {
		return code, reasons, mask
	}
	t := &d.topo.affinity
	if code, reasons := t.filterRemote(d.s, n, u.topo, nom.topo, r); code != preempt.Success {
		return code, reasons, 0
	}
	if nom.pods > 0 {
		if code, reasons := t.filterRemote(d.s, n, u.topo, nil, r); code != preempt.Success {
			return code, reasons, 0
		}
	}
	if d.dra != nil { // DynamicResources, after InterPodAffinity
		if code, reasons := d.dra.filter(n); code != preempt.Success {
			return code, reasons, 0
		}
	}
	return preempt.Success, nil, 0
}

// filterRemote is affinityState.filter with the remote members' counts r:
// the checked node's counters u (and nom, when not nil) are its own pods'
// net changes on its pairs, r's are anywhere.
func (t *affinityState) filterRemote(s *Snapshot, n int32, u, nom []int32, r *remoteTopology) (preempt.Code, []string) {
	if !t.on {
		return preempt.Success, nil
	}
	delta := func(i int) int {
		d := int(u[i])
		if nom != nil {
			d += int(nom[i])
		}
		return d
	}
	l := s.nodeLabels(n)
	if len(t.aff) > 0 {
		m := delta(t.affCounter())
		podsExist, pairs := true, t.affPairs
		// Pairs only remote members changed: upstream's count of
		// non-empty pairs (the first pod of a series may go where no pod
		// matches yet).
		for _, e := range r.entries {
			if e.kind != remoteAffinity {
				continue
			}
			if v, ok := l[e.pair.key]; ok && v == e.pair.value {
				continue // one of the node's pairs: below
			}
			b := t.affBase[e.pair]
			if b > 0 {
				pairs--
			}
			if b+int(e.delta) > 0 {
				pairs++
			}
		}
		for k, key := range t.affKeys {
			v, ok := l[key]
			if !ok {
				return preempt.UnschedulableAndUnresolvable, reasonsAffinity
			}
			b := t.affBase[pair{key, v}]
			c := b + t.affMult[k]*m + r.get(remoteAffinity, key, v)
			if c <= 0 {
				podsExist = false
			}
			if b > 0 {
				pairs--
			}
			if c > 0 {
				pairs++
			}
		}
		if !podsExist && !(pairs == 0 && t.selfMatchesAll) {
			return preempt.UnschedulableAndUnresolvable, reasonsAffinity
		}
	}
	for k, key := range t.antiKeys {
		if v, ok := l[key]; ok && t.antiBase[pair{key, v}]+delta(t.antiCounter(k))+r.get(remoteAnti, key, v) > 0 {
			return preempt.Unschedulable, reasonsAntiAffinity
		}
	}
	blocked := delta(t.existCounter())
	for k, v := range l {
		blocked += t.existBase[pair{k, v}] + r.get(remoteExisting, k, v)
	}
	if blocked > 0 {
		return preempt.Unschedulable, reasonsExistingAntiAf
	}
	return preempt.Success, nil
}

// selectGroupVictims is SelectVictimsOnNode on node n when some of its
// pods name a pod group (the reference's selectVictimsOnNode over units).
// A unit's members on other nodes leave only the victims' list: they
// would change the topology plugins' counts on their own nodes
// (RemovePod), which the counters here do not model; such a use is
// refused (Impl.UnmodelledGateUse), and met anyway it is an Error.
func (d *decision) selectGroupVictims(n int32, sc *scratch) result {
	s, g, gs := d.s, d.groups, &sc.grp
	u := &sc.use
	d.loadNode(n, u)
	gs.next(len(g.units))
	gs.units = gs.units[:0]
	for _, p := range s.boundOf[n] {
		r := unitRef{unit: -1, pod: p, prio: g.prio[p], rank: 1, size: 1, earliest: d.now}
		if s.hasStart[p] {
			r.earliest = s.startNanos[p]
		}
		if g.typed[p] {
			r.rank = 2
		}
		if x := g.unitOf[p]; x >= 0 {
			if gs.seen[x] == gs.epoch {
				continue
			}
			gs.seen[x] = gs.epoch
			if ux := &g.units[x]; len(ux.members) > 0 {
				r = unitRef{unit: x, pod: ux.members[0], prio: g.prio[p], rank: ux.rank, size: int32(len(ux.members)), earliest: ux.earliest(d.now)}
			}
		}
		if r.prio < d.priority {
			gs.units = append(gs.units, r)
		}
	}
	if len(gs.units) == 0 {
		return result{code: preempt.UnschedulableAndUnresolvable, reasons: reasonsNoVictims}
	}
	gs.remote.reset()
	change := func(r *unitRef, sign int64) bool {
		for _, p := range d.members(r) {
			if d.vol != nil && s.podNode[p] != n { // RemovePod, AddPod of a remote member
				d.vol.restrictions.addRemote(u, p, int32(sign))
			}
			switch {
			case s.podNode[p] == n:
				d.addPod(u, p, sign)
			case d.topo == nil:
			case d.topo.spread.on():
				return false
			default:
				d.topo.affinity.contributeRemote(s, &gs.remote, p, int32(sign))
			}
		}
		return true
	}
	for i := range gs.units {
		if !change(&gs.units[i], -1) {
			return result{code: preempt.Error, reasons: reasonsRemoteTopology}
		}
	}
	if d.preFilterFailed() != nil {
		return result{code: preempt.Error, reasons: d.vol.removePodFailure()}
	}
	if r := d.nodeFilters(n); r != nil {
		return result{code: d.nodeFiltersCode(), reasons: r}
	}
	d.nominatedUse(n, sc)
	if code, r, mask := d.groupFits(n, u, &sc.nom, &gs.remote); code != preempt.Success {
		return result{code: code, reasons: r, mask: mask}
	}

	d.sortUnits(gs.units)
	// FilterVictimsWithPDBViolation over the units' pods in order, budgets
	// shared: a unit violates when any of its pods does.
	sc.potential = sc.potential[:0]
	for i := range gs.units {
		sc.potential = append(sc.potential, d.members(&gs.units[i])...)
	}
	d.splitByPDBViolation(sc)
	bad := sc.violating // in the order of sc.potential
	for i := range gs.units {
		r := &gs.units[i]
		r.violations, r.victim = 0, false
		for _, p := range d.members(r) {
			if len(bad) > 0 && bad[0] == p {
				r.violations++
				bad = bad[1:]
			}
		}
	}

	// Reprieve the violating units, then the others, each in order; the
	// victims come out in the units' order (upstream sorts them again),
	// so they are read off the sorted units, not sorted a second time.
	numViolations := int32(0)
	reprieve := func(r *unitRef) bool {
		change(r, 1)
		if code, _, _ := d.groupFits(n, u, &sc.nom, &gs.remote); code == preempt.Success {
			return true
		}
		change(r, -1)
		r.victim = true
		return false
	}
	for i := range gs.units {
		if r := &gs.units[i]; r.violations > 0 && !reprieve(r) {
			numViolations += r.violations
		}
	}
	for i := range gs.units {
		if r := &gs.units[i]; r.violations == 0 {
			reprieve(r)
		}
	}
	first := len(sc.victims)
	for i := range gs.units {
		if r := &gs.units[i]; r.victim {
			sc.victims = append(sc.victims, d.members(r)...)
		}
	}
	victims := sc.victims[first:len(sc.victims):len(sc.victims)]
	return result{code: preempt.Success, victims: victims, numViolations: numViolations}
}

// groupGaps is what UnmodelledGateUse refuses under GenericWorkload: a
// preemptor in a pod group (kube-scheduler preempts for its group:
// PodGroupEvaluator, not modelled here yet), and a unit below the
// preemptor's priority with members on two nodes or more beside a
// preemptor with a DoNotSchedule spread constraint: a remote member's
// removal moves PodTopologySpread's count of another domain, and its
// critical paths (the two smallest counts, updated one move at a time,
// not recomputed) then depend on the order of the moves, which the
// per-node counters here do not follow. (InterPodAffinity's counts do
// not depend on the order: remoteTopology carries them.)
func groupGaps(c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config) *preempt.Unmodelled {
	gates := cfg.FeatureGates
	if !gates[preempt.GenericWorkloadGate] {
		return nil
	}
	if u := compositeCycle(c, gates); u != nil {
		return u
	}
	if pod != nil && pod.Spec.SchedulingGroup != nil {
		return &preempt.Unmodelled{Feature: "a pod group's member as a single preemptor (GenericWorkload=true)", Object: "pod " + preempt.Key(pod.Namespace, pod.Name),
			Detail: "belongs to a pod group (spec.schedulingGroup): gang preemption (PodGroupEvaluator) is not modelled by optimized yet"}
	}
	if pod == nil || !spreadMayRun(pod) {
		return nil
	}
	composite := gates[preempt.CompositePodGroupGate]
	x := preempt.NewPodGroupIndex(c, composite)
	// A unit is removed at the priority of the member that brings it onto
	// the checked node: a unit none of whose members is below the
	// preemptor's never is.
	prio := corev1helpers.PodPriority(pod)
	nodesOf := map[string][]string{} // pod group -> its members' nodes
	for _, p := range c.Pods {
		if pg, ok := preempt.PodGroupName(p); ok && preempt.IsBound(p) {
			k := preempt.Key(p.Namespace, pg)
			if !slices.Contains(nodesOf[k], p.Spec.NodeName) {
				nodesOf[k] = append(nodesOf[k], p.Spec.NodeName)
			}
		}
	}
	done := map[string]bool{}
	for _, p := range c.Pods {
		kind, ns, name, ok := x.GroupKey(p)
		key := kind + "/" + preempt.Key(ns, name)
		if !ok || !preempt.IsBound(p) || x.VictimPriority(p) >= prio || done[key] {
			continue
		}
		done[key] = true
		var nodes []string
		walkLeaves(c, composite, kind, ns, name, func(pg string) {
			for _, n := range nodesOf[preempt.Key(ns, pg)] {
				if !slices.Contains(nodes, n) {
					nodes = append(nodes, n)
				}
			}
		})
		if len(nodes) > 1 {
			return &preempt.Unmodelled{Feature: "pod groups beside topology spread (GenericWorkload=true)", Object: strings.ToLower(kind) + " " + preempt.Key(ns, name),
				Detail: "has members on nodes " + nodes[0] + " and " + nodes[1] + " while the preemptor has a DoNotSchedule spread constraint: removing a remote member moves another domain's count and the spread plugin's critical paths, which optimized does not follow (the reference does)"}
		}
	}
	return nil
}

// spreadMayRun reports whether PodTopologySpread may run for pod (not
// Skip in PreFilter): pod has a DoNotSchedule constraint. A superset of
// newSpreadState's answer.
func spreadMayRun(pod *v1.Pod) bool {
	for _, tsc := range pod.Spec.TopologySpreadConstraints {
		if tsc.WhenUnsatisfiable == v1.DoNotSchedule {
			return true
		}
	}
	return false
}

var _ preempt.GateSetter = (*evaluator)(nil)

// SetFeatureGates prepares the pod-group view of the gates (groupsFor)
// when they turn GenericWorkload on, so that a caller that says its gates
// before deciding (a stream, decide) pays for the view while preparing,
// as it pays for the snapshot; the first request would build it
// otherwise. Filter reads no gate: a plain preemptor's filters do not
// depend on pod groups.
func (ev *evaluator) SetFeatureGates(gates map[string]bool) {
	ev.s.groupsFor(gates)
}

// compositeCycle refuses a CompositePodGroup hierarchy with a cycle (a
// composite its own ancestor) under CompositePodGroup: v1.37.2 stops
// walking up at the repeat but not down (GetPodGroupStates), so a unit
// holds its members more than once and preemption fails
// (docs/upstream-findings.md); the group view here walks each hierarchy
// once and would answer.
func compositeCycle(c *preempt.Cluster, gates map[string]bool) *preempt.Unmodelled {
	if !gates[preempt.GenericWorkloadGate] || !gates[preempt.CompositePodGroupGate] || len(c.CompositePodGroups) == 0 {
		return nil
	}
	parent := make(map[string]string, len(c.CompositePodGroups))
	for _, cpg := range c.CompositePodGroups {
		if p := preempt.CompositePodGroupParent(cpg); p != "" {
			parent[preempt.Key(cpg.Namespace, cpg.Name)] = preempt.Key(cpg.Namespace, p)
		}
	}
	for _, cpg := range c.CompositePodGroups {
		start := preempt.Key(cpg.Namespace, cpg.Name)
		at := start
		for range len(parent) + 1 {
			next, ok := parent[at]
			if !ok {
				break
			}
			if next == start {
				return &preempt.Unmodelled{Feature: "a CompositePodGroup hierarchy with a cycle (CompositePodGroup=true)", Object: "compositepodgroup " + start,
					Detail: "is its own ancestor: upstream's walk down the hierarchy repeats its members and fails the preemption; optimized does not model that"}
			}
			at = next
		}
	}
	return nil
}
