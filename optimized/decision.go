package optimized

import (
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/internal/podinfo"
	"github.com/preemptbench/preemptbench/preempt"
)

var reasonsNoVictims = []string{"No preemption victims found for incoming pod"}

// decision holds what depends on the preemptor, computed once per request:
// each filter plugin's PreFilter state, in the default profile's order,
// one type per plugin in plugin_<name>.go. The checks that run them are
// fused, for speed: nodeFilters (the node-level plugins), addPod (every
// AddPod and RemovePod), fits (NodePorts, NodeResourcesFit, then the
// topology plugins), and the fast paths sumsFit and selectVictimsSimple
// for a preemptor only NodeResourcesFit can refuse.
type decision struct {
	s        *Snapshot
	pod      *v1.Pod
	priority int32
	now      int64
	// b is the release behaviour the decision reproduces
	// (preempt.Config.Behaviour): the incoming pod's requests and
	// affinity terms, and the PDB counting, depend on it.
	b preempt.Behaviour

	// checkNodes: some node-level plugin can fail on an untainted node
	// (next to the one-byte state below, so that both share a word).
	checkNodes bool

	unschedulable nodeUnschedulableState
	nodeName      nodeNameState
	taints        taintTolerationState
	nodeAffinity  nodeAffinityState
	ports         nodePortsState
	fit           nodeResourcesFitState
	volumes       *volumeBindingState // nil: VolumeBinding's PreFilter Skips
	// topo is the state of the plugins with AddPod/RemovePod
	// (PodTopologySpread, InterPodAffinity), nil when all Skip.
	topo *topology
	// topoPending: topo is not made yet (FilterCodes makes it on the
	// first node that passes every filter before them; lazytopo.go).
	topoPending bool
	// groups is the request's pod-group view (podgroup.go), nil when
	// every pod is a plain victim.
	groups *groupView
}

func newDecision(s *Snapshot, pod *v1.Pod, now int64, b preempt.Behaviour) *decision {
	d := newPlainDecision(s, pod, now, b)
	d.topo = newTopology(s, pod, b)
	return d
}

// newPlainDecision is newDecision without the topology plugins' state,
// which the gang path makes over its own world (gang_affinity.go).
func newPlainDecision(s *Snapshot, pod *v1.Pod, now int64, b preempt.Behaviour) *decision {
	d := &decision{s: s, pod: pod, priority: corev1helpers.PodPriority(pod), now: now, b: b,
		unschedulable: newNodeUnschedulableState(pod),
		nodeAffinity:  newNodeAffinityState(pod),
		ports:         newNodePortsState(pod),
		fit:           newNodeResourcesFitState(s, pod, b),
		volumes:       newVolumeBindingState(s, pod),
	}
	d.checkNodes = d.nodeName.mayFail(pod) || d.nodeAffinity.mayFail() || d.volumes != nil
	return d
}

// nodeFilters runs NodeName, NodeUnschedulable, TaintToleration and
// NodeAffinity on node n, in v1.37's profile order; nil means they pass.
// NodeUnschedulable and TaintToleration can fail only on a tainted node.
func (d *decision) nodeFilters(n int32) []string {
	if !d.checkNodes && !d.s.tainted[n] {
		return nil
	}
	if d.volumes != nil && d.volumes.rejected != nil { // VolumeBinding's PreFilter failed
		return d.volumes.rejected
	}
	node := d.s.nodes[n]
	if r := d.nodeName.filter(d.pod, node); r != nil {
		return r
	}
	if r := d.unschedulable.filter(node); r != nil {
		return r
	}
	if r := d.taints.filter(d.pod, node); r != nil {
		return r
	}
	return d.nodeAffinity.filter(node)
}

// nodeUse is a node's state during a check, what each plugin reads of it:
// for NodeResourcesFit the requests of the preemptor's wanted dimensions in
// use and the pod count; for NodePorts, when it runs, the ports in use; for
// the topology plugins the net counters of the pods added and removed.
type nodeUse struct {
	node  int32              // the node checked
	used  []int64            // NodeResourcesFit: per want
	pods  int64              // NodeResourcesFit
	ports []podinfo.HostPort // NodePorts: a set, as upstream's HostPortInfo
	topo  []int32            // topology: see topology.counters
}

