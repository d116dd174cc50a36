//go:build !preemptbench_v1_36

package preempt

// This file and podgroup_types_v1_36.go are the only places the preempt
// package names the pod-group API types. A module pinned at k8s.io/api
// v0.36 (which has neither scheduling/v1beta1.PodGroup nor v1alpha3)
// imports this package built with the tag preemptbench_v1_36 and gets the
// stand-ins of podgroup_types_v1_36.go instead. Code of this package, or
// of wire, that reads a field of a PodGroup or CompositePodGroup beyond
// TypeMeta and ObjectMeta lives in files carrying this file's build
// constraint. TestPodGroupStandInsBuild (podgroup_v1_36_test.go) checks the
// tagged build compiles and decodes pod groups.

import (
	"context"
	"fmt"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/operation"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	schedulingv1alpha3val "github.com/preemptbench/preemptbench/internal/kube/scheduling/v1alpha3"
	schedulingv1beta1val "github.com/preemptbench/preemptbench/internal/kube/scheduling/v1beta1"
)

// PodGroupAPI reports whether this build knows the pod-group API types
// (false in a build for v1.36, whose stand-ins only carry the objects so
// that they can be refused).
const PodGroupAPI = true

// PodGroup is scheduling.k8s.io/v1beta1's PodGroup (KEP-4671, GenericWorkload).
type PodGroup = schedulingv1beta1.PodGroup

// CompositePodGroup is scheduling.k8s.io/v1alpha3's CompositePodGroup
// (CompositePodGroup gate).
type CompositePodGroup = schedulingv1alpha3.CompositePodGroup

// PodGroupPriority is upstream's util.PodGroupPriority: spec.priority, 0
// when unset.
func PodGroupPriority(pg *PodGroup) int32 {
	if pg.Spec.Priority != nil {
		return *pg.Spec.Priority
	}
	return 0
}

// CompositePodGroupPriority is upstream's util.CompositePodGroupPriority.
func CompositePodGroupPriority(cpg *CompositePodGroup) int32 {
	if cpg.Spec.Priority != nil {
		return *cpg.Spec.Priority
	}
	return 0
}

// PodGroupModeAll reports whether pg's disruption mode is All.
func PodGroupModeAll(pg *PodGroup) bool {
	return pg.Spec.DisruptionMode != nil && pg.Spec.DisruptionMode.All != nil
}

// CompositePodGroupModeAll reports whether cpg's disruption mode is All.
func CompositePodGroupModeAll(cpg *CompositePodGroup) bool {
	return cpg.Spec.DisruptionMode != nil && cpg.Spec.DisruptionMode.All != nil
}

// PodGroupParent is pg's parent CompositePodGroup's name, "" for none.
func PodGroupParent(pg *PodGroup) string {
	if pg.Spec.ParentCompositePodGroupName == nil {
		return ""
	}
	return *pg.Spec.ParentCompositePodGroupName
}

// CompositePodGroupParent is cpg's parent's name, "" for none.
func CompositePodGroupParent(cpg *CompositePodGroup) string {
	if cpg.Spec.ParentCompositePodGroupName == nil {
		return ""
	}
	return *cpg.Spec.ParentCompositePodGroupName
}

// PodGroupMinCount is the gang's minCount (spec.schedulingPolicy.gang),
// 0 for a group without the gang policy (basic: no minimum).
func PodGroupMinCount(pg *PodGroup) int32 {
	if g := pg.Spec.SchedulingPolicy.Gang; g != nil {
		return g.MinCount
	}
	return 0
}

// PodGroupIndex finds a cluster's pod groups by namespace and name.
type PodGroupIndex struct {
	groups     map[string]*PodGroup
	composites map[string]*CompositePodGroup
	// composite reports whether CompositePodGroup is on: upstream reads
	// the hierarchy only then.
	composite bool
}

