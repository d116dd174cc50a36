//go:build !preemptbench_v1_35

package preempt

import v1 "k8s.io/api/core/v1"

// schedulingGroup is p's spec.schedulingGroup: set reports whether the
// pod names a scheduling group at all, name is its podGroupName (nil when
// unset). The API field came in v1.36; schedgroup_v1_35.go has v1.35's
// side (its pods have spec.workloadRef instead, and a release before
// PodGroupAPISince refuses pod groups). The one reader of the field in
// this package.
func schedulingGroup(p *v1.Pod) (name *string, set bool) {
	if g := p.Spec.SchedulingGroup; g != nil {
		return g.PodGroupName, true
	}
	return nil, false
}
