package reference

import (
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/preemptbench/preemptbench/preempt"
)

const reasonNodeUnschedulable = "node(s) were unschedulable"

// nodeUnschedulable is upstream's NodeUnschedulable: an unschedulable node
// takes only pods that tolerate its unschedulable taint.
type nodeUnschedulable struct{}

func (nodeUnschedulable) Name() string { return "NodeUnschedulable" }

func (nodeUnschedulable) Filter(_ stateData, pod *v1.Pod, s *nodeState) preempt.Status {
	if !s.node.Spec.Unschedulable {
		return preempt.Status{}
	}
	taint := &v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}
	if corev1helpers.TolerationsTolerateTaint(klog.Background(), pod.Spec.Tolerations, taint, false) {
		return preempt.Status{}
	}
	return unresolvable(reasonNodeUnschedulable)
}
