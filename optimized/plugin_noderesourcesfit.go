package optimized

import (
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/podinfo"
	"github.com/preemptbench/preemptbench/preempt"
)

const reasonTooManyPods = "Too many pods"

// incomingRequests are the preemptor's requests as b's release computes
// them (preempt.SwitchResizedPodRequests: component-helpers v0.37 or
// v0.36).
func incomingRequests(pod *v1.Pod, b preempt.Behaviour) v1.ResourceList {
	if b.ResizedPodRequests {
		if l, ok := singleContainerRequests(pod); ok {
			return l
		}
		return podinfo.IncomingPodRequests(pod)
	}
	return podinfo.IncomingPodRequestsV036(pod)
}

// reqMode is how a snapshot computes the placed pods' requests: its
// zero value as the current release does.
type reqMode uint8

const (
	// reqV036: component-helpers v0.36's arithmetic
	// (preempt.SwitchResizedPodRequests off).
	reqV036 reqMode = 1 << iota
	// reqNoPodLevelResize: pod-level requests are the spec's
	// (preempt.SwitchPodLevelResizeRequests off).
	reqNoPodLevelResize
	reqModes = 4
)

// reqModeOf is b's reqMode.
func reqModeOf(b preempt.Behaviour) reqMode {
	var m reqMode
	if !b.ResizedPodRequests {
		m |= reqV036
	}
	if !b.PodLevelResizeRequests {
		m |= reqNoPodLevelResize
	}
	return m
}

// placedRequests are a placed pod's requests as the release computes
// them: m is the snapshot's Snapshot.reqs.
func placedRequests(p *v1.Pod, m reqMode) v1.ResourceList {
	switch podLevel := m&reqNoPodLevelResize == 0; {
	case m&reqV036 != 0:
		return podinfo.PlacedPodRequestsV036Gated(p, podLevel)
	case !podLevel:
		return podinfo.PlacedPodRequestsGated(p, false)
	}
	return podinfo.PlacedPodRequests(p)
}

// want is one resource the preemptor asks for: a dimension of the
// snapshot, or -1 for a scalar resource no node or pod of the cluster
// names (every node has none of it).
type want struct {
	dim    int32
	amount int64
	reason string
}

// nodeResourcesFitState is NodeResourcesFit's PreFilter state: the
// preemptor's requests. Its per-node state is nodeUse.used and
// nodeUse.pods, which decision.addPod keeps; the fused checks (fits,
// sumsFit, selectVictimsSimple) run its Filter.
type nodeResourcesFitState struct {
	// wants lists cpu, memory, ephemeral storage, then scalars in name
	// order: the order of the reasons. Only non-zero wants.
	wants []want
	// dims and amounts are wants' dimensions and amounts, flat, for the
	// hot loops; a scalar nothing in the cluster names maps to the zero
	// column.
	dims    []int32
	amounts []int64
	// reasonsOf interns the reason lists of failure masks (see reasons);
	// reasonsBig: too many wants for a bit mask.
	reasonsOf  map[uint64][]string
	reasonsBig bool
}

func newNodeResourcesFitState(s *Snapshot, pod *v1.Pod, b preempt.Behaviour) nodeResourcesFitState {
	var st nodeResourcesFitState
	var r [fixedDims]int64
	var scalars []want
	for name, q := range incomingRequests(pod, b) {
		switch name {
		case v1.ResourceCPU:
			r[dimCPU] = q.MilliValue()
		case v1.ResourceMemory:
			r[dimMemory] = q.Value()
		case v1.ResourceEphemeralStorage:
			r[dimEphemeral] = q.Value()
		default:
			if !podinfo.IsScalarResource(name) || q.Value() == 0 {
				continue
			}
			dim, ok := s.scalarDims[name]
			if !ok {
				if s.backedBy.Class(name) != nil {
					continue // no node advertises it: DynamicResources' on every node
				}
				dim = -1
			}
			scalars = append(scalars, want{dim: dim, amount: q.Value(), reason: "Insufficient " + string(name)})
		}
	}
	for dim, reason := range [fixedDims]string{"Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage"} {
		if r[dim] > 0 {
			st.wants = append(st.wants, want{dim: int32(dim), amount: r[dim], reason: reason})
		}
	}
	sort.Slice(scalars, func(i, j int) bool { return scalars[i].reason < scalars[j].reason })
	st.wants = append(st.wants, scalars...)
	st.reasonsBig = len(st.wants) > 62
	for _, w := range st.wants {
		dim := w.dim
		if dim < 0 {
			dim = int32(s.dims - 1) // the zero column
		}
		st.dims = append(st.dims, dim)
		st.amounts = append(st.amounts, w.amount)
	}
	return st
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
	for i, dim := range d.fit.dims {
		a, amount := alloc[dim], d.fit.amounts[i]
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
func (st *nodeResourcesFitState) reasons(mask uint64) []string {
	if r, ok := st.reasonsOf[mask]; ok && !st.reasonsBig {
		return r
	}
	var r []string
	if mask&(1<<63) != 0 {
		r = append(r, reasonTooManyPods)
	}
	for i, w := range st.wants {
		if i < 63 && mask&(1<<i) != 0 {
			r = append(r, w.reason)
		}
	}
	if !st.reasonsBig {
		if st.reasonsOf == nil {
			st.reasonsOf = map[uint64][]string{}
		}
		st.reasonsOf[mask] = r
	}
	return r
}
