package optimized

import (
	"math"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/preemptbench/preemptbench/preempt"
)

var (
	reasonsSpread        = []string{"node(s) didn't match pod topology spread constraints"}
	reasonsSpreadMissing = []string{"node(s) didn't match pod topology spread constraints (missing required label)"}
)

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

// spreadState is PodTopologySpread's PreFilter state: the preemptor's
// DoNotSchedule constraints with the bound pods' counts; none when
// upstream's PreFilter Skips. Its counters in nodeUse.topo are one per
// constraint: the net change of the checked node's domain.
type spreadState struct {
	pod         *v1.Pod
	required    nodeaffinity.RequiredNodeAffinity
	constraints []spreadC
}

// on reports whether the plugin runs (upstream's PreFilter did not Skip).
func (st *spreadState) on() bool { return len(st.constraints) > 0 }

func (st *spreadState) counters() int { return len(st.constraints) }

func newSpreadState(s *Snapshot, pod *v1.Pod) spreadState {
	st := spreadConstraints(pod)
	if len(st.constraints) == 0 {
		return st
	}
	for n := range int32(len(s.nodes)) {
		if !st.hasKeys(s, n) {
			continue
		}
		for i := range st.constraints {
			c := &st.constraints[i]
			if !st.includes(c, s.nodes[n]) {
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
	for i := range st.constraints {
		c := &st.constraints[i]
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
	return st
}

// spreadConstraints is the part of PreFilter that reads pod alone: its
// DoNotSchedule constraints, with empty counts.
func spreadConstraints(pod *v1.Pod) spreadState {
	st := spreadState{pod: pod}
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
		st.constraints = append(st.constraints, sc)
	}
	st.required = nodeaffinity.GetRequiredNodeAffinity(pod)
	return st
}

func (st *spreadState) hasKeys(s *Snapshot, n int32) bool {
	l := s.nodeLabels(n)
	for _, c := range st.constraints {
		if _, ok := l[c.key]; !ok {
			return false
		}
	}
	return true
}

// includes is matchNodeInclusionPolicies.
func (st *spreadState) includes(c *spreadC, node *v1.Node) bool {
	if c.honorAffn {
		if ok, _ := st.required.Match(node); !ok {
			return false
		}
	}
	if c.honorTaints {
		noScheduleOrExecute := func(tn *v1.Taint) bool {
			return tn.Effect == v1.TaintEffectNoSchedule || tn.Effect == v1.TaintEffectNoExecute
		}
		if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, st.pod.Spec.Tolerations, noScheduleOrExecute, false); untolerated {
			return false
		}
	}
	return true
}

// contribute adds sign times what pod p on node n counts for to the
// plugin's counters (AddPod/RemovePod).
func (st *spreadState) contribute(s *Snapshot, topo []int32, n, p int32, sign int32) {
	if !st.on() || s.podNS[p] != st.pod.Namespace || !st.hasKeys(s, n) {
		return
	}
	e, node := s.pods[p], s.nodes[n]
	for i := range st.constraints {
		c := &st.constraints[i]
		if c.selector.Matches(labels.Set(e.Labels)) && st.includes(c, node) {
			topo[i] += sign
		}
	}
}

// filter is the Filter on node n with the node's counters u and, when nom
// is not nil, the nominated pods' too.
func (st *spreadState) filter(s *Snapshot, n int32, u, nom []int32) (preempt.Code, []string) {
	l := s.nodeLabels(n)
	for i := range st.constraints {
		c := &st.constraints[i]
		v, ok := l[c.key]
		if !ok {
			return preempt.UnschedulableAndUnresolvable, reasonsSpreadMissing
		}
		base, isDomain := c.counts[v]
		count := base + int(u[i])
		if nom != nil {
			count += int(nom[i])
		}
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
	return preempt.Success, nil
}
