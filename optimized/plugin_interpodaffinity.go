package optimized

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/preemptbench/preemptbench/preempt"
)

var (
	reasonsAffinity       = []string{"node(s) didn't match pod affinity rules"}
	reasonsAntiAffinity   = []string{"node(s) didn't match pod anti-affinity rules"}
	reasonsExistingAntiAf = []string{"node(s) didn't satisfy existing pods anti-affinity rules"}
)

// affinityState is InterPodAffinity's PreFilter state: the preemptor's
// required terms and upstream's three counts per topology pair from the
// bound pods; on is false when upstream's PreFilter Skips. Its counters in
// nodeUse.topo (see counters) are the net changes on the checked node.
type affinityState struct {
	pod            *v1.Pod
	on             bool
	aff, anti      []fwk.AffinityTerm
	nsLabels       labels.Set
	affKeys        []string // distinct topology keys of aff, and how many
	affMult        []int    // terms have each
	antiKeys       []string // distinct topology keys of anti
	antiOf         []int    // anti term -> index into antiKeys
	affBase        map[pair]int
	affPairs       int // pairs with a non-zero count in affBase
	antiBase       map[pair]int
	existBase      map[pair]int
	selfMatchesAll bool
}

// counters: the net count of pods matching every affinity term, one per
// anti-affinity key, one for existing pods' anti-affinity.
func (t *affinityState) counters() int { return 1 + len(t.antiKeys) + 1 }

func (t *affinityState) affCounter() int       { return 0 }
func (t *affinityState) antiCounter(k int) int { return 1 + k }
func (t *affinityState) existCounter() int     { return 1 + len(t.antiKeys) }

