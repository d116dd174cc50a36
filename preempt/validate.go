package preempt

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/preemptbench/preemptbench/internal/kube/v1helper"
)

// The validations below are k8s.io/kubernetes v1.37.2's
// (pkg/scheduler/apis/config/validation), ported so that the contract
// imports no k8s.io/kubernetes package; TestValidationIsUpstreams compares
// them with upstream's.

// ValidateExtenders applies upstream's validation of
// KubeSchedulerConfiguration.extenders (at most one binder, positive
// weights for prioritizers, valid managed resource names, no repeated
// managed resource), with upstream's messages: what
// ValidateKubeSchedulerConfiguration answers for the default configuration
// with these extenders.
func ValidateExtenders(exts []configv1.Extender) error {
	errs := validateExtenders(field.NewPath("extenders"), exts)
	if len(errs) == 0 {
		return nil
	}
	return utilerrors.Flatten(utilerrors.NewAggregate(errs))
}

// validateExtenders is upstream's.
func validateExtenders(fldPath *field.Path, extenders []configv1.Extender) []error {
	var errs []error
	binders := 0
	extenderManagedResources := sets.New[string]()
	for i, extender := range extenders {
		path := fldPath.Index(i)
		if len(extender.PrioritizeVerb) > 0 && extender.Weight <= 0 {
			errs = append(errs, field.Invalid(path.Child("weight"),
				extender.Weight, "must have a positive weight applied to it"))
		}
		if extender.BindVerb != "" {
			binders++
		}
		for j, resource := range extender.ManagedResources {
			managedResourcesPath := path.Child("managedResources").Index(j)
			validationErrors := validateExtendedResourceName(managedResourcesPath.Child("name"), v1.ResourceName(resource.Name))
			errs = append(errs, validationErrors...)
			if extenderManagedResources.Has(resource.Name) {
				errs = append(errs, field.Invalid(managedResourcesPath.Child("name"),
					resource.Name, "duplicate extender managed resource name"))
			}
			extenderManagedResources.Insert(resource.Name)
		}
	}
	if binders > 1 {
		errs = append(errs, field.Invalid(fldPath, fmt.Sprintf("found %d extenders implementing bind", binders), "only one extender can implement bind"))
	}
	return errs
}

// validateExtendedResourceName is upstream's.
func validateExtendedResourceName(path *field.Path, name v1.ResourceName) []error {
	var validationErrors []error
	for _, msg := range validation.IsQualifiedName(string(name)) {
		validationErrors = append(validationErrors, field.Invalid(path, name, msg))
	}
	if len(validationErrors) != 0 {
		return validationErrors
	}
	if !v1helper.IsExtendedResourceName(name) {
		validationErrors = append(validationErrors, field.Invalid(path, string(name), "is an invalid extended resource name"))
	}
	return validationErrors
}

// validateDefaultPreemptionArgs is upstream's ValidateDefaultPreemptionArgs
// (at the root path, as kube-scheduler's plugin factory calls it).
func validateDefaultPreemptionArgs(minCandidateNodesPercentage, minCandidateNodesAbsolute int32) error {
	var path *field.Path
	var allErrs field.ErrorList
	percentagePath := path.Child("minCandidateNodesPercentage")
	absolutePath := path.Child("minCandidateNodesAbsolute")
	if minCandidateNodesPercentage < 0 || minCandidateNodesPercentage > 100 {
		allErrs = append(allErrs, field.Invalid(percentagePath, minCandidateNodesPercentage, "not in valid range [0, 100]"))
	}
	if minCandidateNodesAbsolute < 0 {
		allErrs = append(allErrs, field.Invalid(absolutePath, minCandidateNodesAbsolute, "not in valid range [0, inf)"))
	}
	if minCandidateNodesPercentage == 0 && minCandidateNodesAbsolute == 0 {
		allErrs = append(allErrs,
			field.Invalid(percentagePath, minCandidateNodesPercentage, "cannot be zero at the same time as minCandidateNodesAbsolute"),
			field.Invalid(absolutePath, minCandidateNodesAbsolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
	}
	return allErrs.ToAggregate()
}
