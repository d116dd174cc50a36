package upstream

import (
	"reflect"
	"testing"

	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/preemptbench/preemptbench/internal/kube/features"
	"github.com/preemptbench/preemptbench/preempt"
)

// TestPreemptValidatesAgainstThisRelease: preempt parses and validates
// gates against v1.36.3's gate (this package's init gives it), not the
// v1.37.2 table it holds.
func TestPreemptValidatesAgainstThisRelease(t *testing.T) {
	if got, want := features.ReleaseGate().GetAllVersioned(), utilfeature.DefaultMutableFeatureGate.GetAllVersioned(); !reflect.DeepEqual(got, want) {
		t.Fatal("preempt's gate is not this process's")
	}
	if reflect.DeepEqual(features.ReleaseGate().GetAllVersioned(), features.New().GetAllVersioned()) {
		t.Fatal("v1.36.3's gate is v1.37.2's table")
	}
	for k := range features.New().GetAll() {
		if _, ok := utilfeature.DefaultMutableFeatureGate.GetAll()[k]; ok {
			continue
		}
		// A gate v1.37.2 knows and v1.36.3 does not.
		if err := preempt.ValidateFeatureGates(map[string]bool{string(k): true}); err == nil {
			t.Errorf("%s=true: no error, v1.36.3 does not know it", k)
		}
		return
	}
	t.Error("every v1.37.2 gate is v1.36.3's")
}
