package reference

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/podinfo"
)

// nodeState is the part of upstream's NodeInfo the filters read. Pods are
// added and removed one at a time, exactly as SelectVictimsOnNode does.
type nodeState struct {
	node      *v1.Node
	allocated resources // node allocatable
	requested resources // sum of the pods' requests
	pods      map[string]*v1.Pod
	// usedPorts is a set, not a multiset, as upstream's HostPortInfo:
	// removing a pod frees its ports even when another pod on the node
	// declared the same one.
	usedPorts map[podinfo.HostPort]bool
}

func newNodeState(node *v1.Node) *nodeState {
	s := &nodeState{node: node, pods: map[string]*v1.Pod{}, usedPorts: map[podinfo.HostPort]bool{}}
	s.allocated.add(node.Status.Allocatable, 1)
	return s
}

func (s *nodeState) clone() *nodeState {
	out := &nodeState{node: s.node, allocated: s.allocated, requested: s.requested.clone(),
		pods: make(map[string]*v1.Pod, len(s.pods)), usedPorts: make(map[podinfo.HostPort]bool, len(s.usedPorts))}
	for k, v := range s.pods {
		out.pods[k] = v
	}
	for k := range s.usedPorts {
		out.usedPorts[k] = true
	}
	return out
}

func podKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

func (s *nodeState) addPod(p *v1.Pod) {
	s.pods[podKey(p)] = p
	s.requested.add(podinfo.PlacedPodRequests(p), 1)
	for _, hp := range podinfo.AppendHostPorts(nil, p) {
		s.usedPorts[hp] = true
	}
}

func (s *nodeState) removePod(p *v1.Pod) error {
	if _, ok := s.pods[podKey(p)]; !ok {
		return fmt.Errorf("no corresponding pod %s in pods of node %s", podKey(p), s.node.Name)
	}
	delete(s.pods, podKey(p))
	s.requested.add(podinfo.PlacedPodRequests(p), -1)
	for _, hp := range podinfo.AppendHostPorts(nil, p) {
		delete(s.usedPorts, hp)
	}
	return nil
}

// portConflict is upstream's HostPortInfo.CheckConflict.
func (s *nodeState) portConflict(want podinfo.HostPort) bool {
	for used := range s.usedPorts {
		if want.Conflicts(used) {
			return true
		}
	}
	return false
}
