package reference

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/podinfo"
)

// nodeState is the part of upstream's NodeInfo the filters read. Pods are
// added and removed one at a time, exactly as SelectVictimsOnNode does.
type nodeState struct {
	node      *v1.Node
	allocated resources // node allocatable
	requested resources // sum of the pods' requests
	// pods is NodeInfo.Pods: a list, so a pod added twice counts twice
	// (a gang member assumed on a node and its nominator entry added by
	// RunFilterPluginsWithNominatedPods, both with its UID).
	pods []*v1.Pod
	// usedPorts is a set, not a multiset, as upstream's HostPortInfo:
	// removing a pod frees its ports even when another pod on the node
	// declared the same one.
	usedPorts map[podinfo.HostPort]bool
	// requests is a placed pod's requests in the release reproduced.
	requests func(*v1.Pod) v1.ResourceList
}

func newNodeState(node *v1.Node, requests func(*v1.Pod) v1.ResourceList) *nodeState {
	s := &nodeState{node: node, usedPorts: map[podinfo.HostPort]bool{}, requests: requests}
	s.allocated.add(node.Status.Allocatable, 1)
	return s
}

func (s *nodeState) clone() *nodeState {
	out := &nodeState{node: s.node, allocated: s.allocated, requested: s.requested.clone(),
		pods: append([]*v1.Pod(nil), s.pods...), usedPorts: make(map[podinfo.HostPort]bool, len(s.usedPorts)), requests: s.requests}
	for k := range s.usedPorts {
		out.usedPorts[k] = true
	}
	return out
}

func podKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// sameKey is upstream's GetPodKey equality: the UID (namespace/name for a
// pod without one, which upstream refuses and the loader never makes).
func sameKey(a, b *v1.Pod) bool {
	if a.UID != "" || b.UID != "" {
		return a.UID == b.UID
	}
	return podKey(a) == podKey(b)
}

func (s *nodeState) addPod(p *v1.Pod) {
	s.pods = append(s.pods, p)
	s.requested.add(s.requests(p), 1)
	for _, hp := range podinfo.AppendHostPorts(nil, p) {
		s.usedPorts[hp] = true
	}
}

// removePod is NodeInfo.RemovePod: the first pod with p's key leaves the
// list (swapped with the last, as removeFromSlice does), and what it
// requested and used is released. Its error names the pod by name alone,
// as upstream's does.
func (s *nodeState) removePod(p *v1.Pod) error {
	i := slices.IndexFunc(s.pods, func(q *v1.Pod) bool { return sameKey(q, p) })
	if i < 0 {
		return fmt.Errorf("no corresponding pod %s in pods of node %s", p.Name, s.node.Name)
	}
	removed := s.pods[i]
	last := len(s.pods) - 1
	s.pods[i] = s.pods[last]
	s.pods[last] = nil
	s.pods = s.pods[:last]
	s.requested.add(s.requests(removed), -1)
	for _, hp := range podinfo.AppendHostPorts(nil, removed) {
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
