package v1alpha3

import (
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"

	"github.com/preemptbench/preemptbench/internal/kube/features"
)

// SetDefaults_PodGroup is upstream's, PodGroupPreemptionPolicy at the
// release's default (upstream reads the process's gate).
func SetDefaults_PodGroup(in *schedulingv1alpha3.PodGroup) {
	if features.Default("PodGroupPreemptionPolicy") {
		if in.Spec.PreemptionPolicy == nil {
			preemptLowerPriority := schedulingv1alpha3.PreemptLowerPriority
			in.Spec.PreemptionPolicy = &preemptLowerPriority
		}
	}
}

// SetDefaults_CompositePodGroup is upstream's, PodGroupPreemptionPolicy at
// the release's default (upstream reads the process's gate).
func SetDefaults_CompositePodGroup(in *schedulingv1alpha3.CompositePodGroup) {
	if features.Default("PodGroupPreemptionPolicy") {
		if in.Spec.PreemptionPolicy == nil {
			preemptLowerPriority := schedulingv1alpha3.PreemptLowerPriority
			in.Spec.PreemptionPolicy = &preemptLowerPriority
		}
	}
}
