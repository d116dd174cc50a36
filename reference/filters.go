package reference

import (
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/preemptbench/preemptbench/preempt"
)

// Upstream's reasons, word for word.
const (
	reasonNodeUnschedulable = "node(s) were unschedulable"
	reasonNodeName          = "node(s) didn't match the requested node name"
	reasonTaints            = "node(s) had untolerated taint(s)"
	reasonNodeAffinity      = "node(s) didn't match Pod's node affinity/selector"
	reasonNodePorts         = "node(s) didn't have free ports for the requested pod ports"
	reasonTooManyPods       = "Too many pods"
	reasonNoVictims         = "No preemption victims found for incoming pod"
)

// runNodeFilters runs upstream's node-level default filters, in the default profile's
// order, and returns the first failure.
func runNodeFilters(pod *v1.Pod, s *nodeState) preempt.Status {
	for _, f := range []func(*v1.Pod, *nodeState) preempt.Status{
		filterNodeUnschedulable, filterNodeName, filterTaintToleration, filterNodeAffinity,
		filterNodePorts, filterNodeResourcesFit,
	} {
		if st := f(pod, s); !st.IsSuccess() {
			return st
		}
	}
	return preempt.Status{Code: preempt.Success}
}

func unresolvable(reason string) preempt.Status {
	return preempt.Status{Code: preempt.UnschedulableAndUnresolvable, Reasons: []string{reason}}
}

func filterNodeUnschedulable(pod *v1.Pod, s *nodeState) preempt.Status {
	if !s.node.Spec.Unschedulable {
		return preempt.Status{}
	}
	taint := &v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}
	if corev1helpers.TolerationsTolerateTaint(klog.Background(), pod.Spec.Tolerations, taint, false) {
		return preempt.Status{}
	}
	return unresolvable(reasonNodeUnschedulable)
}

func filterNodeName(pod *v1.Pod, s *nodeState) preempt.Status {
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != s.node.Name {
		return unresolvable(reasonNodeName)
	}
	return preempt.Status{}
}

func filterTaintToleration(pod *v1.Pod, s *nodeState) preempt.Status {
	noScheduleOrExecute := func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
	}
	if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), s.node.Spec.Taints, pod.Spec.Tolerations, noScheduleOrExecute, false); untolerated {
		return unresolvable(reasonTaints)
	}
	return preempt.Status{}
}

func filterNodeAffinity(pod *v1.Pod, s *nodeState) preempt.Status {
	// Upstream ignores parsing errors here; the loader rejects them earlier.
	if match, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(s.node); !match {
		return unresolvable(reasonNodeAffinity)
	}
	return preempt.Status{}
}

func filterNodePorts(pod *v1.Pod, s *nodeState) preempt.Status {
	for _, want := range preempt.AppendHostPorts(nil, pod) {
		if s.portConflict(want) {
			return preempt.Status{Code: preempt.Unschedulable, Reasons: []string{reasonNodePorts}}
		}
	}
	return preempt.Status{}
}

// filterNodeResourcesFit is upstream's fitsRequest: every insufficient
// resource is a reason; the status is UnschedulableAndUnresolvable when the
// pod asks for more of some resource than the node has at all, because no
// preemption can help then.
func filterNodeResourcesFit(pod *v1.Pod, s *nodeState) preempt.Status {
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
	want := incomingPodRequests(pod)
	insufficient(string(v1.ResourceCPU), want.milliCPU, s.allocated.milliCPU, s.requested.milliCPU)
	insufficient(string(v1.ResourceMemory), want.memory, s.allocated.memory, s.requested.memory)
	insufficient(string(v1.ResourceEphemeralStorage), want.ephemeralStorage, s.allocated.ephemeralStorage, s.requested.ephemeralStorage)
	for _, name := range want.scalarNames() {
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
