package reference

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/draext"
	"github.com/preemptbench/preemptbench/preempt"
)

const reasonTooManyPods = "Too many pods"

// nodeResourcesFit is upstream's NodeResourcesFit: the node must have room
// for one more pod and for the pod's requests.
type nodeResourcesFit struct{}

func (nodeResourcesFit) Name() string { return "NodeResourcesFit" }

// nodeResourcesFitState is the pod's requests as the scheduler counts them
// for an incoming pod (computePodResourceRequest); it never changes.
type nodeResourcesFitState struct {
	requests resources
	// delegated are the extended resources a DeviceClass backs
	// (DRAExtendedResource, GA and locked on in v1.37): on a node that
	// does not advertise one (allocatable not above zero) Filter leaves
	// it to DynamicResources (shouldDelegateResourceToDRA).
	delegated map[v1.ResourceName]bool
}

func (s *nodeResourcesFitState) clone() stateData { return s }

func (nodeResourcesFit) PreFilter(ev *evaluator, pod *v1.Pod) (stateData, bool) {
	st := &nodeResourcesFitState{}
	st.requests.add(ev.incomingRequests(pod), 1)
	r := draext.NewResolver(ev.cluster.DeviceClasses)
	for name := range st.requests.scalar {
		if r.Class(name) != nil {
			if st.delegated == nil {
				st.delegated = map[v1.ResourceName]bool{}
			}
			st.delegated[name] = true
		}
	}
	return st, false
}

// Filter is upstream's fitsRequest: every insufficient resource is a
// reason; the status is UnschedulableAndUnresolvable when the pod asks for
// more of some resource than the node has at all, because no preemption
// can help then.
func (nodeResourcesFit) Filter(state stateData, _ *v1.Pod, s *nodeState) preempt.Status {
	var reasons []string
	unresolvable := false
	insufficient := func(name string, want, allocatable, requested int64) {
		if want > 0 && want > allocatable-requested {
			reasons = append(reasons, "Insufficient "+name)
			if want > allocatable {
				unresolvable = true
			}
		}
	}
	if int64(len(s.pods))+1 > s.allocated.allowedPods {
		reasons = append(reasons, reasonTooManyPods)
	}
	fit := state.(*nodeResourcesFitState)
	want := fit.requests
	insufficient(string(v1.ResourceCPU), want.milliCPU, s.allocated.milliCPU, s.requested.milliCPU)
	insufficient(string(v1.ResourceMemory), want.memory, s.allocated.memory, s.requested.memory)
	insufficient(string(v1.ResourceEphemeralStorage), want.ephemeralStorage, s.allocated.ephemeralStorage, s.requested.ephemeralStorage)
	for _, name := range want.scalarNames() {
		if fit.delegated[name] && !(s.allocated.scalar[name] > 0) {
			continue
		}
		insufficient(string(name), want.scalar[name], s.allocated.scalar[name], s.requested.scalar[name])
	}
	switch {
	case len(reasons) == 0:
		return preempt.Status{}
	case unresolvable:
		return preempt.Status{Code: preempt.UnschedulableAndUnresolvable, Reasons: reasons}
	default:
		return preempt.Status{Code: preempt.Unschedulable, Reasons: reasons}
	}
}
