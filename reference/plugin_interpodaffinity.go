package reference

import (
	"maps"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/preemptbench/preemptbench/preempt"
)

// interPodAffinity is upstream's InterPodAffinity as a filter: the incoming
// pod's required affinity and anti-affinity, and existing pods' required
// anti-affinity against it. PreFilter counts, per topology pair, the bound
// pods that match the pod's terms and those whose anti-affinity matches
// the pod; AddPod and RemovePod move these counts as the dry run removes
// victims and adds nominated pods.
type interPodAffinity struct{}

func (interPodAffinity) Name() string { return "InterPodAffinity" }

const (
	reasonAffinity         = "node(s) didn't match pod affinity rules"
	reasonAntiAffinity     = "node(s) didn't match pod anti-affinity rules"
	reasonExistingAntiAffn = "node(s) didn't satisfy existing pods anti-affinity rules"
)

// affinityTerm is upstream's fwk.AffinityTerm: a required term with its
// namespaces resolved.
type affinityTerm struct {
	namespaces  map[string]bool
	selector    labels.Selector
	nsSelector  labels.Selector
	topologyKey string
}

// matches is AffinityTerm.Matches: p is in one of the namespaces (or its
// namespace's labels match the namespace selector) and its labels match.
func (t affinityTerm) matches(p *v1.Pod, nsLabels labels.Set) bool {
	if t.namespaces[p.Namespace] || t.nsSelector.Matches(nsLabels) {
		return t.selector.Matches(labels.Set(p.Labels))
	}
	return false
}

// termsOf is upstream's GetAffinityTerms: with neither namespaces nor a
// namespace selector a term means the pod's own namespace. Terms whose
// selectors do not parse are dropped (the API server rejects them).
func termsOf(p *v1.Pod, v1Terms []v1.PodAffinityTerm) []affinityTerm {
	var out []affinityTerm
	for i := range v1Terms {
		t := &v1Terms[i]
		sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
		if err != nil {
			continue
		}
		nsSel, err := metav1.LabelSelectorAsSelector(t.NamespaceSelector)
		if err != nil {
			continue
		}
		ns := map[string]bool{}
		if len(t.Namespaces) == 0 && t.NamespaceSelector == nil {
			ns[p.Namespace] = true
		}
		for _, n := range t.Namespaces {
			ns[n] = true
		}
		out = append(out, affinityTerm{namespaces: ns, selector: sel, nsSelector: nsSel, topologyKey: t.TopologyKey})
	}
	return out
}

