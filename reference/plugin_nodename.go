package reference

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

const reasonNodeName = "node(s) didn't match the requested node name"

// nodeName is upstream's NodeName: a pod that names a node fits only there.
type nodeName struct{}

func (nodeName) Name() string { return "NodeName" }

func (nodeName) Filter(_ stateData, pod *v1.Pod, s *nodeState) preempt.Status {
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != s.node.Name {
		return unresolvable(reasonNodeName)
	}
	return preempt.Status{}
}
