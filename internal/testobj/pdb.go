package testobj

import (
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// PDBWrapper wraps a PodDisruptionBudget; its methods set a field and
// return the wrapper, Obj returns the budget.
type PDBWrapper struct{ policyv1.PodDisruptionBudget }

// MakePDB returns a wrapper of an empty PodDisruptionBudget (no selector,
// no disruption allowed).
func MakePDB() *PDBWrapper {
	return &PDBWrapper{}
}

// Obj returns the budget.
func (p *PDBWrapper) Obj() *policyv1.PodDisruptionBudget {
	return &p.PodDisruptionBudget
}

// Name sets metadata.name.
func (p *PDBWrapper) Name(name string) *PDBWrapper {
	p.SetName(name)
	return p
}

// Namespace sets metadata.namespace.
func (p *PDBWrapper) Namespace(namespace string) *PDBWrapper {
	p.SetNamespace(namespace)
	return p
}

// UID sets metadata.uid.
func (p *PDBWrapper) UID(uid string) *PDBWrapper {
	p.SetUID(types.UID(uid))
	return p
}

// MinAvailable sets spec.minAvailable to the string minAvailable ("0",
// "100%").
func (p *PDBWrapper) MinAvailable(minAvailable string) *PDBWrapper {
	p.Spec.MinAvailable = &intstr.IntOrString{Type: intstr.String, StrVal: minAvailable}
	return p
}

// MinAvailableCount sets spec.minAvailable to the number n.
func (p *PDBWrapper) MinAvailableCount(n int32) *PDBWrapper {
	p.Spec.MinAvailable = &intstr.IntOrString{Type: intstr.Int, IntVal: n}
	return p
}

// MatchLabel adds key=value to the selector's matchLabels (a selector is
// made when there is none).
func (p *PDBWrapper) MatchLabel(key, value string) *PDBWrapper {
	if p.Spec.Selector == nil {
		p.Spec.Selector = &metav1.LabelSelector{}
	}
	if p.Spec.Selector.MatchLabels == nil {
		p.Spec.Selector.MatchLabels = map[string]string{}
	}
	p.Spec.Selector.MatchLabels[key] = value
	return p
}

// Selector sets spec.selector.
func (p *PDBWrapper) Selector(sel *metav1.LabelSelector) *PDBWrapper {
	p.Spec.Selector = sel
	return p
}

// DisruptionsAllowed sets status.disruptionsAllowed.
func (p *PDBWrapper) DisruptionsAllowed(n int32) *PDBWrapper {
	p.Status.DisruptionsAllowed = n
	return p
}

// DisruptedPod adds the pod name (the key the disruption controller uses:
// the pod's name alone) to status.disruptedPods, disrupted at t.
func (p *PDBWrapper) DisruptedPod(name string, t time.Time) *PDBWrapper {
	if p.Status.DisruptedPods == nil {
		p.Status.DisruptedPods = map[string]metav1.Time{}
	}
	p.Status.DisruptedPods[name] = metav1.NewTime(t)
	return p
}