func requiredAffinity(p *v1.Pod) []v1.PodAffinityTerm {
	if a := p.Spec.Affinity; a != nil && a.PodAffinity != nil {
		return a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

func requiredAntiAffinity(p *v1.Pod) []v1.PodAffinityTerm {
	if a := p.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		return a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// incomingTerms are the preemptor's terms as PreFilter prepares them: a
// non-empty namespace selector is resolved against the cluster's
// Namespaces and becomes a list of names (mergeAffinityTermNamespacesIfNotEmpty).
func incomingTerms(ev *evaluator, p *v1.Pod, v1Terms []v1.PodAffinityTerm) []affinityTerm {
	terms := termsOf(p, v1Terms)
	for i := range terms {
		if terms[i].nsSelector.Empty() {
			continue
		}
		for _, ns := range ev.namespaces {
			if terms[i].nsSelector.Matches(labels.Set(ns.Labels)) {
				terms[i].namespaces[ns.Name] = true
			}
		}
		// v1.36 resolved a copy of the term (NamespaceSelectorResolved):
		// the names were added, the selector stayed.
		if ev.b.NamespaceSelectorResolved {
			terms[i].nsSelector = labels.Nothing()
		}
	}
	return terms
}

// namespaceLabels is GetNamespaceLabelsSnapshot: the labels of the pod's
// namespace, none when the cluster does not hold it.
func namespaceLabels(ev *evaluator, ns string) labels.Set {
	for _, n := range ev.namespaces {
		if n.Name == ns {
			return labels.Set(n.Labels)
		}
	}
	return nil
}

type topologyPair struct{ key, value string }

// topologyCounts is upstream's topologyToMatchedTermCount: pairs whose
// count falls to zero are deleted, so its length is the number of pairs
// with pods.
type topologyCounts map[topologyPair]int

// update adds delta to the pair of key on node, if the node has the key.
func (m topologyCounts) update(node *v1.Node, key string, delta int) {
	if v, ok := node.Labels[key]; ok {
		pair := topologyPair{key, v}
		m[pair] += delta
		if m[pair] == 0 {
			delete(m, pair)
		}
	}
}

// affinityState is the PreFilter state of InterPodAffinity for one pod.
type affinityState struct {
	affinity, anti []affinityTerm // the pod's required terms
	nsLabels       labels.Set     // the labels of the pod's namespace
	// affinityCounts: pods matching all of the pod's affinity terms, on
	// each term's pair; antiCounts: pods matching each anti-affinity term;
	// existingAntiCounts: pods whose required anti-affinity terms match
	// the pod.
	affinityCounts, antiCounts, existingAntiCounts topologyCounts
}

func (st *affinityState) clone() stateData {
	out := *st
	out.affinityCounts = maps.Clone(st.affinityCounts)
	out.antiCounts = maps.Clone(st.antiCounts)
	out.existingAntiCounts = maps.Clone(st.existingAntiCounts)
	return &out
}

// updateWithPod is upstream's: what pod p on node counts for, times delta.
func (st *affinityState) updateWithPod(pod, p *v1.Pod, node *v1.Node, delta int) {
	for _, t := range termsOf(p, requiredAntiAffinity(p)) {
		if t.matches(pod, st.nsLabels) {
			st.existingAntiCounts.update(node, t.topologyKey, delta)
		}
	}
	if podMatchesAll(st.affinity, p) {
		for _, t := range st.affinity {
			st.affinityCounts.update(node, t.topologyKey, delta)
		}
	}
	for _, t := range st.anti {
		// The pod's terms have their namespace selector resolved already.
		if t.matches(p, nil) {
			st.antiCounts.update(node, t.topologyKey, delta)
		}
	}
}

// PreFilter counts every bound pod; it skips when the pod has no required
// terms and no bound pod's required anti-affinity matches it (on a node
// with the term's topology key), as upstream's.
func (interPodAffinity) PreFilter(ev *evaluator, pod *v1.Pod) (stateData, bool) {
	st := &affinityState{
		affinity:           incomingTerms(ev, pod, requiredAffinity(pod)),
		anti:               incomingTerms(ev, pod, requiredAntiAffinity(pod)),
		nsLabels:           namespaceLabels(ev, pod.Namespace),
		affinityCounts:     topologyCounts{},
		antiCounts:         topologyCounts{},
		existingAntiCounts: topologyCounts{},
	}
	for _, n := range ev.nodes {
		for _, p := range ev.bound[n.Name] {
			st.updateWithPod(pod, p, n, 1)
		}
	}
	if len(st.existingAntiCounts) == 0 && len(st.affinity) == 0 && len(st.anti) == 0 {
		return nil, true
	}
	return st, false
}

func (interPodAffinity) AddPod(state stateData, pod, added *v1.Pod, s *nodeState) {
	state.(*affinityState).updateWithPod(pod, added, s.node, 1)
}

func (interPodAffinity) RemovePod(state stateData, pod, removed *v1.Pod, s *nodeState) {
	state.(*affinityState).updateWithPod(pod, removed, s.node, -1)
}

// Filter is upstream's: the pod's affinity, then its anti-affinity, then
// the existing pods' anti-affinity, on the node of s.
func (interPodAffinity) Filter(state stateData, pod *v1.Pod, s *nodeState) preempt.Status {
	st := state.(*affinityState)
	node := s.node
	// satisfyPodAffinity, with the first-pod-of-a-series exception: no pod
	// anywhere matches all terms, and the pod matches them itself.
	podsExist := true
	for _, t := range st.affinity {
		v, ok := node.Labels[t.topologyKey]
		if !ok {
			return unresolvable(reasonAffinity)
		}
		if st.affinityCounts[topologyPair{t.topologyKey, v}] <= 0 {
			podsExist = false
		}
	}
	if !podsExist && !(len(st.affinityCounts) == 0 && podMatchesAll(st.affinity, pod)) {
		return unresolvable(reasonAffinity)
	}
	for _, t := range st.anti {
		if v, ok := node.Labels[t.topologyKey]; ok && st.antiCounts[topologyPair{t.topologyKey, v}] > 0 {
			return preempt.Status{Code: preempt.Unschedulable, Reasons: []string{reasonAntiAffinity}}
		}
	}
	for k, v := range node.Labels {
		if st.existingAntiCounts[topologyPair{k, v}] > 0 {
			return preempt.Status{Code: preempt.Unschedulable, Reasons: []string{reasonExistingAntiAffn}}
		}
	}
	return preempt.Status{}
}

// podMatchesAll is podMatchesAllAffinityTerms: false for no terms.
func podMatchesAll(terms []affinityTerm, p *v1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for _, t := range terms {
		if !t.matches(p, nil) {
			return false
		}
	}
	return true
}
