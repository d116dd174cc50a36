package main

import (
	"go/parser"
	"testing"
)

// The walk over the pinned release: what it counts and what it leaves out,
// by function (cycleFunc.name), for a function of each kind the doc
// comment names.
func TestCycleWalk(t *testing.T) {
	funcs, _, err := cycleWalk(".")
	if err != nil {
		t.Fatal(err)
	}
	type fn struct{ file, name string }
	got := map[fn]*cycleFunc{}
	for _, cf := range funcs {
		got[fn{cf.file, cf.name}] = cf
	}
	const plugins = "k8s.io/kubernetes/pkg/scheduler/framework/plugins/"
	for _, tc := range []struct {
		file, name string
		reached    bool
		why        string // cycleExcluded's answer
	}{
		{"volumebinding/volume_binding.go", "VolumeBinding.PreFilter", true, ""},
		{"volumebinding/binder.go", "volumeBinder.FindPodVolumes", true, ""},          // an interface method
		{"volumebinding/passive_assume_cache.go", "passiveAssumeCache.Get", true, ""}, // a generic type's method
		{"volumebinding/binder.go", "byPVCSize.Less", true, ""},                       // a callback
		{"volumerestrictions/volume_restrictions.go", "VolumeRestrictions.AddPod", true, ""},
		{"nodevolumelimits/csi.go", "CSILimits.getNodeVolumeAttachmentInfo", true, ""},
		{"nodevolumelimits/csi_manager.go", "csiNodeListerWrapper.Get", true, ""}, // through fwk.CSIManager
		{"dynamicresources/dynamicresources.go", "DynamicResources.PostFilter", true, ""},
		{"dynamicresources/extendeddynamicresources.go", "DynamicResources.deleteClaim", true, ""},
		{"dynamicresources/dra_manager.go", "claimTracker.GatherAllocatedState", true, ""}, // through fwk.SharedDRAManager
		{"volumezone/volume_zone.go", "stateData.Clone", true, ""},

		{"volumebinding/volume_binding.go", "VolumeBinding.Score", false, "outside the cycle"},
		{"volumebinding/volume_binding.go", "New", false, "constructor"},
		{"volumebinding/binder.go", "volumeBinder.BindPodVolumes", false, ""}, // PreBind's
		{"volumebinding/fake_binder.go", "FakeVolumeBinder.FindPodVolumes", false, "test helper"},
		{"volumerestrictions/volume_restrictions.go", "VolumeRestrictions.isSchedulableAfterAssignedPodDeleted", false, "outside the cycle"},
		{"dynamicresources/dynamicresources.go", "DynamicResources.Reserve", false, "outside the cycle"},
		{"dynamicresources/dynamicresources.go", "DynamicResources.PodGroupPostFilter", false, "pod-group code"},
		{"dynamicresources/dynamicresources.go", "podGroupStateData.Clone", false, "pod-group code"},
		// Reached only where DRANodeAllocatableResources (alpha, off) is on.
		{"dynamicresources/nodeallocatabledynamicresources.go", "DynamicResources.calculateAndCheckNodeAllocatableResources", false, ""},
		// Reached only where DRAConsumableCapacity (on) is off.
		{"dynamicresources/dra_manager.go", "claimTracker.ListAllAllocatedDevices", false, ""},
		// Informer event handlers.
		{"dynamicresources/allocateddevices.go", "allocatedDevices.onAdd", false, ""},
	} {
		cf, ok := got[fn{plugins + tc.file, tc.name}]
		if !ok {
			t.Errorf("%s %s: not found", tc.file, tc.name)
			continue
		}
		if cf.reached != tc.reached || cf.why != tc.why {
			t.Errorf("%s %s: reached %v, excluded %q; want %v, %q", tc.file, tc.name, cf.reached, cf.why, tc.reached, tc.why)
		}
	}
}

// What an if condition needs, then and else.
func TestConditionNeeds(t *testing.T) {
	for _, tc := range []struct {
		cond, then, els string
	}{
		{"pl.enabled", "", ""},
		{"podGroupState != nil", "pod-group code", ""},
		{"podGroupState != nil && podGroupState.pendingAllocations[claim.UID] != nil", "pod-group code", ""},
		{"podGroupState == nil", "", "pod-group code"},
		{"pod.Spec.SchedulingGroup == nil", "", "pod-group code"},
		{"!pl.fts.EnableDRAWorkloadResourceClaims", "", "pod-group code"},
		{"pl.fts.EnableDRAWorkloadResourceClaims", "pod-group code", ""},
		// A gate read as a call argument is not what the branch needs.
		{"!resourceclaim.IsReservedForPod(pod, claim, pl.fts.EnableDRAWorkloadResourceClaims)", "", ""},
		{"pl.fts.EnableDRANodeAllocatableResources", "gate DRANodeAllocatableResources=true (default false)", ""},
		{"pl.enableInPlacePodVerticalScalingSchedulerPreemption && resource.IsPodResizeDeferred(pod)", "gate InPlacePodVerticalScalingSchedulerPreemption=true (default false)", ""},
		{"pl.fts.EnableDRAConsumableCapacity", "", "gate DRAConsumableCapacity=false (default true)"},
		{"!pl.fts.EnableDRAExtendedResource", "gate DRAExtendedResource=false (default true)", ""},
		{"utilfeature.DefaultFeatureGate.Enabled(features.DRAExtendedResource)", "", "gate DRAExtendedResource=false (default true)"},
		// Two conjuncts: else runs when either is false, which needs nothing.
		{"claim.Status.Allocation != nil && pl.fts.EnableDRADeviceBindingConditions", "", ""},
		{"pl.fts.EnableNoSuchGate", "", ""},
		// A local holding a gate (GatherAllocatedState's).
		{"!enabledConsumableCapacity", "gate DRAConsumableCapacity=false (default true)", ""},
	} {
		e, err := parser.ParseExpr(tc.cond)
		if err != nil {
			t.Fatal(err)
		}
		gates := map[string]string{"enabledConsumableCapacity": "DRAConsumableCapacity"}
		if then, els := thenNeeds(e, gates), elseNeeds(e, gates); then != tc.then || els != tc.els {
			t.Errorf("%s: then %q, else %q; want %q, %q", tc.cond, then, els, tc.then, tc.els)
		}
	}
}
