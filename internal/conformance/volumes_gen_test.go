package conformance

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"pgregory.net/rapid"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/loader"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/upstream"
)

// Issue 32: no generated volume problem (claims of every kind the four
// volume filters tell apart, inline disks, attach limits, an attachment)
// makes upstream panic, fail, or answer differently from run to run:
// each is decided three times, each by a new evaluator (upstream's final
// tie among equal nodes pinned to list order), filter phase included.
// The generator is checked too: every cluster it makes validates, and it
// makes problems of every outcome.
func TestVolumeProblemsDecideTheSameEachTime(t *testing.T) {
	impl := harness.Deterministic(upstream.Impl{})
	// decide decides in three times, each the same, and returns the first.
	decide := func(t interface{ Fatalf(string, ...any) }, in Input) preempt.Decision {
		if err := in.Cluster.Validate(); err != nil {
			t.Fatalf("generator made an invalid cluster: %v", err)
		}
		if err := harness.Refusal(impl, in.Cluster, in.Request.Pod); err != nil {
			t.Fatalf("upstream refuses a generated volume problem: %v", err)
		}
		ctx := context.Background()
		var first preempt.Decision
		var firstFilter any
		for i := range 3 {
			ev, err := impl.NewEvaluator(in.Cluster)
			if err != nil {
				t.Fatalf("%s: %v", impl.Name(), err)
			}
			preempt.SetFilterConfig(ev, in.Request.Config)
			filter := ev.Filter(ctx, in.Request.Pod)
			d, err := harness.Run(ctx, impl, in.Cluster, in.Request, in.Faults...)
			if err != nil {
				t.Fatalf("%s: %v", impl.Name(), err)
			}
			if i == 0 {
				first, firstFilter = d, filter
				continue
			}
			if diff := cmp.Diff(firstFilter, filter); diff != "" {
				t.Fatalf("run %d: the filter phase differs from the first run's (-first +now):\n%s", i+1, diff)
			}
			if diff := cmp.Diff(first, d); diff != "" {
				t.Fatalf("run %d: the decision differs from the first run's (-first +now):\n%s", i+1, diff)
			}
		}
		return first
	}
	rapid.Check(t, func(t *rapid.T) {
		decide(t, AtRelease(GenVolumes(6).Draw(t, "in"), impl))
	})
	exampleOutcomes(t, GenVolumes(6), func(t interface{ Fatalf(string, ...any) }, in Input) preempt.Decision {
		return decide(t, AtRelease(in, impl))
	})
}

func objects[T runtime.Object](objs []T) []runtime.Object {
	out := make([]runtime.Object, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

// A generated volume cluster written as a kubectl List (synth.ListYAML,
// as compare upgrade writes a reproducer) loads back whole: ListYAML wrote
// nodes, pods, PDBs and pod groups only, so a reproducer with volumes
// lost its claims, volumes, classes and CSI objects.
func TestVolumeClusterRoundTripsThroughAList(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := GenVolumes(4).Draw(t, "in")
		in.Cluster.PDBs = nil // some have selectors the loader refuses, as the API server would
		b, err := synth.ListYAML(in.Cluster)
		if err != nil {
			t.Fatalf("ListYAML: %v", err)
		}
		got, _, err := loader.LoadCluster("cluster.yaml", b)
		if err != nil {
			t.Fatalf("loading the List: %v", err)
		}
		// The loader defaults what it reads as the API server does.
		want := in.Cluster.DeepCopy()
		for _, objs := range [][]runtime.Object{objects(want.Namespaces), objects(want.PVCs), objects(want.PVs), objects(want.StorageClasses),
			objects(want.CSINodes), objects(want.CSIDrivers), objects(want.VolumeAttachments)} {
			for _, o := range objs {
				legacyscheme.Scheme.Default(o)
			}
		}
		in.Cluster = want
		for _, d := range []struct {
			kind      string
			want, got any
		}{
			{"Namespace", in.Cluster.Namespaces, got.Namespaces},
			{"PersistentVolumeClaim", in.Cluster.PVCs, got.PVCs},
			{"PersistentVolume", in.Cluster.PVs, got.PVs},
			{"StorageClass", in.Cluster.StorageClasses, got.StorageClasses},
			{"CSINode", in.Cluster.CSINodes, got.CSINodes},
			{"CSIDriver", in.Cluster.CSIDrivers, got.CSIDrivers},
			{"VolumeAttachment", in.Cluster.VolumeAttachments, got.VolumeAttachments},
		} {
			if diff := cmp.Diff(d.want, d.got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(metav1.TypeMeta{}, "Kind", "APIVersion")); diff != "" {
				t.Fatalf("%s objects differ after the round trip (-want +got):\n%s", d.kind, diff)
			}
		}
	})
}

// Update on the Volumes property's problems (claims, inline disks, attach
// limits, attachments): an evaluator that served a cycle and then follows
// a drawn change (pods removed, a copy of the preemptor, its volumes
// with it, bound to a node) answers as a new reference evaluator of the
// changed cluster would (CheckUpdate), for every implementation that
// updates in place and models the volumes: optimized keeps its volume
// index through Update and indexes the added pod's volumes alone.
func TestVolumesUpdate(t *testing.T) {
	for _, impl := range []preempt.Implementation{optimized.Impl{}, harness.Deterministic(upstream.Impl{})} {
		t.Run(impl.Name(), func(t *testing.T) {
			var counts [3]int
			rapid.Check(t, func(rt *rapid.T) {
				in := GenVolumes(MaxVolumeNodes).Draw(rt, "input")
				if refusedVolumes(in, impl) {
					counts[NotApplicable]++
					return
				}
				counts[CheckUpdate(rt, in, GenChange().Draw(rt, "change"), impl)]++
			})
			t.Logf("%d compared, %d refused, %d not applicable", counts[Compared], counts[Refused], counts[NotApplicable])
			if counts[Compared] == 0 {
				t.Errorf("no problem compared")
			}
		})
	}
}

// exampleOutcomes decides the generator's examples of seeds 0 to 99 (a
// fixed set, so that the counts do not depend on -rapid.checks or
// -short), logs the decisions by status and the dry runs' node statuses,
// fails when no problem ended in Success or none in a failure, and
// returns the node statuses' counts.
func exampleOutcomes(t *testing.T, gen *rapid.Generator[Input], decide func(interface{ Fatalf(string, ...any) }, Input) preempt.Decision) map[string]int {
	t.Helper()
	codes := map[preempt.Code]int{}
	reasons := map[string]int{}
	for seed := range 100 {
		d := decide(t, gen.Example(seed))
		codes[d.Status]++
		for _, ns := range d.NodeStatuses {
			reasons[strings.Join(ns.Reasons, ", ")]++
		}
	}
	t.Logf("decisions by status: %v", codes)
	for r, n := range reasons {
		t.Logf("dry-run node status %q: %d", r, n)
	}
	if codes[preempt.Success] == 0 || codes[preempt.Unschedulable]+codes[preempt.UnschedulableAndUnresolvable] == 0 {
		t.Errorf("the generator made no problem of some outcome: %v", codes)
	}
	return reasons
}
