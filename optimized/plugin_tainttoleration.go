package optimized

import (
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
)

var reasonsTaints = []string{"node(s) had untolerated taint(s)"}

// taintTolerationState is TaintToleration's state: the preemptor's
// tolerations.
type taintTolerationState struct {
	tolerations []v1.Toleration
}

func newTaintTolerationState(pod *v1.Pod) taintTolerationState {
	return taintTolerationState{tolerations: pod.Spec.Tolerations}
}

// filter is TaintToleration's Filter; nil means it passes.
func (st *taintTolerationState) filter(node *v1.Node) []string {
	if len(node.Spec.Taints) == 0 {
		return nil
	}
	noScheduleOrExecute := func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
	}
	if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, st.tolerations, noScheduleOrExecute, false); untolerated {
		return reasonsTaints
	}
	return nil
}
