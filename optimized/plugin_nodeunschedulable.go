package optimized

import (
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
)

var reasonsNodeUnschedulable = []string{"node(s) were unschedulable"}

// nodeUnschedulableState is NodeUnschedulable's PreFilter state: whether
// the preemptor tolerates the unschedulable taint.
type nodeUnschedulableState struct {
	tolerates bool
}

func newNodeUnschedulableState(pod *v1.Pod) nodeUnschedulableState {
	return nodeUnschedulableState{tolerates: corev1helpers.TolerationsTolerateTaint(klog.Background(), pod.Spec.Tolerations,
		&v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}, false)}
}

// filter is NodeUnschedulable's Filter; nil means it passes.
func (st *nodeUnschedulableState) filter(node *v1.Node) []string {
	if node.Spec.Unschedulable && !st.tolerates {
		return reasonsNodeUnschedulable
	}
	return nil
}
