package optimized

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

var reasonsNodeAffinity = []string{"node(s) didn't match Pod's node affinity/selector"}

// nodeAffinityState is NodeAffinity's PreFilter state: the preemptor's
// node selector and required node affinity; check is false when it has
// neither (upstream's PreFilter Skips).
type nodeAffinityState struct {
	check    bool
	required nodeaffinity.RequiredNodeAffinity
}

func newNodeAffinityState(pod *v1.Pod) nodeAffinityState {
	st := nodeAffinityState{check: len(pod.Spec.NodeSelector) > 0 ||
		(pod.Spec.Affinity != nil && pod.Spec.Affinity.NodeAffinity != nil && pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil)}
	if st.check {
		st.required = nodeaffinity.GetRequiredNodeAffinity(pod)
	}
	return st
}

// mayFail reports whether filter can fail on an untainted node.
func (st *nodeAffinityState) mayFail() bool { return st.check }

// filter is NodeAffinity's Filter; nil means it passes.
func (st *nodeAffinityState) filter(node *v1.Node) []string {
	if st.check {
		if match, _ := st.required.Match(node); !match {
			return reasonsNodeAffinity
		}
	}
	return nil
}
