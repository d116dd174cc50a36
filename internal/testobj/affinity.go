package testobj

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodAffinityKind says which list of a pod (anti-)affinity a term goes to,
// as upstream's wrapper's.
type PodAffinityKind int

const (
	// NilPodAffinity adds nothing.
	NilPodAffinity PodAffinityKind = iota
	// PodAffinityWithRequiredReq adds a required affinity term.
	PodAffinityWithRequiredReq
	// PodAffinityWithPreferredReq adds a preferred affinity term of weight 1.
	PodAffinityWithPreferredReq
	// PodAffinityWithRequiredPreferredReq adds both.
	PodAffinityWithRequiredPreferredReq
	// PodAntiAffinityWithRequiredReq adds a required anti-affinity term.
	PodAntiAffinityWithRequiredReq
	// PodAntiAffinityWithPreferredReq adds a preferred anti-affinity term of
	// weight 1.
	PodAntiAffinityWithPreferredReq
	// PodAntiAffinityWithRequiredPreferredReq adds both.
	PodAntiAffinityWithRequiredPreferredReq
)

// PodAffinity adds a pod affinity term of topologyKey for the pods
// labelSelector matches, to the lists kind says.
func (p *PodWrapper) PodAffinity(topologyKey string, labelSelector *metav1.LabelSelector, kind PodAffinityKind) *PodWrapper {
	if kind == NilPodAffinity {
		return p
	}
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	if p.Spec.Affinity.PodAffinity == nil {
		p.Spec.Affinity.PodAffinity = &v1.PodAffinity{}
	}
	a := p.Spec.Affinity.PodAffinity
	term := v1.PodAffinityTerm{LabelSelector: labelSelector, TopologyKey: topologyKey}
	if kind == PodAffinityWithRequiredReq || kind == PodAffinityWithRequiredPreferredReq {
		a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, term)
	}
	if kind == PodAffinityWithPreferredReq || kind == PodAffinityWithRequiredPreferredReq {
		a.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PreferredDuringSchedulingIgnoredDuringExecution, v1.WeightedPodAffinityTerm{Weight: 1, PodAffinityTerm: term})
	}
	return p
}

// PodAntiAffinity adds a pod anti-affinity term of topologyKey for the
// pods labelSelector matches, to the lists kind says.
func (p *PodWrapper) PodAntiAffinity(topologyKey string, labelSelector *metav1.LabelSelector, kind PodAffinityKind) *PodWrapper {
	if kind == NilPodAffinity {
		return p
	}
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	if p.Spec.Affinity.PodAntiAffinity == nil {
		p.Spec.Affinity.PodAntiAffinity = &v1.PodAntiAffinity{}
	}
	a := p.Spec.Affinity.PodAntiAffinity
	term := v1.PodAffinityTerm{LabelSelector: labelSelector, TopologyKey: topologyKey}
	if kind == PodAntiAffinityWithRequiredReq || kind == PodAntiAffinityWithRequiredPreferredReq {
		a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, term)
	}
	if kind == PodAntiAffinityWithPreferredReq || kind == PodAntiAffinityWithRequiredPreferredReq {
		a.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PreferredDuringSchedulingIgnoredDuringExecution, v1.WeightedPodAffinityTerm{Weight: 1, PodAffinityTerm: term})
	}
	return p
}

// PodAffinityExists is PodAffinity for the pods that have the label
// labelKey.
func (p *PodWrapper) PodAffinityExists(labelKey, topologyKey string, kind PodAffinityKind) *PodWrapper {
	return p.PodAffinity(topologyKey, MakeLabelSelector().Exists(labelKey).Obj(), kind)
}

// PodAntiAffinityExists is PodAntiAffinity for the pods that have the
// label labelKey.
func (p *PodWrapper) PodAntiAffinityExists(labelKey, topologyKey string, kind PodAffinityKind) *PodWrapper {
	return p.PodAntiAffinity(topologyKey, MakeLabelSelector().Exists(labelKey).Obj(), kind)
}

// RequiredPodAffinityTerm adds term, whole (namespaces, namespace
// selector, match label keys), to the required pod affinity terms.
func (p *PodWrapper) RequiredPodAffinityTerm(term v1.PodAffinityTerm) *PodWrapper {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	if p.Spec.Affinity.PodAffinity == nil {
		p.Spec.Affinity.PodAffinity = &v1.PodAffinity{}
	}
	a := p.Spec.Affinity.PodAffinity
	a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, term)
	return p
}

// RequiredPodAntiAffinityTerm adds term, whole, to the required pod
// anti-affinity terms.
func (p *PodWrapper) RequiredPodAntiAffinityTerm(term v1.PodAffinityTerm) *PodWrapper {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	if p.Spec.Affinity.PodAntiAffinity == nil {
		p.Spec.Affinity.PodAntiAffinity = &v1.PodAntiAffinity{}
	}
	a := p.Spec.Affinity.PodAntiAffinity
	a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, term)
	return p
}

// SpreadConstraint adds a topology spread constraint, as upstream's
// wrapper.
func (p *PodWrapper) SpreadConstraint(maxSkew int, tpKey string, mode v1.UnsatisfiableConstraintAction, selector *metav1.LabelSelector, minDomains *int32, nodeAffinityPolicy, nodeTaintsPolicy *v1.NodeInclusionPolicy, matchLabelKeys []string) *PodWrapper {
	p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{
		MaxSkew:            int32(maxSkew),
		TopologyKey:        tpKey,
		WhenUnsatisfiable:  mode,
		LabelSelector:      selector,
		MinDomains:         minDomains,
		NodeAffinityPolicy: nodeAffinityPolicy,
		NodeTaintsPolicy:   nodeTaintsPolicy,
		MatchLabelKeys:     matchLabelKeys,
	})
	return p
}

// LabelSelectorWrapper wraps a LabelSelector.
type LabelSelectorWrapper struct{ metav1.LabelSelector }

// MakeLabelSelector returns a wrapper of an empty selector (it matches
// every object).
func MakeLabelSelector() *LabelSelectorWrapper {
	return &LabelSelectorWrapper{}
}

// Obj returns the selector.
func (s *LabelSelectorWrapper) Obj() *metav1.LabelSelector {
	return &s.LabelSelector
}

// Label adds k=v to matchLabels.
func (s *LabelSelectorWrapper) Label(k, v string) *LabelSelectorWrapper {
	if s.MatchLabels == nil {
		s.MatchLabels = make(map[string]string)
	}
	s.MatchLabels[k] = v
	return s
}

// In adds the expression key In vals.
func (s *LabelSelectorWrapper) In(key string, vals []string) *LabelSelectorWrapper {
	s.MatchExpressions = append(s.MatchExpressions, metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOpIn, Values: vals})
	return s
}

// NotIn adds the expression key NotIn vals.
func (s *LabelSelectorWrapper) NotIn(key string, vals []string) *LabelSelectorWrapper {
	s.MatchExpressions = append(s.MatchExpressions, metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOpNotIn, Values: vals})
	return s
}

// Exists adds the expression key Exists.
func (s *LabelSelectorWrapper) Exists(key string) *LabelSelectorWrapper {
	s.MatchExpressions = append(s.MatchExpressions, metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOpExists})
	return s
}

// NotExist adds the expression key DoesNotExist.
func (s *LabelSelectorWrapper) NotExist(key string) *LabelSelectorWrapper {
	s.MatchExpressions = append(s.MatchExpressions, metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOpDoesNotExist})
	return s
}
