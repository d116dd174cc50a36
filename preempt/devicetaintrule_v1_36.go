//go:build preemptbench_v1_36

package preempt

// The stand-in for resource.k8s.io/v1's DeviceTaintRule, for a module
// pinned at k8s.io/api v0.36 or v0.35, whose resource.k8s.io/v1 has none
// (v1.36 serves it as v1beta2, v1.35 as v1alpha3): it carries an object
// through decoding (wire) so that an implementation of that release can
// refuse a cluster holding one where its scheduler would read them
// (DeviceTaintRuleGap). See devicetaintrule.go.

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeviceTaintRuleAPI reports whether this build knows the DeviceTaintRule
// API type.
const DeviceTaintRuleAPI = false

// DeviceTaintRule stands in for resource.k8s.io/v1's DeviceTaintRule.
type DeviceTaintRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              json.RawMessage `json:"spec,omitempty"`
	Status            json.RawMessage `json:"status,omitempty"`
}

// DeepCopy copies r.
func (r *DeviceTaintRule) DeepCopy() *DeviceTaintRule {
	if r == nil {
		return nil
	}
	out := &DeviceTaintRule{TypeMeta: r.TypeMeta, Spec: cloneRaw(r.Spec), Status: cloneRaw(r.Status)}
	r.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}
