package optimized

import (
	"math"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/preemptbench/preemptbench/preempt"
)

// PodTopologySpread and InterPodAffinity as upstream's plugins keep them:
// PreFilter counts per topology pair, computed once per preemptor from
// the bound pods (newTopology), and, per checked node, the net change the
// check made there (nodeUse.topo: victims removed, nominated pods and
// reprieved pods added), applied as AddPod/RemovePod apply it.

var (
	reasonsSpread         = []string{"node(s) didn't match pod topology spread constraints"}
	reasonsSpreadMissing  = []string{"node(s) didn't match pod topology spread constraints (missing required label)"}
	reasonsAffinity       = []string{"node(s) didn't match pod affinity rules"}
	reasonsAntiAffinity   = []string{"node(s) didn't match pod anti-affinity rules"}
	reasonsExistingAntiAf = []string{"node(s) didn't satisfy existing pods anti-affinity rules"}
)

type pair struct{ key, value string }

// spreadC is one DoNotSchedule constraint with its PreFilter counts.
type spreadC struct {
	maxSkew, minDomains    int32
	key                    string
	selector               labels.Selector
	honorAffn, honorTaints bool
	selfMatch              int
	counts                 map[string]int // domain value -> matching pods
	// the two smallest counts, for the minimum with one domain changed
	min1Value, min2Value string
	min1, min2           int
}

// topology is the per-preemptor state; nil when neither plugin runs.
type topology struct {
	pod      *v1.Pod
	required nodeaffinity.RequiredNodeAffinity
	spread   []spreadC

	affinityOn     bool // InterPodAffinity did not Skip
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

// counters of nodeUse.topo: one per spread constraint, then the net count
// of pods matching every affinity term, one per anti-affinity key, one for
// existing pods' anti-affinity.
func (t *topology) counters() int { return len(t.spread) + 1 + len(t.antiKeys) + 1 }

func (t *topology) affCounter() int                      { return len(t.spread) }
func (t *topology) antiCounter(k int) int                { return len(t.spread) + 1 + k }
func (t *topology) existCounter() int                    { return len(t.spread) + 1 + len(t.antiKeys) }
func (s *Snapshot) nodeLabels(n int32) map[string]string { return s.nodes[n].Labels }

// newTopology is both plugins' PreFilter for pod on s; nil when both Skip.
func newTopology(s *Snapshot, pod *v1.Pod) *topology {
	t := &topology{pod: pod, required: nodeaffinity.GetRequiredNodeAffinity(pod)}
	t.prepareSpread(s)
	t.prepareAffinity(s)
	if len(t.spread) == 0 && !t.affinityOn {
		return nil
	}
	return t
}

func (t *topology) prepareSpread(s *Snapshot) {
	pod := t.pod
	for _, c := range pod.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable != v1.DoNotSchedule {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			continue
		}
		if len(c.MatchLabelKeys) > 0 {
			set := labels.Set{}
			for _, k := range c.MatchLabelKeys {
				if v, ok := pod.Labels[k]; ok {
					set[k] = v
				}
			}
			if reqs, ok := sel.Requirements(); ok && len(set) > 0 {
				merged := labels.SelectorFromSet(set)
				for _, r := range reqs {
					merged = merged.Add(r)
				}
				sel = merged
			}
		}
		sc := spreadC{maxSkew: c.MaxSkew, minDomains: 1, key: c.TopologyKey, selector: sel, honorAffn: true, counts: map[string]int{}}
		if c.MinDomains != nil {
			sc.minDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			sc.honorAffn = *c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor
		}
		if c.NodeTaintsPolicy != nil {
			sc.honorTaints = *c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor
		}
		if sel.Matches(labels.Set(pod.Labels)) {
			sc.selfMatch = 1
		}
		t.spread = append(t.spread, sc)
	}
	if len(t.spread) == 0 {
		return
	}
	for n := range int32(len(s.nodes)) {
		if !t.hasSpreadKeys(s, n) {
			continue
		}
		for i := range t.spread {
			c := &t.spread[i]
			if !t.includes(c, s.nodes[n]) {
				continue
			}
			count := 0
			if !c.selector.Empty() {
				for _, p := range s.boundOf[n] {
					if s.pods[p].DeletionTimestamp == nil && s.podNS[p] == pod.Namespace && c.selector.Matches(labels.Set(s.pods[p].Labels)) {
						count++
					}
				}
			}
			c.counts[s.nodes[n].Labels[c.key]] += count
		}
	}
	for i := range t.spread {
		c := &t.spread[i]
		c.min1, c.min2 = math.MaxInt, math.MaxInt
		for v, n := range c.counts {
			switch {
			case n < c.min1 || (n == c.min1 && v < c.min1Value):
				c.min2, c.min2Value = c.min1, c.min1Value
				c.min1, c.min1Value = n, v
			case n < c.min2 || (n == c.min2 && v < c.min2Value):
				c.min2, c.min2Value = n, v
			}
		}
	}
}

func (t *topology) hasSpreadKeys(s *Snapshot, n int32) bool {
	l := s.nodeLabels(n)
	for _, c := range t.spread {
		if _, ok := l[c.key]; !ok {
			return false
		}
	}
	return true
}

