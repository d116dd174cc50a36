package testobj

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// NodeWrapper wraps a Node; its methods set a field and return the
// wrapper, Obj returns the node.
type NodeWrapper struct{ v1.Node }

// MakeNode returns a wrapper of an empty node: no capacity, no
// allocatable. (Upstream's MakeNode starts with Capacity(nil): 32 pods.)
func MakeNode() *NodeWrapper {
	return &NodeWrapper{}
}

// Obj returns the node.
func (n *NodeWrapper) Obj() *v1.Node {
	return &n.Node
}

// Name sets metadata.name.
func (n *NodeWrapper) Name(s string) *NodeWrapper {
	n.SetName(s)
	return n
}

// UID sets metadata.uid.
func (n *NodeWrapper) UID(s string) *NodeWrapper {
	n.SetUID(types.UID(s))
	return n
}

// Label sets the label k to v.
func (n *NodeWrapper) Label(k, v string) *NodeWrapper {
	if n.Labels == nil {
		n.Labels = make(map[string]string)
	}
	n.Labels[k] = v
	return n
}

// Hostname sets the label kubernetes.io/hostname to the node's name (set
// the name first), as the kubelet does.
func (n *NodeWrapper) Hostname() *NodeWrapper {
	return n.Label(v1.LabelHostname, n.ObjectMeta.Name)
}

// Capacity sets status.capacity and status.allocatable (one map) to
// resources, with 32 pods unless resources says otherwise, as upstream's
// wrapper.
func (n *NodeWrapper) Capacity(resources map[v1.ResourceName]string) *NodeWrapper {
	res := v1.ResourceList{v1.ResourcePods: resource.MustParse("32")}
	for name, value := range resources {
		res[name] = resource.MustParse(value)
	}
	n.Status.Capacity, n.Status.Allocatable = res, res
	return n
}

// Allocatable sets status.allocatable to resources, and nothing else
// (status.capacity stays as it is).
func (n *NodeWrapper) Allocatable(resources map[v1.ResourceName]string) *NodeWrapper {
	res := v1.ResourceList{}
	for name, value := range resources {
		res[name] = resource.MustParse(value)
	}
	n.Status.Allocatable = res
	return n
}

// Taints sets spec.taints.
func (n *NodeWrapper) Taints(taints []v1.Taint) *NodeWrapper {
	n.Spec.Taints = taints
	return n
}

// Unschedulable sets spec.unschedulable.
func (n *NodeWrapper) Unschedulable(unschedulable bool) *NodeWrapper {
	n.Spec.Unschedulable = unschedulable
	return n
}
