package reference

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/preemptbench/preemptbench/preempt"
)

// PodTopologySpread, as upstream's plugin filters: the pod's
// DoNotSchedule constraints (the default profile's system default
// constraints are all ScheduleAnyway, so they never filter). Upstream
// counts matching pods per topology value in PreFilter and moves the counts
// with AddPod/RemovePod; the counts here are the same: PreFilter's from the
// bound pods, then the changes the caller made on the node being filtered
// (victims removed, nominated pods added) applied as AddPod/RemovePod
// apply them. Upstream counts a pod being deleted at PreFilter but not at
// AddPod/RemovePod, so removing a terminating victim lowers its domain's
// count; this reproduces that.

const (
	reasonSpread        = "node(s) didn't match pod topology spread constraints"
	reasonSpreadMissing = reasonSpread + " (missing required label)"
)

type spreadConstraint struct {
	maxSkew      int32
	topologyKey  string
	selector     labels.Selector
	minDomains   int32
	honorAffn    bool // nodeAffinityPolicy Honor (the default)
	honorTaints  bool // nodeTaintsPolicy Honor (default Ignore)
	requiredAffn nodeaffinity.RequiredNodeAffinity
}

// spreadState is PreFilter's state for one pod.
type spreadState struct {
	constraints []spreadConstraint
	// counts[i][value] is the number of matching pods in each domain of
	// constraint i; every eligible node's value is a domain.
	counts []map[string]int
}

// spreadConstraintsOf is filterTopologySpreadConstraints for DoNotSchedule,
// with matchLabelKeys merged into the selector.
func spreadConstraintsOf(pod *v1.Pod) []spreadConstraint {
	var out []spreadConstraint
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	for _, c := range pod.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable != v1.DoNotSchedule {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			continue // the API server rejects it
		}
		if len(c.MatchLabelKeys) > 0 {
			set := labels.Set{}
			for _, k := range c.MatchLabelKeys {
				if v, ok := pod.Labels[k]; ok {
					set[k] = v
				}
			}
			if len(set) > 0 {
				if reqs, ok := sel.Requirements(); ok {
					merged := labels.SelectorFromSet(set)
					for _, r := range reqs {
						merged = merged.Add(r)
					}
					sel = merged
				}
			}
		}
		sc := spreadConstraint{maxSkew: c.MaxSkew, topologyKey: c.TopologyKey, selector: sel, minDomains: 1,
			honorAffn: true, requiredAffn: required}
		if c.MinDomains != nil {
			sc.minDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			sc.honorAffn = *c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor
		}
		if c.NodeTaintsPolicy != nil {
			sc.honorTaints = *c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor
		}
		out = append(out, sc)
	}
	return out
}

// includes is matchNodeInclusionPolicies.
func (c spreadConstraint) includes(pod *v1.Pod, node *v1.Node) bool {
	if c.honorAffn {
		if ok, _ := c.requiredAffn.Match(node); !ok {
			return false
		}
	}
	if c.honorTaints {
		noScheduleOrExecute := func(t *v1.Taint) bool {
			return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
		}
		if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations, noScheduleOrExecute, false); untolerated {
			return false
		}
	}
	return true
}

func hasAllKeys(node *v1.Node, cs []spreadConstraint) bool {
	for _, c := range cs {
		if _, ok := node.Labels[c.topologyKey]; !ok {
			return false
		}
	}
	return true
}

// spreadStateFor is PreFilter: nil (Skip) when the pod has no DoNotSchedule
// constraint.
func (ev *evaluator) spreadStateFor(pod *v1.Pod) *spreadState {
	cs := spreadConstraintsOf(pod)
	if len(cs) == 0 {
		return nil
	}
	st := &spreadState{constraints: cs, counts: make([]map[string]int, len(cs))}
	for i := range cs {
		st.counts[i] = map[string]int{}
	}
	for _, n := range ev.nodes {
		if !hasAllKeys(n, cs) {
			continue
		}
		for i, c := range cs {
			if !c.includes(pod, n) {
				continue
			}
			count := 0
			if !c.selector.Empty() {
				for _, p := range ev.bound[n.Name] {
					if p.DeletionTimestamp == nil && p.Namespace == pod.Namespace && c.selector.Matches(labels.Set(p.Labels)) {
						count++
					}
				}
			}
			st.counts[i][n.Labels[c.topologyKey]] += count
		}
	}
	return st
}

// moved is what the changes on the node of s did to each constraint's
// count in that node's domain: AddPod for each pod s holds that the node's
// bound pods do not, RemovePod for each bound pod s no longer holds. Only
// that domain's count changes, and only when the node is one of the
// constraint's domains.
func (ev *evaluator) moved(st *spreadState, pod *v1.Pod, s *nodeState) []int {
	deltas := make([]int, len(st.constraints))
	node := s.node
	update := func(p *v1.Pod, delta int) {
		if p.Namespace != pod.Namespace || !hasAllKeys(node, st.constraints) {
			return
		}
		for i, c := range st.constraints {
			if c.selector.Matches(labels.Set(p.Labels)) && c.includes(pod, node) {
				deltas[i] += delta
			}
		}
	}
	bound := map[string]bool{}
	for _, p := range ev.bound[node.Name] {
		bound[podKey(p)] = true
		if s.pods[podKey(p)] == nil {
			update(p, -1)
		}
	}
	for k, p := range s.pods {
		if !bound[k] {
			update(p, 1)
		}
	}
	return deltas
}

// filterPodTopologySpread is the Filter on the node of s.
func (ev *evaluator) filterPodTopologySpread(pod *v1.Pod, s *nodeState, st *spreadState) preempt.Status {
	if st == nil {
		return preempt.Status{}
	}
	deltas := ev.moved(st, pod, s)
	self := labels.Set(pod.Labels)
	for i, c := range st.constraints {
		value, ok := s.node.Labels[c.topologyKey]
		if !ok {
			return unresolvable(reasonSpreadMissing)
		}
		counts := st.counts[i]
		count := counts[value] + deltas[i] // deltas[i] != 0 only when value is a domain
		minMatch := 0
		if len(counts) >= int(c.minDomains) {
			first := true
			for v, n := range counts {
				if v == value {
					n = count
				}
				if first || n < minMatch {
					minMatch, first = n, false
				}
			}
		}
		selfMatch := 0
		if c.selector.Matches(self) {
			selfMatch = 1
		}
		if count+selfMatch-minMatch > int(c.maxSkew) {
			return preempt.Status{Code: preempt.Unschedulable, Reasons: []string{reasonSpread}}
		}
	}
	return preempt.Status{}
}
