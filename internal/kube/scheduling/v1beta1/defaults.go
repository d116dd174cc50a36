package v1beta1

import (
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/api/scheduling/v1beta1"

	"github.com/preemptbench/preemptbench/internal/kube/features"
)

// SetDefaults_PriorityClass is upstream's.
func SetDefaults_PriorityClass(obj *v1beta1.PriorityClass) {
	if obj.PreemptionPolicy == nil {
		preemptLowerPriority := apiv1.PreemptLowerPriority
		obj.PreemptionPolicy = &preemptLowerPriority
	}
}

// SetDefaults_PodGroup is upstream's, PodGroupPreemptionPolicy at the
// release's default (upstream reads the process's gate).
func SetDefaults_PodGroup(in *v1beta1.PodGroup) {
	if features.Default("PodGroupPreemptionPolicy") {
		if in.Spec.PreemptionPolicy == nil {
			preemptLowerPriority := v1beta1.PreemptLowerPriority
			in.Spec.PreemptionPolicy = &preemptLowerPriority
		}
	}
}
