package optimized

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/preemptbench/preemptbench/preempt"
)

// Upstream's reasons, word for word; these slices are shared and read-only.
var (
	reasonsNodeUnschedulable = []string{"node(s) were unschedulable"}
	reasonsNodeName          = []string{"node(s) didn't match the requested node name"}
	reasonsTaints            = []string{"node(s) had untolerated taint(s)"}
	reasonsNodeAffinity      = []string{"node(s) didn't match Pod's node affinity/selector"}
	reasonsNodePorts         = []string{"node(s) didn't have free ports for the requested pod ports"}
	reasonsNoVictims         = []string{"No preemption victims found for incoming pod"}
)

const reasonTooManyPods = "Too many pods"

// want is one resource the preemptor asks for: a dimension of the
// snapshot, or -1 for a scalar resource no node or pod of the cluster
// names (every node has none of it).
type want struct {
	dim    int32
	amount int64
	reason string
}

// decision holds what depends on the preemptor, computed once per request.
type decision struct {
	s        *Snapshot
	pod      *v1.Pod
	priority int32
	now      int64
	// wants lists cpu, memory, ephemeral storage, then scalars in name
	// order: the order of NodeResourcesFit's reasons. Only non-zero wants.
	wants []want
	// dims and amounts are wants' dimensions and amounts, flat, for the
	// hot loops; a scalar nothing in the cluster names maps to the zero
	// column.
	dims    []int32
	amounts []int64
	ports   []preempt.HostPort
	// node-level filters
	checkNodes         bool // some node-level filter can fail
	toleratesUnsched   bool
	affinity           nodeaffinity.RequiredNodeAffinity
	checkAffinity      bool
	resourceReasons    map[uint64][]string
	resourceReasonsBig bool // too many wants for a bit mask
	// topo is PodTopologySpread's and InterPodAffinity's PreFilter state,
	// nil when both Skip.
	topo *topology
}

func newDecision(s *Snapshot, pod *v1.Pod, now int64) *decision {
	d := &decision{s: s, pod: pod, priority: corev1helpers.PodPriority(pod), now: now, resourceReasons: map[uint64][]string{}}
	var r [fixedDims]int64
	var scalars []want
	for name, q := range preempt.IncomingPodRequests(pod) {
		switch name {
		case v1.ResourceCPU:
			r[dimCPU] = q.MilliValue()
		case v1.ResourceMemory:
			r[dimMemory] = q.Value()
		case v1.ResourceEphemeralStorage:
			r[dimEphemeral] = q.Value()
		default:
			if !preempt.IsScalarResource(name) || q.Value() == 0 {
				continue
			}
			dim, ok := s.scalarDims[name]
			if !ok {
				dim = -1
			}
			scalars = append(scalars, want{dim: dim, amount: q.Value(), reason: "Insufficient " + string(name)})
		}
	}
	for dim, reason := range [fixedDims]string{"Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage"} {
		if r[dim] > 0 {
			d.wants = append(d.wants, want{dim: int32(dim), amount: r[dim], reason: reason})
		}
	}
	sort.Slice(scalars, func(i, j int) bool { return scalars[i].reason < scalars[j].reason })
	d.wants = append(d.wants, scalars...)
	d.resourceReasonsBig = len(d.wants) > 62
	for _, w := range d.wants {
		dim := w.dim
		if dim < 0 {
			dim = int32(s.dims - 1) // the zero column
		}
		d.dims = append(d.dims, dim)
		d.amounts = append(d.amounts, w.amount)
	}
	d.ports = preempt.AppendHostPorts(nil, pod)

	d.toleratesUnsched = corev1helpers.TolerationsTolerateTaint(klog.Background(), pod.Spec.Tolerations,
		&v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}, false)
	d.checkAffinity = len(pod.Spec.NodeSelector) > 0 ||
		(pod.Spec.Affinity != nil && pod.Spec.Affinity.NodeAffinity != nil && pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil)
	if d.checkAffinity {
		d.affinity = nodeaffinity.GetRequiredNodeAffinity(pod)
	}
	d.checkNodes = d.checkAffinity || pod.Spec.NodeName != ""
	d.topo = newTopology(s, pod)
	return d
}

