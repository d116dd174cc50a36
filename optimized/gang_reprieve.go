package optimized

// The reprieve's topology bookkeeping, narrowed to what a placed member's
// check reads. Member i placed on node a is checked only there (nodeFits
// on a), and its InterPodAffinity Filter on a reads, of its state, the
// counts of the pairs (key, a's value of key): affBase and antiBase for
// its terms' keys, existBase for a's labels; and affPairs only when the
// member matches all its own affinity terms (the first-pod rule). So a
// pod put back (or taken off again) on a node outside a's domain of a
// key moves nothing member i reads through that key: its counts there
// are left as they are (the state is the request's, dropped after the
// reprieve), no label selector runs for it, and nothing is rechecked.
// A member whose check reads more (affPairs, or PodTopologySpread's
// minimum over every domain) follows every pod, as before; and where a
// member's counts moved, only its node is checked again, not every
// assignment node.

// gangLocal is a placed member's narrowed InterPodAffinity bookkeeping.
type gangLocal struct {
	on      bool  // the member's state follows only the pairs of its node
	node    int32 // the member's node
	affDom  []dom // per distinct topology key of its affinity terms
	affOf   []int // affinity term -> its key in affDom
	antiDom []dom // per distinct key of its anti-affinity terms (antiKeys)
	labels  map[string]string
	// memoPod's matchesAll of the affinity terms is memoAll: a unit's
	// pods are put back, then taken off again.
	memoPod int32
	memoAll bool
}

// dom is a topology key's domains: per node, the index of its value
// among the key's values, -1 when the node lacks the key; pair is the
// member's node's pair (valid when that node has the key).
type dom struct {
	of   []int32
	pair pair
}

// same reports whether node n is in the member's domain of the key
// (the member's node is a).
func (d *dom) same(n, a int32) bool { return d.of[n] >= 0 && d.of[n] == d.of[a] }

// domains is key's domains over the snapshot's nodes, made once per
// reprieve.
func (w *gangWorld) domains(key string) []int32 {
	if of, ok := w.doms[key]; ok {
		return of
	}
	if w.doms == nil {
		w.doms = map[string][]int32{}
	}
	s := w.s
	of := make([]int32, len(s.nodes))
	ids := map[string]int32{}
	for n := range s.nodes {
		v, ok := s.nodes[n].Labels[key]
		if !ok {
			of[n] = -1
			continue
		}
		id, seen := ids[v]
		if !seen {
			id = int32(len(ids))
			ids[v] = id
		}
		of[n] = id
	}
	w.doms[key] = of
	return of
}

// setLocal decides, for each placed member, whether its InterPodAffinity
// state follows only its node's pairs, and readies them: w.near lists,
// per node, the narrowed members one of whose term keys puts that node in
// their domain (the only ones a pod there without anti-affinity can move).
func (w *gangWorld) setLocal() {
	clear(w.doms)
	nn := len(w.s.nodes)
	for len(w.near) < nn {
		w.near = append(w.near, nil)
	}
	w.near = w.near[:nn]
	for n := range w.near {
		w.near[n] = w.near[n][:0]
	}
	w.anyLocal = false
	for len(w.local) < len(w.members) {
		w.local = append(w.local, gangLocal{})
	}
	w.local = w.local[:len(w.members)]
	w.affected = resizeBool(w.affected, len(w.members))
	clear(w.affected)
	for i, a := range w.assignedTo {
		lc := &w.local[i]
		lc.on = false
		d := w.dec[i]
		if a < 0 || d.topo == nil {
			continue
		}
		t := &d.topo.affinity
		if len(t.aff) > 0 && t.selfMatchesAll {
			continue // affPairs is read: every pair is followed
		}
		lc.on, lc.node, lc.labels, lc.memoPod = true, a, w.s.nodeLabels(a), -1
		lc.affDom, lc.antiDom, lc.affOf = lc.affDom[:0], lc.antiDom[:0], lc.affOf[:0]
		for _, key := range t.affKeys {
			lc.affDom = append(lc.affDom, dom{of: w.domains(key), pair: pair{key, lc.labels[key]}})
		}
		for j := range t.aff {
			lc.affOf = append(lc.affOf, indexOf(t.affKeys, t.aff[j].TopologyKey))
		}
		for _, key := range t.antiKeys {
			lc.antiDom = append(lc.antiDom, dom{of: w.domains(key), pair: pair{key, lc.labels[key]}})
		}
		w.anyLocal = true
		for n := range int32(nn) {
			near := false
			for k := range lc.affDom {
				near = near || lc.affDom[k].same(n, a)
			}
			for k := range lc.antiDom {
				near = near || lc.antiDom[k].same(n, a)
			}
			if near {
				w.near[n] = append(w.near[n], int32(i))
			}
		}
	}
}

// localMove is topologyMove for the narrowed members: pod p's AddPod
// (sign 1) or RemovePod (-1) in the states of those it can move (every
// narrowed member when p has anti-affinity terms, else w.near's), w.affected
// marking the members whose read counts moved.
func (w *gangWorld) localMove(p int32, sign int) {
	if len(w.s.antiTerms[p]) == 0 {
		for _, i := range w.near[w.s.podNode[p]] {
			if w.localUpdate(&w.dec[i].topo.affinity, &w.local[i], p, sign) {
				w.affected[i] = true
			}
		}
		return
	}
	for i := range w.local {
		if lc := &w.local[i]; lc.on && w.localUpdate(&w.dec[i].topo.affinity, lc, p, sign) {
			w.affected[i] = true
		}
	}
}

func resizeBool(s []bool, n int) []bool {
	if cap(s) < n {
		return make([]bool, n)
	}
	return s[:n]
}

// localUpdate is affinityState.update of pod p (on its node) for the
// member of lc, on the pairs of the member's node only: AddPod with sign
// 1, RemovePod with -1. It reports whether such a count moved.
func (w *gangWorld) localUpdate(t *affinityState, lc *gangLocal, p int32, sign int) bool {
	s := w.s
	n, a := s.podNode[p], lc.node
	moved := false
	for _, term := range s.antiTerms[p] {
		of := w.domains(term.TopologyKey)
		if of[n] >= 0 && of[n] == of[a] && term.Matches(t.pod, t.nsLabels) {
			t.existBase[pair{term.TopologyKey, lc.labels[term.TopologyKey]}] += sign
			moved = true
		}
	}
	if len(t.aff) > 0 {
		near := false
		for k := range lc.affDom {
			near = near || lc.affDom[k].same(n, a)
		}
		if near && lc.matchesAll(t, s, p) {
			for j := range t.aff {
				if d := &lc.affDom[lc.affOf[j]]; d.same(n, a) {
					t.affBase[d.pair] += sign
					moved = true
				}
			}
		}
	}
	for j := range t.anti {
		if d := &lc.antiDom[t.antiOf[j]]; d.same(n, a) && t.anti[j].Matches(s.pods[p], nil) {
			t.antiBase[d.pair] += sign
			moved = true
		}
	}
	return moved
}

// matchesAll is matchesAll(t.aff, pod p), kept for the last pod asked.
func (lc *gangLocal) matchesAll(t *affinityState, s *Snapshot, p int32) bool {
	if lc.memoPod != p {
		lc.memoPod, lc.memoAll = p, matchesAll(t.aff, s.pods[p])
	}
	return lc.memoAll
}
