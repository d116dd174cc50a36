package reference

import (
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/preemptbench/preemptbench/preempt"
)

const reasonTaints = "node(s) had untolerated taint(s)"

// taintToleration is upstream's TaintToleration: the pod must tolerate
// every NoSchedule and NoExecute taint of the node.
type taintToleration struct{}

func (taintToleration) Name() string { return "TaintToleration" }

func (taintToleration) Filter(_ stateData, pod *v1.Pod, s *nodeState) preempt.Status {
	noScheduleOrExecute := func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
	}
	if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), s.node.Spec.Taints, pod.Spec.Tolerations, noScheduleOrExecute, false); untolerated {
		return unresolvable(reasonTaints)
	}
	return preempt.Status{}
}