// NewPodGroupIndex indexes c's PodGroups and (when composite, the
// CompositePodGroup gate, is on) its CompositePodGroups.
func NewPodGroupIndex(c *Cluster, composite bool) *PodGroupIndex {
	x := &PodGroupIndex{groups: map[string]*PodGroup{}, composites: map[string]*CompositePodGroup{}, composite: composite}
	for _, pg := range c.PodGroups {
		x.groups[Key(pg.Namespace, pg.Name)] = pg
	}
	if composite {
		for _, cpg := range c.CompositePodGroups {
			x.composites[Key(cpg.Namespace, cpg.Name)] = cpg
		}
	}
	return x
}

// PodGroup is the PodGroup namespace/name, nil if absent.
func (x *PodGroupIndex) PodGroup(namespace, name string) *PodGroup {
	return x.groups[Key(namespace, name)]
}

// CompositePodGroup is the CompositePodGroup namespace/name, nil if absent
// or CompositePodGroup is off.
func (x *PodGroupIndex) CompositePodGroup(namespace, name string) *CompositePodGroup {
	return x.composites[Key(namespace, name)]
}

// maxTreeDepth is schedulingv1beta1.WorkloadMaxTreeDepth, the levels
// upstream's TraverseHierarchyUp visits at most.
const maxTreeDepth = schedulingv1beta1.WorkloadMaxTreeDepth

// VictimPriority is upstream's GetPodPriority under GenericWorkload: a
// pod's priority as a victim, that of the highest group of its hierarchy
// that exists (the PodGroup, or with CompositePodGroup on, the last
// CompositePodGroup reached going up), the pod's own when it is in no
// group or its PodGroup is absent.
func (x *PodGroupIndex) VictimPriority(p *v1.Pod) int32 {
	name, ok := PodGroupName(p)
	if !ok {
		return corev1helpers.PodPriority(p)
	}
	pg := x.PodGroup(p.Namespace, name)
	if pg == nil {
		return corev1helpers.PodPriority(p)
	}
	prio := PodGroupPriority(pg)
	if !x.composite {
		return prio
	}
	x.up(p.Namespace, pg, func(cpg *CompositePodGroup) { prio = CompositePodGroupPriority(cpg) })
	return prio
}

// up calls visit on each CompositePodGroup above pg, going up, as
// upstream's TraverseHierarchyUp does (stopping at a missing parent, a
// cycle or maxTreeDepth levels counting pg).
func (x *PodGroupIndex) up(namespace string, pg *PodGroup, visit func(*CompositePodGroup)) {
	seen := map[string]bool{}
	parent := PodGroupParent(pg)
	for level := 1; level < maxTreeDepth && parent != "" && !seen[parent]; level++ {
		seen[parent] = true
		cpg := x.CompositePodGroup(namespace, parent)
		if cpg == nil {
			return
		}
		visit(cpg)
		parent = CompositePodGroupParent(cpg)
	}
}

// GroupKey names the unit a pod is preempted in, under GenericWorkload
// (upstream's getHighestAllAncestor): "PodGroup/namespace/name" or
// "CompositePodGroup/namespace/name" of the highest group of its
// hierarchy whose disruption mode is All; ok is false when there is none
// (the pod is a victim of its own).
func (x *PodGroupIndex) GroupKey(p *v1.Pod) (kind, namespace, name string, ok bool) {
	pgName, in := PodGroupName(p)
	if !in {
		return "", "", "", false
	}
	pg := x.PodGroup(p.Namespace, pgName)
	if pg == nil {
		return "", "", "", false
	}
	if PodGroupModeAll(pg) {
		kind, namespace, name, ok = "PodGroup", p.Namespace, pg.Name, true
	}
	if !x.composite {
		return kind, namespace, name, ok
	}
	x.up(p.Namespace, pg, func(cpg *CompositePodGroup) {
		if CompositePodGroupModeAll(cpg) {
			kind, namespace, name, ok = "CompositePodGroup", p.Namespace, cpg.Name, true
		}
	})
	return kind, namespace, name, ok
}

// podGroupValidation is a create with every validation option the
// generated validators read enabled, as the API server's strategy enables
// an option for an object already using its feature: a cluster dump may
// hold fields written while a gate was on, and the scheduler reads them
// whatever its own gates say. What is left is the values: minCount of at
// least 1, enums, required fields, names.
var podGroupValidation = operation.Operation{Type: operation.Create, Options: map[string]bool{
	"CompositePodGroup":               true,
	"PodGroupPreemptionPolicy":        true,
	"TopologyAwareWorkloadScheduling": true,
}}

