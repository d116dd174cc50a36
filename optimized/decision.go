package optimized

import (
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"time"

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
	vols          *nodeVolumeLimitsState // NodeVolumeLimits; nil: Skip
	volumes       *volumeBindingState    // nil: VolumeBinding's PreFilter Skips
	// vol is VolumeRestrictions' and VolumeZone's state, and the volume
	// plugins' first PreFilter failure; nil when both Skip and no
	// PreFilter failed: the fast paths are off when it is set.
	vol *volumeStates
	// dra is DynamicResources' state, nil when its PreFilter Skips; it
	// reads clock (a claim's binding timeout) when dra.readsClock.
	dra   *dynamicResourcesState
	clock time.Time
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

func newDecision(s *Snapshot, pod *v1.Pod, now int64, clock time.Time, b preempt.Behaviour) *decision {
	d := newPlainDecision(s, pod, now, clock, b)
	d.topo = newTopology(s, pod, b)
	return d
}

// newPlainDecision is newDecision without the topology plugins' state,
// which the gang path makes over its own world (gang_affinity.go).
func newPlainDecision(s *Snapshot, pod *v1.Pod, now int64, clock time.Time, b preempt.Behaviour) *decision {
	d := &decision{s: s, pod: pod, priority: corev1helpers.PodPriority(pod), now: now, clock: clock, b: b,
		unschedulable: newNodeUnschedulableState(pod),
		nodeAffinity:  newNodeAffinityState(pod),
		ports:         newNodePortsState(pod),
		fit:           newNodeResourcesFitState(s, pod, b),
		vols:          newNodeVolumeLimitsState(s, pod, b),
		volumes:       newVolumeBindingState(s, pod),
		dra:           newDynamicResourcesState(s, pod, clock),
	}
	// VolumeBinding's PreFilter failure fails every node in nodeFilters;
	// its Filter runs after NodeResourcesFit (fits). DynamicResources'
	// failure also fails every node there, and the FilterCodes shortcut
	// does not check it.
	d.checkNodes = d.nodeName.mayFail(pod) || d.nodeAffinity.mayFail() || (d.volumes != nil && d.volumes.rejected != nil) || d.dra != nil
	if len(pod.Spec.Volumes) > 0 {
		d.vol = newVolumeStates(s, pod, d.volumes)
	}
	return d
}

// volumeStates are the volume plugins' PreFilter states, in the profile's
// order, and the first PreFilter failure (the zero Status when none
// failed), every node's status then.
type volumeStates struct {
	restrictions       volumeRestrictionsState
	zone               volumeZoneState
	preFilter          preempt.Status
	restrictionsFailed bool // preFilter is VolumeRestrictions'
}

// newVolumeStates runs the volume plugins' PreFilter up to the first
// failure, in the profile's order (VolumeRestrictions, NodeVolumeLimits,
// which never fails there, VolumeBinding, whose state binding is, and
// VolumeZone); nil when every one Skips.
func newVolumeStates(s *Snapshot, pod *v1.Pod, binding *volumeBindingState) *volumeStates {
	return newVolumeStatesIn(s, pod, binding, nil, nil)
}

// newVolumeStatesIn is newVolumeStates on a world whose bound pods are
// those of s bound says (nil: all) and the pods extra
// (newVolumeRestrictionsStateIn).
func newVolumeStatesIn(s *Snapshot, pod *v1.Pod, binding *volumeBindingState, bound func(int32) bool, extra []*v1.Pod) *volumeStates {
	v := &volumeStates{}
	if v.restrictions, v.preFilter = newVolumeRestrictionsStateIn(s, pod, bound, extra); !v.preFilter.IsSuccess() {
		v.restrictionsFailed = true
		return v
	}
	if binding != nil && binding.rejected != nil {
		v.preFilter = preempt.Status{Code: binding.rejectedCode, Reasons: binding.rejected}
		return v
	}
	if v.zone, v.preFilter = newVolumeZoneState(s, pod); !v.preFilter.IsSuccess() {
		return v
	}
	if !v.restrictions.check && !v.zone.on() {
		return nil
	}
	return v
}

// removePodFailure is the dry run's status of a node with a potential
// victim after a PreFilter failure (which kube-scheduler never preempts
// on, but a request's codes may ask for): the framework then runs RemovePod
// of every plugin with PreFilterExtensions but those that Skipped before
// the failure, and the first whose state PreFilter did not write fails:
// VolumeRestrictions' when its own PreFilter failed, PodTopologySpread's
// when a later one did (reference/framework.go removePodFailure).
func (v *volumeStates) removePodFailure() []string {
	if v.preFilter.Code == preempt.Error {
		// A PreFilter error ends upstream's request before any node: the
		// error is the PreFilter's.
		return v.preFilter.Reasons
	}
	if v.restrictionsFailed {
		return reasonsRemovePodVolumeRestrictions
	}
	return reasonsRemovePodPodTopologySpread
}

var (
	reasonsRemovePodVolumeRestrictions = []string{`running RemovePod on PreFilter plugin "VolumeRestrictions": cannot read "PreFilterVolumeRestrictions" from cycleState`}
	reasonsRemovePodPodTopologySpread  = []string{`running RemovePod on PreFilter plugin "PodTopologySpread": reading "PreFilterPodTopologySpread" from cycleState: not found`}
)

// preFilterFailed is the volume plugins' PreFilter failure, nil when none.
func (d *decision) preFilterFailed() *preempt.Status {
	if d.vol == nil || d.vol.preFilter.IsSuccess() {
		return nil
	}
	return &d.vol.preFilter
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
	if d.dra != nil && d.dra.rejected != nil { // DynamicResources' PreFilter failed
		return d.dra.rejected
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
	disk  int32              // VolumeRestrictions: pods with a conflicting disk
	rwop  int32              // VolumeRestrictions: ReadWriteOncePod references moved
	topo  []int32            // topology: see topology.counters
	vols  []volCount         // NodeVolumeLimits, when it runs
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
	if d.vols != nil {
		u.addVolumes(d.vols.x, p, sign)
	}
	if d.ports.on() {
		ps := d.s.ports[d.s.portStart[p]:d.s.portStart[p+1]]
		if sign > 0 {
			u.addPorts(ps)
		} else {
			u.removePorts(ps)
		}
	}
	if d.vol != nil {
		d.vol.restrictions.addPod(u, p, int32(sign))
	}
}

// fits runs NodePorts, NodeResourcesFit, the volume plugins
// (VolumeRestrictions, NodeVolumeLimits, VolumeZone, in the profile's
// order) and the topology plugins on node n in state u plus the
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
		if v := d.vol; v != nil && v.restrictions.check {
			if r := v.restrictions.filter(u, nom); r != nil {
				return preempt.Unschedulable, r, 0
			}
		}
		if d.vols != nil {
			if code, r := d.vols.filter(n, u, nom); code != preempt.Success {
				return code, r, 0
			}
		}
		if d.volumes != nil { // VolumeBinding
			if code, r := d.volumes.filter(n); code != preempt.Success {
				return code, r, 0
			}
		}
		if v := d.vol; v != nil && v.zone.on() {
			if r := v.zone.filter(d.s.nodes[n]); r != nil {
				return preempt.UnschedulableAndUnresolvable, r, 0
			}
		}
		if d.topo != nil {
			// PodTopologySpread and InterPodAffinity follow
			// NodeResourcesFit; with nominated pods counted, then, as
			// upstream's second pass, without them (a nominated pod may be
			// what satisfies affinity).
			if code, r := d.topo.check(d.s, n, u, nom); code != preempt.Success {
				return code, r, 0
			}
		} else if d.topoPending {
			// FilterCodes makes the topology state and checks n again:
			// DynamicResources runs after the topology plugins.
			return preempt.Success, nil, 0
		}
		if d.dra != nil { // DynamicResources, last
			if code, r := d.dra.filter(n); code != preempt.Success {
				return code, r, 0
			}
		}
		// Upstream's second pass, every filter again without the
		// nominated pods, after the first passed: only those a nominated
		// pod can make pass can fail now, in profile order.
		// NodeVolumeLimits: a nominated pod holding the preemptor's
		// volume makes it no new volume (found by the Volumes property:
		// a CSINode allowing 0 volumes, a nominated pod using the
		// preemptor's claim). Then the topology plugins.
		if nom.pods > 0 {
			if d.vols != nil && len(nom.vols) > 0 {
				if code, r := d.vols.filter(n, u, &noNominated); code != preempt.Success {
					return code, r, 0
				}
			}
			if d.topo != nil {
				if code, r := d.topo.check(d.s, n, u, nil); code != preempt.Success {
					return code, r, 0
				}
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

// noNominated is the nominated pods' use of a node when none counts
// (upstream's second pass); read only.
var noNominated nodeUse

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