// includes is matchNodeInclusionPolicies.
func (t *topology) includes(c *spreadC, node *v1.Node) bool {
	if c.honorAffn {
		if ok, _ := t.required.Match(node); !ok {
			return false
		}
	}
	if c.honorTaints {
		noScheduleOrExecute := func(tn *v1.Taint) bool {
			return tn.Effect == v1.TaintEffectNoSchedule || tn.Effect == v1.TaintEffectNoExecute
		}
		if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, t.pod.Spec.Tolerations, noScheduleOrExecute, false); untolerated {
			return false
		}
	}
	return true
}

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
// preemptor's terms into namespace names, as PreFilter does.
func incomingTerms(s *Snapshot, pod *v1.Pod, terms []v1.PodAffinityTerm) []fwk.AffinityTerm {
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
		out[i].NamespaceSelector = labels.Nothing()
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

func (t *topology) prepareAffinity(s *Snapshot) {
	pod := t.pod
	t.aff = incomingTerms(s, pod, requiredTerms(pod.Spec.Affinity, false))
	t.anti = incomingTerms(s, pod, requiredTerms(pod.Spec.Affinity, true))
	for _, ns := range s.namespaces {
		if ns.Name == pod.Namespace {
			t.nsLabels = labels.Set(ns.Labels)
		}
	}
	if len(s.withAnti) == 0 && len(t.aff) == 0 && len(t.anti) == 0 {
		return // InterPodAffinity's PreFilter Skips
	}
	t.existBase = map[pair]int{}
	for _, p := range s.withAnti {
		l := s.nodeLabels(s.podNode[p])
		for _, e := range s.antiTerms[p] {
			if v, ok := l[e.TopologyKey]; ok && e.Matches(pod, t.nsLabels) {
				t.existBase[pair{e.TopologyKey, v}]++
			}
		}
	}
	t.affinityOn = len(t.existBase) > 0 || len(t.aff) > 0 || len(t.anti) > 0
	if !t.affinityOn {
		return
	}
	for _, term := range t.aff {
		k := indexOf(t.affKeys, term.TopologyKey)
		if k < 0 {
			t.affKeys, t.affMult = append(t.affKeys, term.TopologyKey), append(t.affMult, 0)
			k = len(t.affKeys) - 1
		}
		t.affMult[k]++
	}
	for _, term := range t.anti {
		k := indexOf(t.antiKeys, term.TopologyKey)
		if k < 0 {
			t.antiKeys = append(t.antiKeys, term.TopologyKey)
			k = len(t.antiKeys) - 1
		}
		t.antiOf = append(t.antiOf, k)
	}
	t.selfMatchesAll = matchesAll(t.aff, pod)
	t.affBase, t.antiBase = map[pair]int{}, map[pair]int{}
	for n := range int32(len(s.nodes)) {
		l := s.nodeLabels(n)
		for _, p := range s.boundOf[n] {
			e := s.pods[p]
			if matchesAll(t.aff, e) {
				for _, term := range t.aff {
					if v, ok := l[term.TopologyKey]; ok {
						t.affBase[pair{term.TopologyKey, v}]++
					}
				}
			}
			for i := range t.anti {
				if v, ok := l[t.anti[i].TopologyKey]; ok && t.anti[i].Matches(e, nil) {
					t.antiBase[pair{t.anti[i].TopologyKey, v}]++
				}
			}
		}
	}
	for _, c := range t.affBase {
		if c > 0 {
			t.affPairs++
		}
	}
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// contribute adds sign times what pod p on node n counts for to topo
// (AddPod/RemovePod of both plugins).
func (t *topology) contribute(s *Snapshot, topo []int32, n, p int32, sign int32) {
	e := s.pods[p]
	node := s.nodes[n]
	l := node.Labels
	if len(t.spread) > 0 && s.podNS[p] == t.pod.Namespace && t.hasSpreadKeys(s, n) {
		for i := range t.spread {
			c := &t.spread[i]
			if c.selector.Matches(labels.Set(e.Labels)) && t.includes(c, node) {
				topo[i] += sign
			}
		}
	}
	if !t.affinityOn {
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
	for _, term := range s.antiTerms[p] {
		if _, ok := l[term.TopologyKey]; ok && term.Matches(t.pod, t.nsLabels) {
			topo[t.existCounter()] += sign
		}
	}
}

// check runs PodTopologySpread then InterPodAffinity on node n, with the
// node's changes in u and, when nom is not nil, the nominated pods' too.
func (t *topology) check(s *Snapshot, n int32, u, nom *nodeUse) (preempt.Code, []string) {
	delta := func(i int) int {
		d := int(u.topo[i])
		if nom != nil {
			d += int(nom.topo[i])
		}
		return d
	}
	l := s.nodeLabels(n)
	for i := range t.spread {
		c := &t.spread[i]
		v, ok := l[c.key]
		if !ok {
			return preempt.UnschedulableAndUnresolvable, reasonsSpreadMissing
		}
		base, isDomain := c.counts[v]
		count := base + delta(i)
		minMatch := 0
		if len(c.counts) >= int(c.minDomains) {
			minMatch = c.min1
			if isDomain {
				if c.min1Value == v { // the node's domain changed: min of the others and it
					minMatch = c.min2
				}
				minMatch = min(minMatch, count)
			}
		}
		if count+c.selfMatch-minMatch > int(c.maxSkew) {
			return preempt.Unschedulable, reasonsSpread
		}
	}
	if !t.affinityOn {
		return preempt.Success, nil
	}
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