// addPod applies pod p to u with sign 1 and takes it off with sign -1:
// every plugin's AddPod or RemovePod.
func (d *decision) addPod(u *nodeUse, p int32, sign int64) {
	base := int(p) * d.s.dims
	req := d.s.req[base : base+d.s.dims]
	used := u.used[:len(d.fit.dims)]
	for i, dim := range d.fit.dims {
		used[i] += sign * req[dim]
	}
	u.pods += sign
	if d.topo != nil {
		d.topo.contribute(d.s, u.topo, u.node, p, int32(sign))
	}
	if d.ports.on() {
		ps := d.s.ports[d.s.portStart[p]:d.s.portStart[p+1]]
		if sign > 0 {
			u.addPorts(ps)
		} else {
			u.removePorts(ps)
		}
	}
}

// fits runs NodePorts then NodeResourcesFit on node n in state u plus the
// nominated pods nom; it returns the failing code and either fixed reasons
// or NodeResourcesFit's failure mask (see reasons). It only reads d, so
// workers may call it concurrently.
func (d *decision) fits(n int32, u, nom *nodeUse) (preempt.Code, []string, uint64) {
	if r := d.ports.filter(u, nom); r != nil {
		return preempt.Unschedulable, r, 0
	}
	var mask uint64
	unresolvable := false
	if u.pods+nom.pods+1 > d.s.allowedPods[n] {
		mask |= 1 << 63
	}
	base := int(n) * d.s.dims
	alloc := d.s.alloc[base : base+d.s.dims]
	used, nomUsed := u.used[:len(d.fit.dims)], nom.used[:len(d.fit.dims)]
	for i, dim := range d.fit.dims {
		a, amount := alloc[dim], d.fit.amounts[i]
		if amount > a-(used[i]+nomUsed[i]) {
			mask |= 1 << i
			if amount > a {
				unresolvable = true
			}
		}
	}
	if mask == 0 {
		if d.volumes != nil { // VolumeBinding
			if code, r := d.volumes.filter(n); code != preempt.Success {
				return code, r, 0
			}
		}
		if d.topo == nil {
			return preempt.Success, nil, 0
		}
		// PodTopologySpread and InterPodAffinity follow NodeResourcesFit;
		// with nominated pods counted, then, as upstream's second pass,
		// without them (a nominated pod may be what satisfies affinity).
		if code, r := d.topo.check(d.s, n, u, nom); code != preempt.Success {
			return code, r, 0
		}
		if nom.pods > 0 {
			if code, r := d.topo.check(d.s, n, u, nil); code != preempt.Success {
				return code, r, 0
			}
		}
		return preempt.Success, nil, 0
	}
	code := preempt.Unschedulable
	if unresolvable {
		code = preempt.UnschedulableAndUnresolvable
	}
	return code, nil, mask
}

// moreImportant orders pods by priority (high first), start time (early
// first; none means now), namespace, name and UID.
func (d *decision) moreImportant(a, b int32) bool {
	s := d.s
	if s.priority[a] != s.priority[b] {
		return s.priority[a] > s.priority[b]
	}
	ta, tb := d.now, d.now
	if s.hasStart[a] {
		ta = s.startNanos[a]
	}
	if s.hasStart[b] {
		tb = s.startNanos[b]
	}
	if ta != tb {
		return ta < tb
	}
	if s.podNS[a] != s.podNS[b] {
		return s.podNS[a] < s.podNS[b]
	}
	if s.podName[a] != s.podName[b] {
		return s.podName[a] < s.podName[b]
	}
	return s.podUID[a] < s.podUID[b]
}

// sortByImportance is an insertion sort: victim lists are short and this
// allocates nothing.
func (d *decision) sortByImportance(ps []int32) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && d.moreImportant(ps[j], ps[j-1]); j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}
