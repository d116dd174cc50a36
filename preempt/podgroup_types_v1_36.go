//go:build preemptbench_v1_36

package preempt

// Stand-ins for the pod-group API types, for a module pinned at k8s.io/api
// v0.36, which has neither scheduling/v1beta1.PodGroup nor
// scheduling/v1alpha3.CompositePodGroup: they carry an object through
// decoding (wire) so that an implementation of that release can refuse a
// cluster holding one (PodGroupAPI is false). See podgroup_types.go.
//
// The check that this build compiles: TestPodGroupStandInsBuild
// (podgroup_v1_36_test.go) runs `go build -tags preemptbench_v1_36` on this
// package and wire; a module pinned at v1.36.3 with a replace directive to
// this one builds with `go build -tags preemptbench_v1_36 ./...`.

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodGroupAPI reports whether this build knows the pod-group API types.
const PodGroupAPI = false

// PodGroup stands in for scheduling.k8s.io/v1beta1's PodGroup.
type PodGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              json.RawMessage `json:"spec,omitempty"`
	Status            json.RawMessage `json:"status,omitempty"`
}

// DeepCopy copies p.
func (p *PodGroup) DeepCopy() *PodGroup {
	if p == nil {
		return nil
	}
	out := &PodGroup{TypeMeta: p.TypeMeta, Spec: cloneRaw(p.Spec), Status: cloneRaw(p.Status)}
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

// CompositePodGroup stands in for scheduling.k8s.io/v1alpha3's
// CompositePodGroup.
type CompositePodGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              json.RawMessage `json:"spec,omitempty"`
	Status            json.RawMessage `json:"status,omitempty"`
}

// DeepCopy copies p.
func (p *CompositePodGroup) DeepCopy() *CompositePodGroup {
	if p == nil {
		return nil
	}
	out := &CompositePodGroup{TypeMeta: p.TypeMeta, Spec: cloneRaw(p.Spec), Status: cloneRaw(p.Status)}
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return append(json.RawMessage(nil), r...)
}

// ValidatePodGroupObject accepts every stand-in: a build for v1.36 refuses
// pod groups as a whole (PodGroupAPI).
func ValidatePodGroupObject(*PodGroup) error { return nil }

// ValidateCompositePodGroupObject accepts every stand-in, as
// ValidatePodGroupObject.
func ValidateCompositePodGroupObject(*CompositePodGroup) error { return nil }
