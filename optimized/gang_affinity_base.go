package optimized

import (
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A gang's members are mostly alike: the same namespace, labels and
// required (anti-)affinity terms (a workload's pod template). Their
// InterPodAffinity PreFilters over the world (gangPreFilter) then differ
// only by the members placed before each: the terms, and the counts of the
// world's bound pods, are made once per request for each kind of member
// (affinityBase) and each member's state starts from a copy of them.

// affinityBase is what gangPreFilter makes of the world for a kind of
// member: its terms (affinityTerms, then indexTerms) and, once counted,
// the three counts of the world's live bound pods without the placed
// members.
type affinityBase struct {
	rep     *v1.Pod // the first member of the kind
	st      affinityState
	counted bool
}

// affinityBaseOf is member i's kind's base, its terms made (the
// request's: setMembers empties w.bases).
func (w *gangWorld) affinityBaseOf(i int) *affinityBase {
	m := w.members[i]
	for _, b := range w.bases {
		if sameAffinityInputs(b.rep, m) {
			return b
		}
	}
	b := &affinityBase{rep: m, st: affinityTerms(w.s, m, w.dec[i].b.NamespaceSelectorResolved)}
	w.bases = append(w.bases, b)
	return b
}

// count makes b's counts over the world's live bound pods: all of them
// when the kind has terms, else only those with anti-affinity.
func (w *gangWorld) count(b *affinityBase) {
	if b.counted {
		return
	}
	b.counted = true
	s, st := w.s, &b.st
	st.existBase, st.affBase, st.antiBase = map[pair]int{}, map[pair]int{}, map[pair]int{}
	st.indexTerms()
	if len(st.aff) > 0 || len(st.anti) > 0 {
		for n := range int32(len(s.nodes)) {
			l := s.nodeLabels(n)
			for _, p := range s.boundOf[n] {
				if w.gone[p] != w.epoch {
					st.update(s.pods[p], s.antiTerms[p], l, 1)
				}
			}
		}
		return
	}
	// Only the existing pods' anti-affinity can count.
	for _, p := range s.withAnti {
		if w.gone[p] != w.epoch {
			st.update(s.pods[p], s.antiTerms[p], s.nodeLabels(s.podNode[p]), 1)
		}
	}
}

// stateFor is a copy of b's counted state for member m (of b's kind).
func (b *affinityBase) stateFor(m *v1.Pod) affinityState {
	st := b.st
	st.pod = m
	st.existBase, st.affBase, st.antiBase = maps.Clone(b.st.existBase), maps.Clone(b.st.affBase), maps.Clone(b.st.antiBase)
	return st
}

// sameAffinityInputs reports whether InterPodAffinity's PreFilter reads
// the same of a and b: namespace, labels, required affinity and
// anti-affinity terms.
func sameAffinityInputs(a, b *v1.Pod) bool {
	if a == b {
		return true
	}
	if a.Namespace != b.Namespace || !maps.Equal(a.Labels, b.Labels) {
		return false
	}
	return sameTerms(requiredTerms(a.Spec.Affinity, false), requiredTerms(b.Spec.Affinity, false)) &&
		sameTerms(requiredTerms(a.Spec.Affinity, true), requiredTerms(b.Spec.Affinity, true))
}

// sameTerms reports whether a and b are the same terms, field by field
// (TestSameTermsCoversEveryField keeps the fields counted): a nil list or
// map and an empty one are the same, as for the API.
func sameTerms(a, b []v1.PodAffinityTerm) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.TopologyKey != y.TopologyKey || !slices.Equal(x.Namespaces, y.Namespaces) ||
			!slices.Equal(x.MatchLabelKeys, y.MatchLabelKeys) || !slices.Equal(x.MismatchLabelKeys, y.MismatchLabelKeys) ||
			!sameSelector(x.LabelSelector, y.LabelSelector) || !sameSelector(x.NamespaceSelector, y.NamespaceSelector) {
			return false
		}
	}
	return true
}

func sameSelector(a, b *metav1.LabelSelector) bool {
	if a == nil || b == nil {
		return a == b
	}
	if !maps.Equal(a.MatchLabels, b.MatchLabels) || len(a.MatchExpressions) != len(b.MatchExpressions) {
		return false
	}
	for i := range a.MatchExpressions {
		x, y := &a.MatchExpressions[i], &b.MatchExpressions[i]
		if x.Key != y.Key || x.Operator != y.Operator || !slices.Equal(x.Values, y.Values) {
			return false
		}
	}
	return true
}
