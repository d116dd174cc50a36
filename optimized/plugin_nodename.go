package optimized

import (
	v1 "k8s.io/api/core/v1"
)

var reasonsNodeName = []string{"node(s) didn't match the requested node name"}

// nodeNameState is NodeName's state: the node the preemptor names, if any.
type nodeNameState struct {
	name string
}

func newNodeNameState(pod *v1.Pod) nodeNameState { return nodeNameState{name: pod.Spec.NodeName} }

// mayFail reports whether filter can fail on an untainted node.
func (st *nodeNameState) mayFail() bool { return st.name != "" }

// filter is NodeName's Filter; nil means it passes.
func (st *nodeNameState) filter(node *v1.Node) []string {
	if st.name != "" && st.name != node.Name {
		return reasonsNodeName
	}
	return nil
}
