package podinfo

import (
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/features"
)

// defaultGates are the feature gates the resource helpers read, at
// kube-scheduler's defaults as the process starts (v1.37.2's), read once:
// the implementations that call these helpers model the defaults only and
// refuse a Config that sets one of them otherwise (preempt.GateLimited).
// They are not read from the process's gate at call time, which the
// upstream adapter sets for the duration of its own calls
// (Config.FeatureGates) and which another goroutine may then see.
var defaultGates = struct {
	inPlacePodVerticalScaling               bool
	inPlacePodLevelResourcesVerticalScaling bool
	podLevelResources                       bool
	draNodeAllocatableResources             bool
}{
	inPlacePodVerticalScaling:               utilfeature.DefaultFeatureGate.Enabled(features.InPlacePodVerticalScaling),
	inPlacePodLevelResourcesVerticalScaling: utilfeature.DefaultFeatureGate.Enabled(features.InPlacePodLevelResourcesVerticalScaling),
	podLevelResources:                       utilfeature.DefaultFeatureGate.Enabled(features.PodLevelResources),
	draNodeAllocatableResources:             utilfeature.DefaultFeatureGate.Enabled(features.DRANodeAllocatableResources),
}
