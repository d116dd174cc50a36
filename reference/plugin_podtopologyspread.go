package reference

import (
	"maps"
	"math"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/preemptbench/preemptbench/preempt"
)

// podTopologySpread is upstream's PodTopologySpread as a filter: the pod's
// DoNotSchedule constraints (the default profile's system default
// constraints are all ScheduleAnyway, so they never filter). PreFilter
// counts the matching bound pods per topology value; AddPod and RemovePod
// move the count of the node's domain. PreFilter does not count a pod
// being deleted but AddPod/RemovePod do, as upstream's, so removing a
// terminating victim lowers its domain's count.
type podTopologySpread struct{}

func (podTopologySpread) Name() string { return "PodTopologySpread" }

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
	// paths[i] are upstream's criticalPaths of constraint i: the two
	// smallest counts as PreFilter saw them, then moved by AddPod and
	// RemovePod one domain at a time. Filter's global minimum is
	// paths[i][0], not the smallest count: once several domains have
	// grown (a gang's reprieve puts victims back across the cluster), a
	// domain dropped from the paths can be smaller than both (see
	// docs/upstream-findings.md).
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

func (s *spreadState) clone() stateData {
	out := &spreadState{constraints: s.constraints, counts: make([]map[string]int, len(s.counts)), paths: slices.Clone(s.paths)}
	for i, c := range s.counts {
		out.counts[i] = maps.Clone(c)
	}
	return out
}

// PreFilter skips a pod without DoNotSchedule constraints, as upstream's.
func (podTopologySpread) PreFilter(ev *evaluator, pod *v1.Pod) (stateData, bool) {
	cs := spreadConstraintsOf(pod)
	if len(cs) == 0 {
		return nil, true
	}
	st := &spreadState{constraints: cs, counts: make([]map[string]int, len(cs)), paths: make([]criticalPaths, len(cs))}
	// order[i] are constraint i's domains in the order upstream's
	// calPreFilterState inserts them into its map: first seen in the
	// snapshot's node list (treeOrder).
	order := make([][]string, len(cs))
	for i := range cs {
		st.counts[i] = map[string]int{}
	}
	for _, n := range ev.treeOrder() {
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
			value := n.Labels[c.topologyKey]
			if _, seen := st.counts[i][value]; !seen {
				order[i] = append(order[i], value)
			}
			st.counts[i][value] += count
		}
	}
	// Upstream builds the paths iterating its map, in an order Go leaves
	// to chance; pinned here to the insertion order, the one a small map
	// (eight domains or fewer) is iterated in most often
	// (docs/divergences.md).
	for i := range cs {
		st.paths[i] = newCriticalPaths()
		for _, value := range order[i] {
			st.paths[i].update(value, st.counts[i][value])
		}
	}
	return st, false
}

func (podTopologySpread) AddPod(state stateData, pod, added *v1.Pod, s *nodeState) {
	state.(*spreadState).updateWithPod(pod, added, s.node, 1)
}

func (podTopologySpread) RemovePod(state stateData, pod, removed *v1.Pod, s *nodeState) {
	state.(*spreadState).updateWithPod(pod, removed, s.node, -1)
}

// updateWithPod is upstream's: p, of the pod's namespace, on node counts in
// the node's domain of each constraint whose selector it matches, when the
// node is one of that constraint's domains (then the domain is already in
// the counts).
func (st *spreadState) updateWithPod(pod, p *v1.Pod, node *v1.Node, delta int) {
	if p.Namespace != pod.Namespace || !hasAllKeys(node, st.constraints) {
		return
	}
	for i, c := range st.constraints {
		if c.selector.Matches(labels.Set(p.Labels)) && c.includes(pod, node) {
			value := node.Labels[c.topologyKey]
			st.counts[i][value] += delta
			st.paths[i].update(value, st.counts[i][value])
		}
	}
}

// Filter checks the skew each constraint would have with the pod on the
// node of s: its domain's count, plus one if the pod matches the selector
// itself, minus the global minimum of the critical paths (zero while
// there are fewer domains than minDomains).
func (podTopologySpread) Filter(state stateData, pod *v1.Pod, s *nodeState) preempt.Status {
	st := state.(*spreadState)
	self := labels.Set(pod.Labels)
	for i, c := range st.constraints {
		value, ok := s.node.Labels[c.topologyKey]
		if !ok {
			return unresolvable(reasonSpreadMissing)
		}
		counts := st.counts[i]
		count := counts[value]
		minMatch := 0
		if len(counts) >= int(c.minDomains) {
			minMatch = st.paths[i][0].num
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
