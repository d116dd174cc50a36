package optimized

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSameTermsCoversEveryField: sameTerms compares every field of a
// pod affinity term and of its selectors; a field the API adds fails
// here until sameTerms compares it too.
func TestSameTermsCoversEveryField(t *testing.T) {
	for _, c := range []struct {
		typ    reflect.Type
		fields int
	}{
		{reflect.TypeFor[v1.PodAffinityTerm](), 6},
		{reflect.TypeFor[metav1.LabelSelector](), 2},
		{reflect.TypeFor[metav1.LabelSelectorRequirement](), 3},
	} {
		if got := c.typ.NumField(); got != c.fields {
			t.Errorf("%s has %d fields, sameTerms compares %d", c.typ, got, c.fields)
		}
	}
	base := func() []v1.PodAffinityTerm {
		return []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: metav1.LabelSelectorOpIn, Values: []string{"v"}}}},
			Namespaces: []string{"ns"}, TopologyKey: "zone", NamespaceSelector: &metav1.LabelSelector{},
			MatchLabelKeys: []string{"m"}, MismatchLabelKeys: []string{"x"},
		}}
	}
	if !sameTerms(base(), base()) {
		t.Fatal("equal terms differ")
	}
	for name, change := range map[string]func(*v1.PodAffinityTerm){
		"label selector": func(p *v1.PodAffinityTerm) { p.LabelSelector.MatchLabels["app"] = "b" },
		"expression key": func(p *v1.PodAffinityTerm) { p.LabelSelector.MatchExpressions[0].Key = "j" },
		"expression operator": func(p *v1.PodAffinityTerm) {
			p.LabelSelector.MatchExpressions[0].Operator = metav1.LabelSelectorOpNotIn
		},
		"expression values":    func(p *v1.PodAffinityTerm) { p.LabelSelector.MatchExpressions[0].Values = nil },
		"no label selector":    func(p *v1.PodAffinityTerm) { p.LabelSelector = nil },
		"namespaces":           func(p *v1.PodAffinityTerm) { p.Namespaces = append(p.Namespaces, "other") },
		"topology key":         func(p *v1.PodAffinityTerm) { p.TopologyKey = "host" },
		"namespace selector":   func(p *v1.PodAffinityTerm) { p.NamespaceSelector = nil },
		"match label keys":     func(p *v1.PodAffinityTerm) { p.MatchLabelKeys = nil },
		"mismatch label keys":  func(p *v1.PodAffinityTerm) { p.MismatchLabelKeys = []string{"y"} },
		"namespace selector 2": func(p *v1.PodAffinityTerm) { p.NamespaceSelector.MatchLabels = map[string]string{"a": "b"} },
	} {
		b := base()
		change(&b[0])
		if sameTerms(base(), b) || sameTerms(b, base()) {
			t.Errorf("%s: terms that differ are the same", name)
		}
	}
	if sameTerms(base(), nil) || !sameTerms(nil, []v1.PodAffinityTerm{}) {
		t.Error("lengths")
	}
}
