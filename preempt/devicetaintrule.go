//go:build !preemptbench_v1_36

package preempt

// This file and devicetaintrule_v1_36.go are the only places the preempt
// package names the DeviceTaintRule API type: resource.k8s.io/v1 has it
// from k8s.io/api v0.37 (v1.36 serves it as v1beta2, v1.35 as v1alpha3).
// A module pinned at an earlier k8s.io/api imports this package built with
// the tag preemptbench_v1_36 and gets the stand-in instead.

import resourcev1 "k8s.io/api/resource/v1"

// DeviceTaintRule is resource.k8s.io/v1's DeviceTaintRule.
type DeviceTaintRule = resourcev1.DeviceTaintRule

// DeviceTaintRuleAPI reports whether this build knows the DeviceTaintRule
// API type.
const DeviceTaintRuleAPI = true