// ValidatePodGroupObject applies the API server's declarative validation
// of a PodGroup (k8s.io/kubernetes/pkg/apis/scheduling/v1beta1's
// Validate_PodGroup, copied into internal/kube/scheduling) to a defaulted copy, as the API server validates
// after defaulting (disruptionMode Single when unset), so that an object the API server would refuse (a
// minCount below 1, an unknown disruption mode) is refused here, naming
// it, rather than decided on.
func ValidatePodGroupObject(pg *PodGroup) error {
	errs := nameErrors(&pg.ObjectMeta)
	if len(errs) == 0 {
		defaulted := pg.DeepCopy()
		schedulingv1beta1val.SetObjectDefaults_PodGroup(defaulted)
		errs = schedulerRead(schedulingv1beta1val.Validate_PodGroup(context.Background(), podGroupValidation, nil, defaulted, nil))
	}
	if len(errs) > 0 {
		return fmt.Errorf("podgroup %s: %w", shownKey(&pg.ObjectMeta), errs.ToAggregate())
	}
	return nil
}

// ValidateCompositePodGroupObject is ValidatePodGroupObject for a
// CompositePodGroup (v1alpha3's Validate_CompositePodGroup).
func ValidateCompositePodGroupObject(cpg *CompositePodGroup) error {
	errs := nameErrors(&cpg.ObjectMeta)
	if len(errs) == 0 {
		defaulted := cpg.DeepCopy()
		schedulingv1alpha3val.SetObjectDefaults_CompositePodGroup(defaulted)
		errs = schedulerRead(schedulingv1alpha3val.Validate_CompositePodGroup(context.Background(), podGroupValidation, nil, defaulted, nil))
	}
	if len(errs) > 0 {
		return fmt.Errorf("compositepodgroup %s: %w", shownKey(&cpg.ObjectMeta), errs.ToAggregate())
	}
	return nil
}

// nameErrors are the API server's errors on the name of a PodGroup or a
// CompositePodGroup: the declarative validation (Validate_PodGroup)
// checks spec, a parent's name among it, but not metadata, which the
// handwritten ValidatePodGroup and ValidateCompositePodGroup of
// k8s.io/kubernetes/pkg/apis/scheduling/validation check with
// apimachinery's ValidateObjectMeta and NameIsDNSSubdomain (a lowercase
// RFC 1123 subdomain of at most 253 characters: "Train_X" is none). Only
// the name's errors are kept: the namespace, labels and annotations of a
// dump are not the scheduler's to refuse.
func nameErrors(m *metav1.ObjectMeta) field.ErrorList {
	var out field.ErrorList
	for _, e := range apimachineryvalidation.ValidateObjectMeta(m, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata")) {
		if e.Field == "metadata.name" {
			if s, ok := e.BadValue.(string); ok && len(s) > maxShownName {
				e.BadValue = shownName(s)
			}
			out = append(out, e)
		}
	}
	return out
}

// maxShownName is the longest name an error shows whole: a name is
// at most 253 characters, and one of megabytes would make the message as
// long.
const maxShownName = 253

// shownName is name cut to maxShownName bytes, saying how long it is.
func shownName(name string) string {
	if len(name) <= maxShownName {
		return name
	}
	cut := maxShownName
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", name[:cut], len(name))
}

// shownKey is the object's namespace/name for an error, its name cut.
func shownKey(m *metav1.ObjectMeta) string { return Key(m.Namespace, shownName(m.Name)) }

// schedulerRead drops the errors on what the scheduler neither reads nor
// needs: spec.workloadRef (required beside a parent, never read by
// preemption) and the one-of of spec.schedulingPolicy (a group with
// neither policy is scheduled as a basic one). Hand-written fixtures and
// dumps of clusters whose controllers left these out stay decidable.
func schedulerRead(errs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, e := range errs {
		if e.Field == "spec.workloadRef" || e.Field == "spec.schedulingPolicy" {
			continue
		}
		out = append(out, e)
	}
	return out
}
