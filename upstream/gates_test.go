package upstream_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/features"

	"github.com/preemptbench/preemptbench/internal/harness"
	kubefeatures "github.com/preemptbench/preemptbench/internal/kube/features"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/upstream"
)

// podLevelCluster: node-a (4 cpu, 32Gi) full of victims (priority 0,
// 3 cpu), and a preemptor whose pod-level requests (2 cpu) exceed what its
// container asks for (100m): with PodLevelResources (on by default) it fits
// nowhere; with the gate off NodeResourcesFit counts the container's 100m
// and it fits.
func podLevelCluster() (*preempt.Cluster, *v1.Pod) {
	c := &preempt.Cluster{Nodes: []*v1.Node{node("node-a", "4").Obj()}, Pods: []*v1.Pod{pod("v1", "node-a", 0, "3", "1Gi").Obj()}}
	p := pod("preemptor", "", 10, "100m", "100Mi").
		Resources(v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("100Mi")}}).Obj()
	return c, p
}

// TestFeatureGatesReachUpstream: upstream runs with the Config's gates on
// the process's gate (its filters read them), in a world of their own, and
// the process's gate is as it was afterwards.
func TestFeatureGatesReachUpstream(t *testing.T) {
	ctx := context.Background()
	c, p := podLevelCluster()
	cfg := preempt.DefaultConfig()
	// PodLevelResources off, with the gates that depend on it.
	off := map[string]bool{"PodLevelResources": false, "InPlacePodLevelResourcesVerticalScaling": false,
		"PodLevelResourcesFixDefaulting": false, "PodLevelResourcesFixKubeletQOSClass": false}
	if err := preempt.ValidateFeatureGates(off); err != nil {
		t.Fatal(err)
	}

	def, err := harness.Decide(ctx, upstream.Impl{}, c, p, cfg, 0, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(def.Feasible) != 0 || def.Decision.Status != preempt.Success || def.Decision.NominatedNode != "node-a" {
		t.Fatalf("default gates: feasible %v, decision %s on %q; want no feasible node and node-a's victim preempted", def.Feasible, def.Decision.Status, def.Decision.NominatedNode)
	}

	cfg.FeatureGates = off
	gated, err := harness.Decide(ctx, upstream.Impl{}, c, p, cfg, 0, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(gated.Feasible) != 1 || gated.Decision.Status != preempt.Schedulable {
		t.Errorf("PodLevelResources=false: feasible %v, status %s; want node-a feasible (the container's 100m counted)", gated.Feasible, gated.Decision.Status)
	}
	if !utilfeature.DefaultFeatureGate.Enabled(features.PodLevelResources) || !utilfeature.DefaultFeatureGate.Enabled(features.InPlacePodLevelResourcesVerticalScaling) {
		t.Errorf("the process's gate was not restored: PodLevelResources=%t InPlacePodLevelResourcesVerticalScaling=%t",
			utilfeature.DefaultFeatureGate.Enabled(features.PodLevelResources), utilfeature.DefaultFeatureGate.Enabled(features.InPlacePodLevelResourcesVerticalScaling))
	}

	// One evaluator, the gates changed between calls: the world is built
	// again for each set (the gates are in its cache key).
	ev, err := upstream.Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	for i, gates := range []map[string]bool{nil, off, nil, {"PodLevelResources": true}} {
		preempt.SetFeatureGates(ev, gates)
		fr := ev.Filter(ctx, p)
		wantFit := i == 1
		if got := len(fr.Feasible) == 1; got != wantFit {
			t.Errorf("call %d, gates %v: fits %t, want %t (%+v)", i, gates, got, wantFit, fr.NodeStatuses)
		}
	}
	if !utilfeature.DefaultFeatureGate.Enabled(features.PodLevelResources) {
		t.Error("the process's gate was not restored after Filter")
	}
}

// TestGenericWorkloadSinglePods: with GenericWorkload on, DefaultPreemption
// lists pod groups from the framework's PodGroupManager (the world's
// scheduler cache); pods outside pod groups are preempted as with the gate
// off.
func TestGenericWorkloadSinglePods(t *testing.T) {
	ctx := context.Background()
	c := smallCluster()
	cfg := preempt.DefaultConfig()
	def, err := harness.Decide(ctx, upstream.Impl{ListOrderTie: true}, c, preemptor(), cfg, 0, now)
	if err != nil {
		t.Fatal(err)
	}
	cfg.FeatureGates = map[string]bool{"GenericWorkload": true}
	gw, err := harness.Decide(ctx, upstream.Impl{ListOrderTie: true}, c, preemptor(), cfg, 0, now)
	if err != nil {
		t.Fatal(err)
	}
	if gw.Decision.Status != def.Decision.Status || gw.Decision.NominatedNode != def.Decision.NominatedNode || len(gw.Decision.Victims) != len(def.Decision.Victims) {
		t.Errorf("GenericWorkload=true: %s on %q, %d victims (%s); default gates: %s on %q, %d victims",
			gw.Decision.Status, gw.Decision.NominatedNode, len(gw.Decision.Victims), gw.Decision.Message,
			def.Decision.Status, def.Decision.NominatedNode, len(def.Decision.Victims))
	}
	if def.Decision.Status != preempt.Success {
		t.Errorf("default gates: %s %s, want Success", def.Decision.Status, def.Decision.Message)
	}
}

// TestFeatureGatesConcurrent: evaluators with and without gates, used at
// once, each see their own (the process's gate is held while one runs).
func TestFeatureGatesConcurrent(t *testing.T) {
	ctx := context.Background()
	c, p := podLevelCluster()
	off := map[string]bool{"PodLevelResources": false, "InPlacePodLevelResourcesVerticalScaling": false,
		"PodLevelResourcesFixDefaulting": false, "PodLevelResourcesFixKubeletQOSClass": false}
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			ev, err := upstream.Impl{}.NewEvaluator(c)
			if err != nil {
				errs <- err
				return
			}
			wantFit := i%2 == 1
			if wantFit {
				preempt.SetFeatureGates(ev, off)
			}
			for range 10 {
				if got := len(ev.Filter(ctx, p).Feasible) == 1; got != wantFit {
					errs <- fmt.Errorf("evaluator %d: fits %t, want %t", i, got, wantFit)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// SchedulerAsyncAPICalls=true is refused for a pod and for a gang: the
// adapter's framework has no API dispatcher, so it would answer as if
// the gate were off (found with the nominated-preemptor reproducer,
// docs/upstream-findings.md).
func TestAsyncAPICallsRefused(t *testing.T) {
	cfg := preempt.DefaultConfig()
	cfg.FeatureGates = map[string]bool{"SchedulerAsyncAPICalls": true, preempt.GenericWorkloadGate: true}
	if u := (upstream.Impl{}).UnmodelledGateUse(&preempt.Cluster{}, &v1.Pod{}, cfg); u == nil || !strings.Contains(u.Error(), "no API dispatcher") {
		t.Errorf("pod: %v, want the refusal", u)
	}
	if u := (upstream.Impl{}).UnmodelledPodGroup(&preempt.Cluster{}, &preempt.PodGroupRequest{Config: cfg}); u == nil {
		t.Error("gang: not refused")
	}
	cfg.FeatureGates["SchedulerAsyncAPICalls"] = false
	if u := (upstream.Impl{}).UnmodelledGateUse(&preempt.Cluster{}, &v1.Pod{}, cfg); u != nil {
		t.Errorf("gate off: %v", u)
	}
}

// TestReleaseGateIsTheTable: the gate this adapter gives preempt
// (features.UseReleaseGate, kube-scheduler's gate of this process as it
// started, with every package the adapter links registered) is the
// generated v1.37.2 table that preempt uses without it, gate for gate.
func TestReleaseGateIsTheTable(t *testing.T) {
	got, want := kubefeatures.ReleaseGate(), kubefeatures.New()
	if g, w := got.GetAllVersioned(), want.GetAllVersioned(); !reflect.DeepEqual(g, w) {
		for k := range g {
			if !reflect.DeepEqual(g[k], w[k]) {
				t.Errorf("gate %s: the release's %v, the table's %v", k, g[k], w[k])
			}
		}
		for k := range w {
			if _, ok := g[k]; !ok {
				t.Errorf("gate %s: the table's only", k)
			}
		}
	}
	if g, w := got.Dependencies(), want.Dependencies(); !reflect.DeepEqual(g, w) {
		t.Errorf("dependencies: the release's %v, the table's %v", g, w)
	}
	if g, w := got.EmulationVersion().String()+"/"+got.MinCompatibilityVersion().String(), want.EmulationVersion().String()+"/"+want.MinCompatibilityVersion().String(); g != w {
		t.Errorf("versions: the release's %s, the table's %s", g, w)
	}
	if upstream.Version != kubefeatures.Release {
		t.Errorf("the adapter runs %s, the table is %s's", upstream.Version, kubefeatures.Release)
	}
}
