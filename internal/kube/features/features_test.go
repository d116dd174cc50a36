package features_test

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"sort"
	"testing"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"

	"github.com/preemptbench/preemptbench/internal/kube/features"
	"github.com/preemptbench/preemptbench/preempt"

	_ "k8s.io/kubernetes/pkg/features" // kube-scheduler's gates, to compare with
)

// upstreamGate is kube-scheduler's gate as the process starts: nothing in
// this test binary sets it.
func upstreamGate() featuregate.MutableVersionedFeatureGate {
	return utilfeature.DefaultMutableFeatureGate.DeepCopy()
}

// TestTableIsUpstreams: the generated table is k8s.io/kubernetes's gate,
// spec for spec (versions, defaults, prereleases, locks, minimum
// compatibility versions), dependency for dependency, at the same
// emulation and minimum compatibility versions. `go generate
// ./internal/kube` writes it again after a k8s.io/kubernetes update.
func TestTableIsUpstreams(t *testing.T) {
	want, got := upstreamGate(), features.New()
	if g, w := got.EmulationVersion().String(), want.EmulationVersion().String(); g != w {
		t.Errorf("emulation version %s, upstream's %s", g, w)
	}
	if g, w := got.MinCompatibilityVersion().String(), want.MinCompatibilityVersion().String(); g != w {
		t.Errorf("minimum compatibility version %s, upstream's %s", g, w)
	}
	gs, ws := got.GetAllVersioned(), want.GetAllVersioned()
	for _, k := range slices.Sorted(maps.Keys(ws)) {
		if !reflect.DeepEqual(gs[k], ws[k]) {
			t.Errorf("gate %s: %v, upstream's %v", k, gs[k], ws[k])
		}
	}
	for k := range gs {
		if _, ok := ws[k]; !ok {
			t.Errorf("gate %s is not upstream's", k)
		}
	}
	if g, w := got.Dependencies(), want.Dependencies(); !reflect.DeepEqual(g, w) {
		t.Errorf("dependencies %v, upstream's %v", g, w)
	}
	if features.Release != preempt.CurrentRelease {
		t.Errorf("Release = %s, the current release is %s: regenerate (go generate ./internal/kube)", features.Release, preempt.CurrentRelease)
	}
}

// TestGateAnswersAsUpstreams: setting gates on the table and on upstream's
// gate gives the same error, or none, and the same gates enabled.
func TestGateAnswersAsUpstreams(t *testing.T) {
	ws := upstreamGate().GetAll()
	for _, value := range []string{
		"",
		"GenericWorkload=true",
		"GenericWorkload=false,GangScheduling=true",
		"CompositePodGroup=true",
		"CompositePodGroup=true,GenericWorkload=true,TopologyAwareWorkloadScheduling=true",
		"NoSuchGate=true",
		"GenericWorkload=maybe",
		"GenericWorkload",
		"SchedulerAsyncPreemption=false",
		"AllAlpha=true",
		"AllBeta=false",
		"AllAlpha=true,AllBeta=true",
		"PodLevelResources=false",
		"InPlacePodVerticalScaling=false",
		"PodObservedGenerationTracking=false",
		"DRAAdminAccess=true,DynamicResourceAllocation=false",
	} {
		want, got := upstreamGate(), features.New()
		werr, gerr := want.Set(value), got.Set(value)
		if (werr == nil) != (gerr == nil) || (werr != nil && !slices.Equal(messages(werr), messages(gerr))) {
			t.Errorf("Set(%q) = %v, upstream's %v", value, gerr, werr)
		}
		for _, k := range slices.Sorted(maps.Keys(ws)) {
			if g, w := got.Enabled(k), want.Enabled(k); g != w {
				t.Errorf("after Set(%q): %s enabled %t, upstream's %t", value, k, g, w)
			}
		}
	}
	var names []string
	for k := range ws {
		names = append(names, string(k))
	}
	sort.Strings(names)
	for _, k := range names {
		if g, w := features.Default(featuregate.Feature(k)), upstreamGate().Enabled(featuregate.Feature(k)); g != w {
			t.Errorf("Default(%s) = %t, upstream's %t", k, g, w)
		}
	}
}

// messages are err's messages, sorted: Set checks the dependencies in
// map order, and its aggregate lists them in that order.
func messages(err error) []string {
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range agg.Errors() {
		out = append(out, messages(e)...)
	}
	sort.Strings(out)
	return out
}

// TestReleaseGate: the table until an adapter gives its release's gate,
// then a copy of that gate as it was given.
func TestReleaseGate(t *testing.T) {
	if !features.ReleaseGate().Enabled("SchedulerAsyncPreemption") {
		t.Fatal("the table's SchedulerAsyncPreemption is off")
	}
	g := featuregate.NewFeatureGate()
	if err := g.Add(map[featuregate.Feature]featuregate.FeatureSpec{"Only": {Default: true, PreRelease: featuregate.Beta}}); err != nil {
		t.Fatal(err)
	}
	features.UseReleaseGate(g)
	t.Cleanup(func() { features.UseReleaseGate(features.New()) }) // the table again, for -count and -shuffle
	if err := g.Set("Only=false"); err != nil {
		t.Fatal(err)
	}
	r := features.ReleaseGate()
	if !r.Enabled("Only") {
		t.Error("ReleaseGate follows the gate given after it was given")
	}
	if _, ok := r.GetAll()["SchedulerAsyncPreemption"]; ok {
		t.Error("ReleaseGate is not the gate given")
	}
	if !features.Default("SchedulerAsyncPreemption") {
		t.Error("Default changed with the release gate")
	}
}
