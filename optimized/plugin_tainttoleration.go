package optimized

import (
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
)

var reasonsTaints = []string{"node(s) had untolerated taint(s)"}

// taintTolerationState is TaintToleration's state: none, the filter reads
// the preemptor's tolerations (a field here would only grow decision).
type taintTolerationState struct{}

// filter is TaintToleration's Filter; nil means it passes.
func (taintTolerationState) filter(pod *v1.Pod, node *v1.Node) []string {
	if len(node.Spec.Taints) == 0 {
		return nil
	}
	noScheduleOrExecute := func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
	}
	if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations, noScheduleOrExecute, false); untolerated {
		return reasonsTaints
	}
	return nil
}
