package v1helper_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/randfill"

	"github.com/preemptbench/preemptbench/internal/kube/v1helper"

	upstream "k8s.io/kubernetes/pkg/apis/core/v1/helper"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"
)

// TestAsUpstream: the ports answer as upstream's helpers on names of every
// kind, and the request defaults are upstream's.
func TestAsUpstream(t *testing.T) {
	names := []string{"", "cpu", "memory", "pods", "ephemeral-storage", "hugepages-2Mi", "hugepages-", "attachable-volumes-aws-ebs",
		"kubernetes.io/foo", "foo.kubernetes.io/bar", "example.com/gpu", "example.com/", "/gpu", "requests.example.com/gpu",
		"example.com/g_p_u", "example.com/gpu-", "Example.COM/GPU", "a/b/c", "nvidia.com/gpu", "requests.cpu", "x/" + string(make([]byte, 70))}
	f := randfill.NewWithSeed(7)
	for range 2000 {
		var s string
		f.Fill(&s)
		names = append(names, s, "example.com/"+s)
	}
	for _, n := range names {
		name := v1.ResourceName(n)
		for _, c := range []struct {
			fn        string
			got, want bool
		}{
			{"IsExtendedResourceName", v1helper.IsExtendedResourceName(name), upstream.IsExtendedResourceName(name)},
			{"IsPrefixedNativeResource", v1helper.IsPrefixedNativeResource(name), upstream.IsPrefixedNativeResource(name)},
			{"IsNativeResource", v1helper.IsNativeResource(name), upstream.IsNativeResource(name)},
			{"IsHugePageResourceName", v1helper.IsHugePageResourceName(name), upstream.IsHugePageResourceName(name)},
			{"IsAttachableVolumeResourceName", v1helper.IsAttachableVolumeResourceName(name), upstream.IsAttachableVolumeResourceName(name)},
		} {
			if c.got != c.want {
				t.Errorf("%s(%q) = %t, upstream's %t", c.fn, n, c.got, c.want)
			}
		}
	}
	if v1helper.DefaultMilliCPURequest != schedutil.DefaultMilliCPURequest || v1helper.DefaultMemoryRequest != schedutil.DefaultMemoryRequest {
		t.Error("the request defaults are not upstream's")
	}
}

// MatchTopologySelectorTerms answers as upstream's on the edge cases of
// allowedTopologies: no terms, an empty term, several values, several
// terms, a key the node lacks, an invalid key.
func TestMatchTopologySelectorTermsAsUpstream(t *testing.T) {
	term := func(exprs ...v1.TopologySelectorLabelRequirement) v1.TopologySelectorTerm {
		return v1.TopologySelectorTerm{MatchLabelExpressions: exprs}
	}
	zone := func(values ...string) v1.TopologySelectorLabelRequirement {
		return v1.TopologySelectorLabelRequirement{Key: v1.LabelTopologyZone, Values: values}
	}
	termSets := [][]v1.TopologySelectorTerm{
		nil, {}, {term()}, {term(zone("a"))}, {term(zone("a", "b"))}, {term(zone("c")), term(zone("a"))},
		{term(zone("a"), v1.TopologySelectorLabelRequirement{Key: "rack", Values: []string{"r1"}})},
		{term(v1.TopologySelectorLabelRequirement{Key: "in valid", Values: []string{"x"}})}, {term(zone())},
	}
	nodes := []map[string]string{nil, {v1.LabelTopologyZone: "a"}, {v1.LabelTopologyZone: "b", "rack": "r1"}, {v1.LabelTopologyZone: "a", "rack": "r1"}}
	for i, terms := range termSets {
		for j, node := range nodes {
			if got, want := v1helper.MatchTopologySelectorTerms(terms, node), upstream.MatchTopologySelectorTerms(terms, labels.Set(node)); got != want {
				t.Errorf("terms %d, node %d: %t, upstream's %t", i, j, got, want)
			}
		}
	}
}
