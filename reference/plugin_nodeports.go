package reference

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/podinfo"
	"github.com/preemptbench/preemptbench/preempt"
)

const reasonNodePorts = "node(s) didn't have free ports for the requested pod ports"

// nodePorts is upstream's NodePorts: none of the pod's host ports may
// conflict with one in use on the node.
type nodePorts struct{}

func (nodePorts) Name() string { return "NodePorts" }

// nodePortsState is the host ports the pod wants; it never changes.
type nodePortsState []podinfo.HostPort

func (s nodePortsState) clone() stateData { return s }

// PreFilter skips a pod without host ports, as upstream's.
func (nodePorts) PreFilter(_ *evaluator, pod *v1.Pod) (stateData, bool) {
	ports := podinfo.AppendHostPorts(nil, pod)
	if len(ports) == 0 {
		return nil, true
	}
	return nodePortsState(ports), false
}

func (nodePorts) Filter(state stateData, _ *v1.Pod, s *nodeState) preempt.Status {
	for _, want := range state.(nodePortsState) {
		if s.portConflict(want) {
			return preempt.Status{Code: preempt.Unschedulable, Reasons: []string{reasonNodePorts}}
		}
	}
	return preempt.Status{}
}
