package podutil_test

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/randfill"

	"github.com/preemptbench/preemptbench/internal/kube/podutil"

	upstream "k8s.io/kubernetes/pkg/api/v1/pod"
)

// TestAsUpstream: the ports answer as upstream's on random statuses and
// conditions (upstream's gates at their defaults: nothing here sets them).
// UpdatePodCondition stamps metav1.Now() on a changed condition: the two
// results are compared with that time set equal.
func TestAsUpstream(t *testing.T) {
	f := randfill.NewWithSeed(5).NilChance(0.2).NumElements(0, 3)
	types := []v1.PodConditionType{v1.DisruptionTarget, v1.PodReady, v1.PodScheduled}
	statuses := []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse}
	for i := range 3000 {
		var st v1.PodStatus
		f.Fill(&st)
		for j := range st.Conditions { // conditions the ported code can match
			st.Conditions[j].Type = types[(i+j)%len(types)]
			st.Conditions[j].Status = statuses[(i+j)%2]
			if i%3 == 0 {
				st.Conditions[j].ObservedGeneration = 0
			}
		}
		ct := types[i%len(types)]
		gi, gc := podutil.GetPodCondition(&st, ct)
		wi, wc := upstream.GetPodCondition(&st, ct)
		if gi != wi || gc != wc {
			t.Fatalf("GetPodCondition(%d): %d %p, upstream's %d %p", i, gi, gc, wi, wc)
		}
		if g, w := podutil.CalculatePodConditionObservedGeneration(&st, int64(i), ct), upstream.CalculatePodConditionObservedGeneration(&st, int64(i), ct); g != w {
			t.Fatalf("CalculatePodConditionObservedGeneration(%d) = %d, upstream's %d", i, g, w)
		}
		cond := v1.PodCondition{Type: ct, Status: statuses[i%2], Reason: "PreemptionByScheduler", Message: "m"}
		if i%5 == 0 && gc != nil {
			cond = *gc
		}
		gs, ws := st.DeepCopy(), st.DeepCopy()
		gcond, wcond := cond, cond
		gchanged := podutil.UpdatePodCondition(gs, &gcond)
		wchanged := upstream.UpdatePodCondition(ws, &wcond)
		now := metav1.NewTime(time.Unix(1, 0))
		for _, s := range []*v1.PodStatus{gs, ws} {
			for j := range s.Conditions {
				if s.Conditions[j].LastTransitionTime.After(time.Now().Add(-time.Minute)) {
					s.Conditions[j].LastTransitionTime = now
				}
			}
		}
		if gchanged != wchanged || !reflect.DeepEqual(gs, ws) {
			t.Fatalf("UpdatePodCondition(%d) = %t %+v, upstream's %t %+v", i, gchanged, gs.Conditions, wchanged, ws.Conditions)
		}
	}
	if podutil.CalculatePodConditionObservedGeneration(nil, 3, v1.DisruptionTarget) != upstream.CalculatePodConditionObservedGeneration(nil, 3, v1.DisruptionTarget) {
		t.Error("a nil status")
	}
}
