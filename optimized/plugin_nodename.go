package optimized

import (
	v1 "k8s.io/api/core/v1"
)

var reasonsNodeName = []string{"node(s) didn't match the requested node name"}

// nodeNameState is NodeName's state: none, the filter reads the
// preemptor's spec.nodeName (a field here would only grow decision).
type nodeNameState struct{}

// mayFail reports whether filter can fail on an untainted node.
func (nodeNameState) mayFail(pod *v1.Pod) bool { return pod.Spec.NodeName != "" }

// filter is NodeName's Filter; nil means it passes.
func (nodeNameState) filter(pod *v1.Pod, node *v1.Node) []string {
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != node.Name {
		return reasonsNodeName
	}
	return nil
}
