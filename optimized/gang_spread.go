package optimized

import (
	"math"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	nodetopology "k8s.io/component-helpers/node/topology"
)

// PodTopologySpread on the gang path, as the reference keeps it
// (reference/plugin_podtopologyspread.go under reference/gang.go): a
// member's PreFilter runs with its InterPodAffinity's (gangPreFilter), over
// the same world, and counts the domains in the scheduler's node-tree
// order; the reprieve's AddPod and RemovePod move a domain's count and
// upstream's critical paths as they are (a domain dropped from the paths
// can be smaller than both: docs/upstream-findings.md), so the minimum is
// the paths', not the counts'. The single-pod path's min1/min2 hold only
// while one domain changes; here every placed member's state follows the
// victims put back across the cluster.

// gangSpread is a member's PodTopologySpread state: st's constraints,
// whose counts maps are the domains' counts, and each one's critical
// paths.
type gangSpread struct {
	st    spreadState
	paths []criticalPaths
}

// criticalPaths is upstream's criticalPaths: two (value, count) pairs,
// the first the smaller.
type criticalPaths [2]struct {
	value string
	num   int
}

func newCriticalPaths() criticalPaths {
	var p criticalPaths
	p[0].num, p[1].num = math.MaxInt32, math.MaxInt32
	return p
}

// update is upstream's criticalPaths.update, as is.
func (p *criticalPaths) update(value string, num int) {
	i := -1
	if value == p[0].value {
		i = 0
	} else if value == p[1].value {
		i = 1
	}
	if i >= 0 {
		p[i].num = num
		if p[0].num > p[1].num {
			p[0], p[1] = p[1], p[0]
		}
		return
	}
	if num < p[0].num {
		p[1] = p[0]
		p[0].value, p[0].num = value, num
	} else if num < p[1].num {
		p[1].value, p[1].num = value, num
	}
}

// treeOrder is the scheduler cache's nodeTree.list() over the cluster's
// nodes in the cluster's order (the reference's nodeTreeOrder): the zones
// in the order their first node came, one node of each in turn.
func (w *gangWorld) treeOrder() []int32 {
	if w.treeOf == w.s.cluster && w.treeS == w.s {
		return w.tree
	}
	s := w.s
	var zones []string
	byZone := map[string][]int32{}
	for _, n := range s.cluster.Nodes {
		z := nodetopology.GetZoneKey(n)
		if _, ok := byZone[z]; !ok {
			zones = append(zones, z)
		}
		byZone[z] = append(byZone[z], s.nodeIndex[n.Name])
	}
	w.tree = w.tree[:0]
	for i := 0; len(w.tree) < len(s.cluster.Nodes); i++ {
		for _, z := range zones {
			if i < len(byZone[z]) {
				w.tree = append(w.tree, byZone[z][i])
			}
		}
	}
	w.treeOf, w.treeS = s.cluster, s
	return w.tree
}

// spreadPreFilter is member i's PodTopologySpread PreFilter over the
// world of the moment (the bound pods without the potential victims, the
// members placed so far); nil when it Skips (no DoNotSchedule
// constraint).
func (w *gangWorld) spreadPreFilter(i int) *gangSpread {
	s, m := w.s, w.members[i]
	st := spreadConstraints(m)
	if len(st.constraints) == 0 {
		return nil
	}
	g := &gangSpread{st: st, paths: make([]criticalPaths, len(st.constraints))}
	order := make([][]string, len(st.constraints))
	matches := func(c *spreadC, e *v1.Pod) bool {
		return e.DeletionTimestamp == nil && e.Namespace == m.Namespace && c.selector.Matches(labels.Set(e.Labels))
	}
	for _, n := range w.treeOrder() {
		if !st.hasKeys(s, n) {
			continue
		}
		for k := range st.constraints {
			c := &st.constraints[k]
			if !st.includes(c, s.nodes[n]) {
				continue
			}
			count := 0
			if !c.selector.Empty() {
				for _, p := range s.boundOf[n] {
					if w.gone[p] != w.epoch && matches(c, s.pods[p]) {
						count++
					}
				}
				for j, at := range w.viewNode {
					if at == n && matches(c, w.members[j]) {
						count++
					}
				}
			}
			value := s.nodes[n].Labels[c.key]
			if _, seen := c.counts[value]; !seen {
				order[k] = append(order[k], value)
			}
			c.counts[value] += count
		}
	}
	// The paths in the domains' insertion order, as the reference pins
	// upstream's map iteration (docs/divergences.md).
	for k := range st.constraints {
		g.paths[k] = newCriticalPaths()
		for _, value := range order[k] {
			g.paths[k].update(value, st.constraints[k].counts[value])
		}
	}
	return g
}

