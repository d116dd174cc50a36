// Package v1helper is the part of k8s.io/kubernetes/pkg/apis/core/v1/helper
// (and pkg/scheduler/util's request defaults) that the resource arithmetic,
// the extenders' validation and VolumeBinding's allowed topologies use,
// ported from v1.37.2 as they are.
// TestAsUpstream compares them with upstream's.
package v1helper

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The requests kube-scheduler counts for scoring a container that asks for
// no cpu or memory (pkg/scheduler/util's DefaultMilliCPURequest and
// DefaultMemoryRequest).
const (
	DefaultMilliCPURequest int64 = 100               // 0.1 core
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024 // 200 MB
)

// IsExtendedResourceName returns true if:
// 1. the resource name is not in the default namespace;
// 2. resource name does not have "requests." prefix,
// to avoid confusion with the convention in quota
// 3. it satisfies the rules in IsQualifiedName() after converted into quota resource name
func IsExtendedResourceName(name v1.ResourceName) bool {
	if IsNativeResource(name) || strings.HasPrefix(string(name), v1.DefaultResourceRequestsPrefix) {
		return false
	}
	// Ensure it satisfies the rules in IsQualifiedName() after converted into quota resource name
	nameForQuota := fmt.Sprintf("%s%s", v1.DefaultResourceRequestsPrefix, string(name))
	if errs := validation.IsQualifiedName(nameForQuota); len(errs) != 0 {
		return false
	}
	return true
}

// IsPrefixedNativeResource returns true if the resource name is in the
// *kubernetes.io/ namespace.
func IsPrefixedNativeResource(name v1.ResourceName) bool {
	return strings.Contains(string(name), v1.ResourceDefaultNamespacePrefix)
}

// IsNativeResource returns true if the resource name is in the
// *kubernetes.io/ namespace. Partially-qualified (unprefixed) names are
// implicitly in the kubernetes.io/ namespace.
func IsNativeResource(name v1.ResourceName) bool {
	return !strings.Contains(string(name), "/") ||
		IsPrefixedNativeResource(name)
}

// IsHugePageResourceName returns true if the resource name has the huge page
// resource prefix.
func IsHugePageResourceName(name v1.ResourceName) bool {
	return strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

// IsAttachableVolumeResourceName returns true when the resource name is prefixed in attachable volume
func IsAttachableVolumeResourceName(name v1.ResourceName) bool {
	return strings.HasPrefix(string(name), v1.ResourceAttachableVolumesPrefix)
}

// MatchTopologySelectorTerms reports whether nodeLabels match the terms
// (a StorageClass's allowedTopologies): an empty list matches every node,
// an empty term none, a term all its requirements (key In values).
func MatchTopologySelectorTerms(terms []v1.TopologySelectorTerm, nodeLabels map[string]string) bool {
	if len(terms) == 0 {
		return true
	}
	for _, term := range terms {
		if len(term.MatchLabelExpressions) == 0 {
			continue
		}
		sel := labels.NewSelector()
		ok := true
		for _, expr := range term.MatchLabelExpressions {
			r, err := labels.NewRequirement(expr.Key, selection.In, expr.Values)
			if err != nil {
				ok = false
				break
			}
			sel = sel.Add(*r)
		}
		if ok && sel.Matches(labels.Set(nodeLabels)) {
			return true
		}
	}
	return false
}
