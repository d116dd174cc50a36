package v1beta1_test

import (
	"context"
	"reflect"
	"testing"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/operation"
	"sigs.k8s.io/randfill"

	"github.com/preemptbench/preemptbench/internal/kube/scheduling/v1beta1"

	upstream "k8s.io/kubernetes/pkg/apis/scheduling/v1beta1"
)

// TestAsUpstream: the copy defaults and validates random PodGroups and
// PriorityClasses as k8s.io/kubernetes's package does (its gates at their
// defaults: nothing in this test sets them).
func TestAsUpstream(t *testing.T) {
	f := randfill.NewWithSeed(1).NilChance(0.5).NumElements(0, 2)
	ops := []operation.Operation{
		{Type: operation.Create},
		{Type: operation.Create, Options: map[string]bool{"CompositePodGroup": true, "PodGroupPreemptionPolicy": true, "TopologyAwareWorkloadScheduling": true}},
	}
	invalid := 0
	for i := range 2000 {
		var pg schedulingv1beta1.PodGroup
		f.Fill(&pg)
		if i%2 == 0 { // a plain group, mostly valid
			pg = schedulingv1beta1.PodGroup{}
			pg.Name = "g"
			pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: int32(i % 3)}
		}
		if i%3 == 0 {
			pg.Spec.DisruptionMode = nil
		}
		if i%4 == 0 {
			pg.Spec.PreemptionPolicy = nil
		}
		got, want := pg.DeepCopy(), pg.DeepCopy()
		v1beta1.SetObjectDefaults_PodGroup(got)
		upstream.SetObjectDefaults_PodGroup(want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("PodGroup %d defaulted:\n%+v\nupstream's:\n%+v", i, got.Spec, want.Spec)
		}
		for _, op := range ops {
			g := v1beta1.Validate_PodGroup(context.Background(), op, nil, got, nil)
			w := upstream.Validate_PodGroup(context.Background(), op, nil, want, nil)
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("PodGroup %d validated: %v, upstream's %v", i, g, w)
			}
			if len(w) > 0 {
				invalid++
			}
		}
		var pc schedulingv1beta1.PriorityClass
		f.Fill(&pc)
		gpc, wpc := pc.DeepCopy(), pc.DeepCopy()
		v1beta1.SetObjectDefaults_PriorityClass(gpc)
		upstream.SetObjectDefaults_PriorityClass(wpc)
		if !reflect.DeepEqual(gpc, wpc) {
			t.Fatalf("PriorityClass %d defaulted: %+v, upstream's %+v", i, gpc, wpc)
		}
	}
	if invalid == 0 || invalid == 2*2000 {
		t.Errorf("%d of %d validations found errors: the objects drawn do not tell", invalid, 2*2000)
	}
}
