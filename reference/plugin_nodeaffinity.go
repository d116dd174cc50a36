package reference

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/preemptbench/preemptbench/preempt"
)

const reasonNodeAffinity = "node(s) didn't match Pod's node affinity/selector"

// nodeAffinity is upstream's NodeAffinity: the pod's node selector and
// required node affinity must match the node.
type nodeAffinity struct{}

func (nodeAffinity) Name() string { return "NodeAffinity" }

// nodeAffinityState is the pod's node selector and required node affinity;
// AddPod and RemovePod do not exist for it, so it never changes.
type nodeAffinityState struct {
	required nodeaffinity.RequiredNodeAffinity
}

func (s *nodeAffinityState) clone() stateData { return s }

// PreFilter skips a pod with neither a node selector nor required node
// affinity, as upstream's.
func (nodeAffinity) PreFilter(_ *evaluator, pod *v1.Pod) (stateData, bool) {
	a := pod.Spec.Affinity
	noNodeAffinity := a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil
	if noNodeAffinity && pod.Spec.NodeSelector == nil {
		return nil, true
	}
	return &nodeAffinityState{required: nodeaffinity.GetRequiredNodeAffinity(pod)}, false
}

func (nodeAffinity) Filter(state stateData, _ *v1.Pod, s *nodeState) preempt.Status {
	// Upstream ignores parsing errors here; the loader rejects them earlier.
	if match, _ := state.(*nodeAffinityState).required.Match(s.node); !match {
		return unresolvable(reasonNodeAffinity)
	}
	return preempt.Status{}
}
