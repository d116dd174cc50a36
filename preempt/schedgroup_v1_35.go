//go:build preemptbench_v1_35

package preempt

import v1 "k8s.io/api/core/v1"

// schedulingGroup is v1.35's side of schedgroup.go: k8s.io/api v0.35 has
// no spec.schedulingGroup (a v1.35 pod names a Workload, spec.workloadRef,
// which the contract does not carry), so no pod of this build is in a
// scheduling group; the caller refuses pod groups before PodGroupAPISince
// (PodGroupGap).
func schedulingGroup(*v1.Pod) (name *string, set bool) { return nil, false }
