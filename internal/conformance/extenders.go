package conformance

import (
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/preemptbench/preemptbench/internal/extendertest"
)

// ExtenderSpec is a scheduler extender of the problem domain: a
// deterministic behaviour of package extendertest (a function of the
// preemption arguments it is sent) served over loopback, and its
// configuration.
type ExtenderSpec struct {
	Behaviour int // index into extendertest.Behaviours
	Ignorable bool
	NodeCache bool // nodeCacheCapable: sent UIDs instead of pods
	// Managed restricts the extender to pods using ExtendedResource
	// (managedResources), so that it is not called for the others.
	Managed bool
}

// ExtenderConfig is the KubeSchedulerConfiguration extender of e.
func ExtenderConfig(e ExtenderSpec) configv1.Extender {
	var managed []string
	if e.Managed {
		managed = append(managed, string(ExtendedResource))
	}
	return extendertest.Config(pick(extendertest.Behaviours(), e.Behaviour), e.NodeCache, e.Ignorable, managed...)
}
