package reference

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/preemptbench/preemptbench/preempt"
)

// InterPodAffinity, as upstream's plugin filters: the incoming pod's
// required affinity and anti-affinity, and existing pods' required
// anti-affinity against it. Upstream keeps counts per topology pair in its
// PreFilter state and updates them with AddPod/RemovePod as the dry run
// removes victims and adds nominated pods; here the counts are recomputed
// from the pods in place: every other node's bound pods and the pods of
// the node state being filtered.

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
func (ev *evaluator) incomingTerms(p *v1.Pod, v1Terms []v1.PodAffinityTerm) []affinityTerm {
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
		terms[i].nsSelector = labels.Nothing()
	}
	return terms
}

// namespaceLabels is GetNamespaceLabelsSnapshot: the labels of the pod's
// namespace, none when the cluster does not hold it.
func (ev *evaluator) namespaceLabels(ns string) labels.Set {
	for _, n := range ev.namespaces {
		if n.Name == ns {
			return labels.Set(n.Labels)
		}
	}
	return nil
}

type topologyPair struct{ key, value string }

// affinityState is the PreFilter state of InterPodAffinity for one pod.
type affinityState struct {
	skip           bool // PreFilter returned Skip: the plugin does not run
	affinity, anti []affinityTerm
	nsLabels       labels.Set
}

// affinityStateFor is PreFilter: it skips when the pod has no required
// terms and no bound pod's required anti-affinity matches it (on a node
// with the term's topology key), as upstream decides from the snapshot
// before any nominated pod or victim is considered.
func (ev *evaluator) affinityStateFor(pod *v1.Pod) *affinityState {
	st := &affinityState{
		affinity: ev.incomingTerms(pod, requiredAffinity(pod)),
		anti:     ev.incomingTerms(pod, requiredAntiAffinity(pod)),
		nsLabels: ev.namespaceLabels(pod.Namespace),
	}
	if len(st.affinity) > 0 || len(st.anti) > 0 {
		return st
	}
	st.skip = true
	for _, n := range ev.nodes {
		for _, e := range ev.bound[n.Name] {
			for _, t := range ev.antiTermsOf(e) {
				if _, ok := n.Labels[t.topologyKey]; ok && t.matches(pod, st.nsLabels) {
					st.skip = false
				}
			}
		}
	}
	return st
}

// filterInterPodAffinity filters pod on the node of s, where s holds that
// node's pods as the caller has them (victims removed, nominated pods
// added); every other node holds its bound pods.
func (ev *evaluator) filterInterPodAffinity(pod *v1.Pod, s *nodeState, st *affinityState) preempt.Status {
	if st.skip {
		return preempt.Status{}
	}
	affinity := map[topologyPair]int{}
	anti := map[topologyPair]int{}
	existing := map[topologyPair]int{}
	count := func(m map[topologyPair]int, node *v1.Node, key string) {
		if v, ok := node.Labels[key]; ok {
			m[topologyPair{key, v}]++
		}
	}
	visit := func(e *v1.Pod, node *v1.Node) {
		if podMatchesAll(st.affinity, e) {
			for _, t := range st.affinity {
				count(affinity, node, t.topologyKey)
			}
		}
		for _, t := range st.anti {
			if t.matches(e, nil) {
				count(anti, node, t.topologyKey)
			}
		}
		for _, t := range ev.antiTermsOf(e) {
			if t.matches(pod, st.nsLabels) {
				count(existing, node, t.topologyKey)
			}
		}
	}
	for _, n := range ev.nodes {
		if n.Name == s.node.Name {
			for _, e := range s.pods {
				visit(e, n)
			}
			continue
		}
		for _, e := range ev.bound[n.Name] {
			visit(e, n)
		}
	}

	node := s.node
	// satisfyPodAffinity, with the first-pod-of-a-series exception: no pod
	// anywhere matches all terms, and the pod matches them itself.
	podsExist := true
	for _, t := range st.affinity {
		v, ok := node.Labels[t.topologyKey]
		if !ok {
			return unresolvable(reasonAffinity)
		}
		if affinity[topologyPair{t.topologyKey, v}] <= 0 {
			podsExist = false
		}
	}
	if !podsExist && !(len(affinity) == 0 && podMatchesAll(st.affinity, pod)) {
		return unresolvable(reasonAffinity)
	}
	for _, t := range st.anti {
		if v, ok := node.Labels[t.topologyKey]; ok && anti[topologyPair{t.topologyKey, v}] > 0 {
			return preempt.Status{Code: preempt.Unschedulable, Reasons: []string{reasonAntiAffinity}}
		}
	}
	for k, v := range node.Labels {
		if existing[topologyPair{k, v}] > 0 {
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

// antiTermsOf are pod p's required anti-affinity terms, parsed once per
// evaluator (upstream's PodInfo keeps them too).
func (ev *evaluator) antiTermsOf(p *v1.Pod) []affinityTerm {
	if len(requiredAntiAffinity(p)) == 0 {
		return nil
	}
	if t, ok := ev.antiTerms[p]; ok {
		return t
	}
	t := termsOf(p, requiredAntiAffinity(p))
	ev.antiTerms[p] = t
	return t
}
