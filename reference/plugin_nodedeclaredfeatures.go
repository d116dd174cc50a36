package reference

import (
	v1 "k8s.io/api/core/v1"
	versionutil "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/preemptbench/preemptbench/preempt"
)

const reasonNodeDeclaredFeatures = "node(s) didn't match Pod's required features"

// nodeDeclaredFeatures is upstream's NodeDeclaredFeatures (the default
// profile runs it from v1.36, its gate on by default:
// preempt.SwitchNodeDeclaredFeatures): a pod whose spec needs features a
// node must declare (component-helpers' nodedeclaredfeatures registry:
// hostNetwork with hostUsers false, a RestartAllContainers rule, ...)
// fits only nodes whose status.declaredFeatures hold them all.
type nodeDeclaredFeatures struct{}

func (nodeDeclaredFeatures) Name() string { return "NodeDeclaredFeatures" }

// declaredFeaturesVersion is the version upstream's plugin infers the
// requirements at: the binary's (component-base's version.Get()), as New
// parses it.
var declaredFeaturesVersion, _ = versionutil.Parse(version.Get().String())

// nodeDeclaredFeaturesState is the features the pod needs; it never
// changes.
type nodeDeclaredFeaturesState struct{ reqs ndf.FeatureSet }

func (s *nodeDeclaredFeaturesState) clone() stateData { return s }

// PreFilter skips a pod that needs no declared feature, and every pod
// when the release has no such filter.
func (nodeDeclaredFeatures) PreFilter(ev *evaluator, pod *v1.Pod) (stateData, bool) {
	if !ev.b.NodeDeclaredFeatures {
		return nil, true
	}
	reqs, err := ndf.DefaultFramework.InferForPodScheduling(&ndf.PodInfo{Spec: &pod.Spec}, declaredFeaturesVersion)
	if err != nil || reqs.IsEmpty() {
		return nil, true
	}
	return &nodeDeclaredFeaturesState{reqs}, false
}

func (nodeDeclaredFeatures) Filter(state stateData, _ *v1.Pod, s *nodeState) preempt.Status {
	declared := ndf.DefaultFramework.TryMap(s.node.Status.DeclaredFeatures)
	if ok, err := state.(*nodeDeclaredFeaturesState).reqs.IsSubset(declared); err != nil || !ok {
		return unresolvable(reasonNodeDeclaredFeatures)
	}
	return preempt.Status{}
}