// counted reports whether pod e (of any deletion state: AddPod and
// RemovePod count it) on node n counts in n's domain of constraint k.
func (g *gangSpread) counted(s *Snapshot, e *v1.Pod, n int32, k int) bool {
	c := &g.st.constraints[k]
	return e.Namespace == g.st.pod.Namespace && c.selector.Matches(labels.Set(e.Labels)) && g.st.includes(c, s.nodes[n])
}

// update is upstream's updateWithPod (AddPod with sign 1, RemovePod with
// -1) of pod e on node n; it reports whether a count moved.
func (g *gangSpread) update(s *Snapshot, e *v1.Pod, n int32, sign int) bool {
	if e.Namespace != g.st.pod.Namespace || !g.st.hasKeys(s, n) {
		return false
	}
	moved := false
	for k := range g.st.constraints {
		if g.counted(s, e, n, k) {
			c := &g.st.constraints[k]
			value := s.nodes[n].Labels[c.key]
			c.counts[value] += sign
			g.paths[k].update(value, c.counts[value])
			moved = true
		}
	}
	return moved
}

// filter is the Filter on node n, with added[k] more pods (the nominated
// ones, through AddPod of a copy) in n's domain of constraint k when
// added is not nil.
func (g *gangSpread) filter(s *Snapshot, n int32, added []int) bool {
	l := s.nodeLabels(n)
	for k := range g.st.constraints {
		c := &g.st.constraints[k]
		value, ok := l[c.key]
		if !ok {
			return false
		}
		count, paths := c.counts[value], g.paths[k]
		if added != nil {
			for range added[k] {
				count++
				paths.update(value, count)
			}
		}
		minMatch := 0
		if len(c.counts) >= int(c.minDomains) {
			minMatch = paths[0].num
		}
		if count+c.selfMatch-minMatch > int(c.maxSkew) {
			return false
		}
	}
	return true
}

// spreadFits runs member i's PodTopologySpread Filter on node n as
// RunFilterPluginsWithNominatedPods does: with the nominated pods it
// sees there (the cluster's of its priority or more, the other members'
// stubs; view drops the stubs of the members placed), then, when there
// were any, without them.
func (w *gangWorld) spreadFits(i int, n int32, view bool) bool {
	g := w.spread[i]
	if g == nil {
		return true
	}
	s, d := w.s, w.dec[i]
	added := resizeInt(w.spreadAdded, len(g.st.constraints))
	w.spreadAdded = added
	clear(added)
	keys := g.st.hasKeys(s, n)
	any := false
	count := func(e *v1.Pod) {
		any = true
		if !keys {
			return
		}
		for k := range g.st.constraints {
			if g.counted(s, e, n, k) {
				added[k]++
			}
		}
	}
	for _, p := range s.nomOf[n] {
		if s.priority[p] < d.priority || s.podUID[p] == string(d.pod.UID) {
			continue
		}
		count(s.pods[p])
	}
	if d.priority <= 0 {
		for j, node := range w.stub {
			if node == n && !(view && w.inView[j]) && w.members[j].UID != d.pod.UID {
				m := w.members[j]
				count(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID}}) // the stub: no labels
			}
		}
	}
	if !g.filter(s, n, added) {
		return false
	}
	return !any || g.filter(s, n, nil)
}

func resizeInt(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}
