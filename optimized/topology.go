package optimized

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

// The plugins with AddPod/RemovePod (PodTopologySpread and
// InterPodAffinity) keep counts as upstream's do: PreFilter counts per
// topology pair, computed once per preemptor from the bound pods, and, per
// checked node, the net change the check made there (nodeUse.topo: victims
// removed, nominated pods and reprieved pods added), applied as
// AddPod/RemovePod apply it. topology holds their states; each plugin
// owns a window of nodeUse.topo, in profile order.

type pair struct{ key, value string }

// topology is the stateful plugins' PreFilter state; nil when all Skip.
type topology struct {
	spread   spreadState   // plugin_podtopologyspread.go
	affinity affinityState // plugin_interpodaffinity.go
}

func (s *Snapshot) nodeLabels(n int32) map[string]string { return s.nodes[n].Labels }

// newTopology is the stateful plugins' PreFilter for pod on s; nil when
// all Skip.
func newTopology(s *Snapshot, pod *v1.Pod, b preempt.Behaviour) *topology {
	t := &topology{spread: newSpreadState(s, pod), affinity: newAffinityState(s, pod, b.NamespaceSelectorResolved)}
	if !t.spread.on() && !t.affinity.on {
		return nil
	}
	return t
}

// counters is the length of nodeUse.topo: each plugin's counters in turn.
func (t *topology) counters() int { return t.spread.counters() + t.affinity.counters() }

// contribute adds sign times what pod p on node n counts for to topo
// (every stateful plugin's AddPod/RemovePod).
func (t *topology) contribute(s *Snapshot, topo []int32, n, p int32, sign int32) {
	k := t.spread.counters()
	t.spread.contribute(s, topo[:k], n, p, sign)
	t.affinity.contribute(s, topo[k:], n, p, sign)
}

// check runs the stateful plugins' Filters in profile order on node n,
// with the node's changes in u and, when nom is not nil, the nominated
// pods' too.
func (t *topology) check(s *Snapshot, n int32, u, nom *nodeUse) (preempt.Code, []string) {
	k := t.spread.counters()
	var nomSpread, nomAffinity []int32
	if nom != nil {
		nomSpread, nomAffinity = nom.topo[:k], nom.topo[k:]
	}
	if t.spread.on() {
		if code, r := t.spread.filter(s, n, u.topo[:k], nomSpread); code != preempt.Success {
			return code, r
		}
	}
	return t.affinity.filter(s, n, u.topo[k:], nomAffinity)
}