// nodeFilters runs NodeUnschedulable, NodeName, TaintToleration and
// NodeAffinity on node n; nil means they pass.
func (d *decision) nodeFilters(n int32) []string {
	if !d.checkNodes && !d.s.tainted[n] {
		return nil
	}
	node := d.s.nodes[n]
	if node.Spec.Unschedulable && !d.toleratesUnsched {
		return reasonsNodeUnschedulable
	}
	if d.pod.Spec.NodeName != "" && d.pod.Spec.NodeName != node.Name {
		return reasonsNodeName
	}
	if len(node.Spec.Taints) > 0 {
		noScheduleOrExecute := func(t *v1.Taint) bool {
			return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
		}
		if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, d.pod.Spec.Tolerations, noScheduleOrExecute, false); untolerated {
			return reasonsTaints
		}
	}
	if d.checkAffinity {
		if match, _ := d.affinity.Match(node); !match {
			return reasonsNodeAffinity
		}
	}
	return nil
}

// nodeUse is a node's state during a check: the requests of the preemptor's
// wanted dimensions in use, the pod count and, when the preemptor wants
// host ports, the ports in use.
type nodeUse struct {
	used  []int64 // per want
	pods  int64
	ports []preempt.HostPort // a set, as upstream's HostPortInfo
	node  int32              // the node checked
	topo  []int32            // net topology counters of the pods added and removed (see topology)
}

func (u *nodeUse) addPorts(ps []preempt.HostPort) {
	for _, p := range ps {
		found := false
		for _, q := range u.ports {
			if q == p {
				found = true
				break
			}
		}
		if !found {
			u.ports = append(u.ports, p)
		}
	}
}

func (u *nodeUse) removePorts(ps []preempt.HostPort) {
	for _, p := range ps {
		for i, q := range u.ports {
			if q == p {
				u.ports[i] = u.ports[len(u.ports)-1]
				u.ports = u.ports[:len(u.ports)-1]
				break
			}
		}
	}
}

func conflict(want preempt.HostPort, sets ...[]preempt.HostPort) bool {
	for _, set := range sets {
		for _, used := range set {
			if want.Conflicts(used) {
				return true
			}
		}
	}
	return false
}

// addPod and removePod apply pod p to u.
func (d *decision) addPod(u *nodeUse, p int32, sign int64) {
	base := int(p) * d.s.dims
	req := d.s.req[base : base+d.s.dims]
	used := u.used[:len(d.dims)]
	for i, dim := range d.dims {
		used[i] += sign * req[dim]
	}
	u.pods += sign
	if d.topo != nil {
		d.topo.contribute(d.s, u.topo, u.node, p, int32(sign))
	}
	if len(d.ports) > 0 {
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
	for _, w := range d.ports {
		if conflict(w, u.ports, nom.ports) {
			return preempt.Unschedulable, reasonsNodePorts, 0
		}
	}
	var mask uint64
	unresolvable := false
	if u.pods+nom.pods+1 > d.s.allowedPods[n] {
		mask |= 1 << 63
	}
	base := int(n) * d.s.dims
	alloc := d.s.alloc[base : base+d.s.dims]
	used, nomUsed := u.used[:len(d.dims)], nom.used[:len(d.dims)]
	for i, dim := range d.dims {
		a, amount := alloc[dim], d.amounts[i]
		if amount > a-(used[i]+nomUsed[i]) {
			mask |= 1 << i
			if amount > a {
				unresolvable = true
			}
		}
	}
	if mask == 0 {
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

// sumsFit is fits' code for node n as it is, with no nominated pod and
// no host port: NodeResourcesFit on the node's sums alone.
func (d *decision) sumsFit(n int32) preempt.Code {
	s := d.s
	base := int(n) * s.dims
	alloc, used := s.alloc[base:base+s.dims], s.requested[base:base+s.dims]
	code := preempt.Success
	if int64(len(s.boundOf[n]))+1 > s.allowedPods[n] {
		code = preempt.Unschedulable
	}
	for i, dim := range d.dims {
		a, amount := alloc[dim], d.amounts[i]
		if amount > a-used[dim] {
			if amount > a {
				return preempt.UnschedulableAndUnresolvable
			}
			code = preempt.Unschedulable
		}
	}
	return code
}

// reasons returns the interned reason list of a failure mask (bit 63: too
// many pods; bit i: want i). Not safe for concurrent use: the dry run calls
// it when committing, on one goroutine.
func (d *decision) reasons(mask uint64) []string {
	if r, ok := d.resourceReasons[mask]; ok && !d.resourceReasonsBig {
		return r
	}
	var r []string
	if mask&(1<<63) != 0 {
		r = append(r, reasonTooManyPods)
	}
	for i, w := range d.wants {
		if i < 63 && mask&(1<<i) != 0 {
			r = append(r, w.reason)
		}
	}
	if !d.resourceReasonsBig {
		d.resourceReasons[mask] = r
	}
	return r
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