func requiredTerms(a *v1.Affinity, anti bool) []v1.PodAffinityTerm {
	switch {
	case a == nil:
		return nil
	case anti && a.PodAntiAffinity != nil:
		return a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	case !anti && a.PodAffinity != nil:
		return a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// incomingTerms resolves a non-empty namespace selector of the
// preemptor's terms into namespace names, as PreFilter does. With
// resolved (preempt.SwitchNamespaceSelectorResolved, v1.37) the selector
// is then cleared; v1.36 resolved a copy and kept the selector, which
// the Filter matches against no labels (so NotIn and DoesNotExist match
// every namespace).
func incomingTerms(s *Snapshot, pod *v1.Pod, terms []v1.PodAffinityTerm, resolved bool) []fwk.AffinityTerm {
	out, err := fwk.GetAffinityTerms(pod, terms)
	if err != nil {
		return nil
	}
	for i := range out {
		if out[i].NamespaceSelector.Empty() {
			continue
		}
		for _, ns := range s.namespaces {
			if out[i].NamespaceSelector.Matches(labels.Set(ns.Labels)) {
				out[i].Namespaces.Insert(ns.Name)
			}
		}
		if resolved {
			out[i].NamespaceSelector = labels.Nothing()
		}
	}
	return out
}

func matchesAll(terms []fwk.AffinityTerm, p *v1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(p, nil) {
			return false
		}
	}
	return true
}

// affinityTerms is the part of PreFilter that reads pod alone: its
// terms and its namespace's labels, no counts yet.
func affinityTerms(s *Snapshot, pod *v1.Pod, nsResolved bool) affinityState {
	st := affinityState{pod: pod}
	st.aff = incomingTerms(s, pod, requiredTerms(pod.Spec.Affinity, false), nsResolved)
	st.anti = incomingTerms(s, pod, requiredTerms(pod.Spec.Affinity, true), nsResolved)
	for _, ns := range s.namespaces {
		if ns.Name == pod.Namespace {
			st.nsLabels = labels.Set(ns.Labels)
		}
	}
	return st
}

// newAffinityState is PreFilter.
func newAffinityState(s *Snapshot, pod *v1.Pod, nsResolved bool) affinityState {
	st := affinityTerms(s, pod, nsResolved)
	if len(s.withAnti) == 0 && len(st.aff) == 0 && len(st.anti) == 0 {
		return st // upstream's PreFilter Skips
	}
	st.existBase = map[pair]int{}
	for _, p := range s.withAnti {
		l := s.nodeLabels(s.podNode[p])
		for _, e := range s.antiTerms[p] {
			if v, ok := l[e.TopologyKey]; ok && e.Matches(pod, st.nsLabels) {
				st.existBase[pair{e.TopologyKey, v}]++
			}
		}
	}
	st.on = len(st.existBase) > 0 || len(st.aff) > 0 || len(st.anti) > 0
	if !st.on {
		return st
	}
	st.indexTerms()
	st.affBase, st.antiBase = map[pair]int{}, map[pair]int{}
	for n := range int32(len(s.nodes)) {
		l := s.nodeLabels(n)
		for _, p := range s.boundOf[n] {
			e := s.pods[p]
			if matchesAll(st.aff, e) {
				for _, term := range st.aff {
					if v, ok := l[term.TopologyKey]; ok {
						st.affBase[pair{term.TopologyKey, v}]++
					}
				}
			}
			for i := range st.anti {
				if v, ok := l[st.anti[i].TopologyKey]; ok && st.anti[i].Matches(e, nil) {
					st.antiBase[pair{st.anti[i].TopologyKey, v}]++
				}
			}
		}
	}
	for _, c := range st.affBase {
		if c > 0 {
			st.affPairs++
		}
	}
	return st
}

// indexTerms sets the distinct topology keys of the terms.
func (st *affinityState) indexTerms() {
	for _, term := range st.aff {
		k := indexOf(st.affKeys, term.TopologyKey)
		if k < 0 {
			st.affKeys, st.affMult = append(st.affKeys, term.TopologyKey), append(st.affMult, 0)
			k = len(st.affKeys) - 1
		}
		st.affMult[k]++
	}
	for _, term := range st.anti {
		k := indexOf(st.antiKeys, term.TopologyKey)
		if k < 0 {
			st.antiKeys = append(st.antiKeys, term.TopologyKey)
			k = len(st.antiKeys) - 1
		}
		st.antiOf = append(st.antiOf, k)
	}
	st.selfMatchesAll = matchesAll(st.aff, st.pod)
}

// update is upstream's updateWithPod on the counts themselves
// (AddPod with sign 1, RemovePod with -1): what pod e, with required
// anti-affinity terms anti, on a node labelled l counts for. It reports
// whether a count moved.
func (t *affinityState) update(e *v1.Pod, anti []fwk.AffinityTerm, l map[string]string, sign int) bool {
	moved := false
	for _, term := range anti {
		if v, ok := l[term.TopologyKey]; ok && term.Matches(t.pod, t.nsLabels) {
			t.existBase[pair{term.TopologyKey, v}] += sign
			moved = true
		}
	}
	if matchesAll(t.aff, e) {
		for _, term := range t.aff {
			v, ok := l[term.TopologyKey]
			if !ok {
				continue
			}
			k := pair{term.TopologyKey, v}
			before := t.affBase[k]
			t.affBase[k] = before + sign
			switch {
			case before <= 0 && before+sign > 0:
				t.affPairs++
			case before > 0 && before+sign <= 0:
				t.affPairs--
			}
			moved = true
		}
	}
	for i := range t.anti {
		if v, ok := l[t.anti[i].TopologyKey]; ok && t.anti[i].Matches(e, nil) {
			t.antiBase[pair{t.anti[i].TopologyKey, v}] += sign
			moved = true
		}
	}
	return moved
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// contribute adds sign times what pod p on node n counts for to the
// plugin's counters (AddPod/RemovePod).
func (t *affinityState) contribute(s *Snapshot, topo []int32, n, p int32, sign int32) {
	t.contributePod(topo, s.pods[p], s.antiTerms[p], s.nodeLabels(n), sign)
}

// contributePod is contribute for pod e, with required anti-affinity
// terms anti, on a node labelled l: e need not be the snapshot's.
func (t *affinityState) contributePod(topo []int32, e *v1.Pod, anti []fwk.AffinityTerm, l map[string]string, sign int32) {
	if !t.on {
		return
	}
	if matchesAll(t.aff, e) {
		topo[t.affCounter()] += sign
	}
	for i := range t.anti {
		if _, ok := l[t.anti[i].TopologyKey]; ok && t.anti[i].Matches(e, nil) {
			topo[t.antiCounter(t.antiOf[i])] += sign
		}
	}
	for _, term := range anti {
		if _, ok := l[term.TopologyKey]; ok && term.Matches(t.pod, t.nsLabels) {
			topo[t.existCounter()] += sign
		}
	}
}

// filter is the Filter on node n with the node's counters u and, when nom
// is not nil, the nominated pods' too.
func (t *affinityState) filter(s *Snapshot, n int32, u, nom []int32) (preempt.Code, []string) {
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
		for k, key := range t.affKeys {
			v, ok := l[key]
			if !ok {
				return preempt.UnschedulableAndUnresolvable, reasonsAffinity
			}
			b := t.affBase[pair{key, v}]
			c := b + t.affMult[k]*m
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
		if v, ok := l[key]; ok && t.antiBase[pair{key, v}]+delta(t.antiCounter(k)) > 0 {
			return preempt.Unschedulable, reasonsAntiAffinity
		}
	}
	blocked := delta(t.existCounter())
	for k, v := range l {
		blocked += t.existBase[pair{k, v}]
	}
	if blocked > 0 {
		return preempt.Unschedulable, reasonsExistingAntiAf
	}
	return preempt.Success, nil
}
