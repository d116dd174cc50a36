package podinfo

import "github.com/preemptbench/preemptbench/internal/kube/features"

// defaultGates are the feature gates the resource helpers read, at
// kube-scheduler's defaults as the process starts (v1.37.2's, the table
// internal/kube/features generates from k8s.io/kubernetes), read once:
// the implementations that call these helpers model the defaults only and
// refuse a Config that sets one of them otherwise (preempt.GateLimited).
// They are not read from the process's gate at call time, which the
// upstream adapter sets for the duration of its own calls
// (Config.FeatureGates) and which another goroutine may then see.
var defaultGates = struct {
	inPlacePodVerticalScaling               bool
	inPlacePodLevelResourcesVerticalScaling bool
	podLevelResources                       bool
}{
	inPlacePodVerticalScaling:               features.Default("InPlacePodVerticalScaling"),
	inPlacePodLevelResourcesVerticalScaling: features.Default("InPlacePodLevelResourcesVerticalScaling"),
	podLevelResources:                       features.Default("PodLevelResources"),
}
