package reference

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// hostPort is one entry of upstream's HostPortInfo.
type hostPort struct {
	ip       string
	protocol string
	port     int32
}

func newHostPort(p v1.ContainerPort) hostPort {
	hp := hostPort{ip: p.HostIP, protocol: string(p.Protocol), port: p.HostPort}
	if hp.ip == "" {
		hp.ip = "0.0.0.0"
	}
	if hp.protocol == "" {
		hp.protocol = string(v1.ProtocolTCP)
	}
	return hp
}

// hostPorts is upstream's schedutil.GetHostPorts: host ports of restartable
// init containers (sidecars) and of regular containers.
func hostPorts(p *v1.Pod) []hostPort {
	var out []hostPort
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways {
			continue
		}
		for _, port := range c.Ports {
			if port.HostPort > 0 {
				out = append(out, newHostPort(port))
			}
		}
	}
	for _, c := range p.Spec.Containers {
		for _, port := range c.Ports {
			if port.HostPort > 0 {
				out = append(out, newHostPort(port))
			}
		}
	}
	return out
}

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
	usedPorts map[hostPort]bool
}

func newNodeState(node *v1.Node) *nodeState {
	s := &nodeState{node: node, pods: map[string]*v1.Pod{}, usedPorts: map[hostPort]bool{}}
	s.allocated.add(node.Status.Allocatable, 1)
	return s
}

func (s *nodeState) clone() *nodeState {
	out := &nodeState{node: s.node, allocated: s.allocated, requested: s.requested.clone(),
		pods: make(map[string]*v1.Pod, len(s.pods)), usedPorts: make(map[hostPort]bool, len(s.usedPorts))}
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
	s.requested.add(placedPodRequests(p), 1)
	for _, hp := range hostPorts(p) {
		s.usedPorts[hp] = true
	}
}

func (s *nodeState) removePod(p *v1.Pod) error {
	if _, ok := s.pods[podKey(p)]; !ok {
		return fmt.Errorf("no corresponding pod %s in pods of node %s", podKey(p), s.node.Name)
	}
	delete(s.pods, podKey(p))
	s.requested.add(placedPodRequests(p), -1)
	for _, hp := range hostPorts(p) {
		delete(s.usedPorts, hp)
	}
	return nil
}

// portConflict is upstream's HostPortInfo.CheckConflict.
func (s *nodeState) portConflict(want hostPort) bool {
	if want.ip == "0.0.0.0" {
		for used := range s.usedPorts {
			if used.protocol == want.protocol && used.port == want.port {
				return true
			}
		}
		return false
	}
	for _, ip := range []string{"0.0.0.0", want.ip} {
		if s.usedPorts[hostPort{ip: ip, protocol: want.protocol, port: want.port}] {
			return true
		}
	}
	return false
}
