// Package features is kube-scheduler's feature gate without
// k8s.io/kubernetes: the gates k8s.io/kubernetes/pkg/features registers on
// utilfeature.DefaultMutableFeatureGate (Release's, generated into
// zz_generated.features.go), rebuilt on a component-base featuregate, so
// that parsing, validating and defaulting gates give what kube-scheduler's
// own gate gives (its errors included).
//
// ReleaseGate is the gate preempt validates Config.FeatureGates against:
// this table, unless the process runs an implementation built against
// another release, whose adapter gives its own gate to UseReleaseGate as
// the process starts (upstream does, built at the current release or, in
// releases/v1.36.3, with v1.36.3's gates). Default is Release's default, which the ported helpers
// reproducing Release (podinfo, actuation, the pod-group defaulting) read.
package features

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"
)

// New returns a new gate with Release's gates registered, none set: what
// utilfeature.DefaultMutableFeatureGate is in a kube-scheduler of Release
// as it starts.
func New() featuregate.MutableVersionedFeatureGate {
	g := featuregate.NewVersionedFeatureGateWithMinCompatibility(
		version.MustParse(emulationVersion), version.MustParse(minCompatibilityVersion))
	specs := make(map[featuregate.Feature]featuregate.VersionedSpecs, len(versionedSpecs))
	for k, v := range versionedSpecs {
		specs[k] = slices.Clone(v)
	}
	if err := g.AddVersioned(specs); err != nil {
		panic(fmt.Sprintf("features: the generated table: %v", err))
	}
	deps := make(map[featuregate.Feature][]featuregate.Feature, len(dependencies))
	for k, v := range dependencies {
		deps[k] = slices.Clone(v) // nil stays nil, as upstream's
	}
	if err := g.AddDependencies(deps); err != nil {
		panic(fmt.Sprintf("features: the generated dependencies: %v", err))
	}
	return g
}

// table is New, built once and never set.
var table = sync.OnceValue(New)

// Default is gate's default at Release. It panics on a gate Release does
// not know, as FeatureGate.Enabled does.
func Default(gate featuregate.Feature) bool { return table().Enabled(gate) }

var release atomic.Pointer[featuregate.MutableVersionedFeatureGate]

// UseReleaseGate makes a copy of gate, as it is now, ReleaseGate: the gate
// of the kube-scheduler release the process's implementations run. It is
// for an adapter built against a k8s.io/kubernetes release, called from
// its init function with utilfeature.DefaultMutableFeatureGate (once
// k8s.io/kubernetes/pkg/features, which it imports, has registered the
// release's gates, and before anything sets one).
func UseReleaseGate(gate featuregate.MutableVersionedFeatureGate) {
	c := gate.DeepCopy()
	release.Store(&c)
}

// ReleaseGate is the gate UseReleaseGate was given, or else Release's
// table. It is never to be set: callers set gates on a DeepCopy.
func ReleaseGate() featuregate.MutableVersionedFeatureGate {
	if g := release.Load(); g != nil {
		return *g
	}
	return table()
}
