package testobj

import (
	"time"

	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodGroupWrapper wraps a scheduling.k8s.io/v1beta1 PodGroup (the type
// preempt.PodGroup names); its methods set a field and return the wrapper,
// Obj returns the group.
type PodGroupWrapper struct{ schedulingv1beta1.PodGroup }

// MakePodGroup returns a wrapper of an empty PodGroup: no scheduling
// policy, no disruption mode, no priority.
func MakePodGroup() *PodGroupWrapper {
	return &PodGroupWrapper{}
}

// Obj returns the group.
func (g *PodGroupWrapper) Obj() *schedulingv1beta1.PodGroup {
	return &g.PodGroup
}

// Name sets metadata.name.
func (g *PodGroupWrapper) Name(name string) *PodGroupWrapper {
	g.PodGroup.Name = name
	return g
}

// Namespace sets metadata.namespace.
func (g *PodGroupWrapper) Namespace(namespace string) *PodGroupWrapper {
	g.PodGroup.Namespace = namespace
	return g
}

// UID sets metadata.uid.
func (g *PodGroupWrapper) UID(uid string) *PodGroupWrapper {
	g.PodGroup.UID = types.UID(uid)
	return g
}

// CreationTimestamp sets metadata.creationTimestamp (the order of a
// composite's children).
func (g *PodGroupWrapper) CreationTimestamp(t time.Time) *PodGroupWrapper {
	g.PodGroup.CreationTimestamp = metav1.NewTime(t)
	return g
}

// TopologyKey sets a topology constraint of key
// (spec.schedulingConstraints), as upstream's wrapper.
func (g *PodGroupWrapper) TopologyKey(key string) *PodGroupWrapper {
	g.Spec.SchedulingConstraints = &schedulingv1beta1.PodGroupSchedulingConstraints{Topology: []schedulingv1beta1.TopologyConstraint{{Key: key}}}
	return g
}

// Priority sets spec.priority.
func (g *PodGroupWrapper) Priority(priority int32) *PodGroupWrapper {
	g.Spec.Priority = &priority
	return g
}

// PreemptionPolicy sets spec.preemptionPolicy.
func (g *PodGroupWrapper) PreemptionPolicy(policy schedulingv1beta1.PreemptionPolicy) *PodGroupWrapper {
	g.Spec.PreemptionPolicy = &policy
	return g
}

// BasicPolicy sets the basic scheduling policy (spec.schedulingPolicy.basic).
func (g *PodGroupWrapper) BasicPolicy() *PodGroupWrapper {
	g.Spec.SchedulingPolicy.Basic = &schedulingv1beta1.BasicSchedulingPolicy{}
	return g
}

// MinCount sets the gang scheduling policy's minCount
// (spec.schedulingPolicy.gang), leaving a basic policy as it is.
func (g *PodGroupWrapper) MinCount(count int32) *PodGroupWrapper {
	if g.Spec.SchedulingPolicy.Gang == nil {
		g.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{}
	}
	g.Spec.SchedulingPolicy.Gang.MinCount = count
	return g
}

// DisruptionModeAll sets the disruption mode All: the group's pods are
// preempted together.
func (g *PodGroupWrapper) DisruptionModeAll() *PodGroupWrapper {
	g.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
	return g
}

// DisruptionModeSingle sets the disruption mode Single: each pod is a
// victim of its own.
func (g *PodGroupWrapper) DisruptionModeSingle() *PodGroupWrapper {
	g.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}
	return g
}

// ParentCompositePodGroup puts the group under the CompositePodGroup
// parent (spec.parentCompositePodGroupName); "" leaves it under none.
func (g *PodGroupWrapper) ParentCompositePodGroup(parent string) *PodGroupWrapper {
	if parent == "" {
		return g
	}
	g.Spec.ParentCompositePodGroupName = &parent
	return g
}

// CompositePodGroupWrapper wraps a scheduling.k8s.io/v1alpha3
// CompositePodGroup (the type preempt.CompositePodGroup names).
type CompositePodGroupWrapper struct {
	schedulingv1alpha3.CompositePodGroup
}

// MakeCompositePodGroup returns a wrapper of an empty CompositePodGroup.
func MakeCompositePodGroup() *CompositePodGroupWrapper {
	return &CompositePodGroupWrapper{}
}

// Obj returns the group.
func (g *CompositePodGroupWrapper) Obj() *schedulingv1alpha3.CompositePodGroup {
	return &g.CompositePodGroup
}

// Name sets metadata.name.
func (g *CompositePodGroupWrapper) Name(name string) *CompositePodGroupWrapper {
	g.CompositePodGroup.Name = name
	return g
}

// Namespace sets metadata.namespace.
func (g *CompositePodGroupWrapper) Namespace(namespace string) *CompositePodGroupWrapper {
	g.CompositePodGroup.Namespace = namespace
	return g
}

// UID sets metadata.uid.
func (g *CompositePodGroupWrapper) UID(uid string) *CompositePodGroupWrapper {
	g.CompositePodGroup.UID = types.UID(uid)
	return g
}

// CreationTimestamp sets metadata.creationTimestamp (the order of a
// composite's children).
func (g *CompositePodGroupWrapper) CreationTimestamp(t time.Time) *CompositePodGroupWrapper {
	g.CompositePodGroup.CreationTimestamp = metav1.NewTime(t)
	return g
}

// PreemptionPolicy sets spec.preemptionPolicy.
func (g *CompositePodGroupWrapper) PreemptionPolicy(policy schedulingv1alpha3.PreemptionPolicy) *CompositePodGroupWrapper {
	g.Spec.PreemptionPolicy = &policy
	return g
}

// Priority sets spec.priority.
func (g *CompositePodGroupWrapper) Priority(priority int32) *CompositePodGroupWrapper {
	g.Spec.Priority = &priority
	return g
}

// BasicPolicy sets the basic scheduling policy.
func (g *CompositePodGroupWrapper) BasicPolicy() *CompositePodGroupWrapper {
	g.Spec.SchedulingPolicy.Basic = &schedulingv1alpha3.CompositeBasicSchedulingPolicy{}
	return g
}

// MinGroupCount sets the gang scheduling policy of minGroupCount children.
func (g *CompositePodGroupWrapper) MinGroupCount(minGroupCount int32) *CompositePodGroupWrapper {
	g.Spec.SchedulingPolicy.Gang = &schedulingv1alpha3.CompositeGangSchedulingPolicy{MinGroupCount: minGroupCount}
	return g
}

// DisruptionModeAll sets the disruption mode All.
func (g *CompositePodGroupWrapper) DisruptionModeAll() *CompositePodGroupWrapper {
	g.Spec.DisruptionMode = &schedulingv1alpha3.CompositeDisruptionMode{All: &schedulingv1alpha3.AllCompositeDisruptionMode{}}
	return g
}

// ParentCompositePodGroup puts the group under the CompositePodGroup
// parent; "" leaves it under none.
func (g *CompositePodGroupWrapper) ParentCompositePodGroup(parent string) *CompositePodGroupWrapper {
	if parent == "" {
		return g
	}
	g.Spec.ParentCompositePodGroupName = &parent
	return g
}
