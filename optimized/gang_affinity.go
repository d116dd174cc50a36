package optimized

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// InterPodAffinity on the gang path, as the reference's gangView and
// reprieveForGang run it (reference/gang.go):
//
//   - a member's PreFilter runs once, when the placement first tries or
//     places it, over the world then: the bound pods without the
//     potential victims, with the members placed before it assumed on
//     their nodes. Its Skip is decided there, once: a member without
//     terms, against which no pod of that world has matching required
//     anti-affinity, is never checked by the plugin, not even when a
//     reprieved victim with such anti-affinity comes back;
//   - a placed member changes the world, not the states of members
//     already tried (Place runs no AddPod);
//   - the reprieve puts a unit's pods back through every placed member's
//     AddPod (RemovePod when the gang no longer fits) and checks each on
//     its node with the nominated pods (the members' stubs among them)
//     through AddPod of a copy, the members placed before it assumed on
//     the node only.
//
// The counts are the state's own maps (affinityState.update); the
// counters of nodeUse.topo carry only the nominated pods.

// gangPreFilter is member i's PodTopologySpread and InterPodAffinity
// PreFilter over the world of the moment; d.topo stays nil when
// InterPodAffinity Skips (w.spread[i] when PodTopologySpread does).
func (w *gangWorld) gangPreFilter(i int) {
	w.tried[i] = true
	w.volumePreFilter(i)
	w.spread[i] = w.spreadPreFilter(i)
	s, d, m := w.s, w.dec[i], w.members[i]
	base := w.affinityBaseOf(i) // the terms, and the world's counts, of members like m
	terms := len(base.st.aff) > 0 || len(base.st.anti) > 0
	anti := false
	for _, p := range s.withAnti {
		if w.gone[p] != w.epoch {
			anti = true
			break
		}
	}
	for j, n := range w.viewNode {
		anti = anti || (n >= 0 && len(w.memberAnti[j]) > 0)
	}
	if !terms && !anti {
		return // no pod with (anti-)affinity: upstream's PreFilter Skips
	}
	w.count(base)
	st := base.stateFor(m)
	for j, n := range w.viewNode {
		if n >= 0 {
			st.update(w.members[j], w.memberAnti[j], s.nodeLabels(n), 1)
		}
	}
	st.on = terms || len(st.existBase) > 0
	if st.on {
		d.topo = &topology{affinity: st}
	}
}

// topologyMove applies AddPod (sign 1) or RemovePod (-1) of pods, each on
// its node, to every placed member's topology plugins' state (a member
// of w.local's narrowed bookkeeping, to its node's pairs only:
// gang_reprieve.go); it marks w.affected the members a count they read
// moved for, whose checks may then change, and reports whether any.
func (w *gangWorld) topologyMove(pods []int32, sign int) bool {
	if !w.anyTopology {
		return false
	}
	s, moved := w.s, false
	if w.anyLocal {
		for _, p := range pods {
			w.localMove(p, sign)
		}
	}
	for i, n := range w.assignedTo {
		if n < 0 {
			continue
		}
		if d := w.dec[i]; d.topo != nil && !w.local[i].on {
			t := &d.topo.affinity
			for _, p := range pods {
				if t.update(s.pods[p], s.antiTerms[p], s.nodeLabels(s.podNode[p]), sign) {
					w.affected[i] = true
				}
			}
		}
		if g := w.spread[i]; g != nil {
			for _, p := range pods {
				if g.update(s, s.pods[p], s.podNode[p], sign) {
					w.affected[i] = true
				}
			}
		}
		moved = moved || w.affected[i]
	}
	return moved
}

// stubContribution adds to nom what member j's stub (the nominator's
// pod of the reference alone, reference/gang.go nominatorStub) counts for
// in member i's InterPodAffinity state on node n: no labels, no terms,
// so only a term whose selector matches every pod of its namespace sees
// it.
func (w *gangWorld) stubContribution(i, j int, n int32, nom *nodeUse) {
	d := w.dec[i]
	if d.topo == nil {
		return
	}
	m := w.members[j]
	stub := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID},
		Spec: v1.PodSpec{SchedulingGroup: m.Spec.SchedulingGroup}}
	k := d.topo.spread.counters()
	d.topo.affinity.contributePod(nom.topo[k:], stub, nil, w.s.nodeLabels(n), 1)
}

// memberAntiTerms are a member's required anti-affinity terms as an
// existing pod's (the snapshot's antiTerms).
func memberAntiTerms(m *v1.Pod) []fwk.AffinityTerm {
	terms := requiredTerms(m.Spec.Affinity, true)
	if len(terms) == 0 {
		return nil
	}
	out, _ := fwk.GetAffinityTerms(m, terms)
	return out
}
