// Package kube holds the pieces of k8s.io/kubernetes (the module's
// release, v1.37.2) that the contract (preempt) and the suite (preempttest)
// need, so that neither imports a k8s.io/kubernetes package and a module
// outside this one runs the suite after a plain `go get`, with no replace
// lines for k8s.io/kubernetes's staging modules. Its packages:
//
//   - features: the release's feature gate (every gate kube-scheduler
//     registers, with its versioned defaults, locks and dependencies),
//     generated from k8s.io/kubernetes/pkg/features.
//   - scheduling/v1beta1, scheduling/v1alpha3: the API server's declarative
//     validation and defaulting of PodGroup and CompositePodGroup, the
//     generated files copied as they are.
//   - v1helper, podutil: the few helpers of pkg/apis/core/v1/helper and
//     pkg/api/v1/pod that the resource arithmetic and the actuation use,
//     ported.
//
// The suite's tables build their objects with internal/testobj, not with
// a copy of pkg/scheduler/testing's wrappers. The extenders' and
// DefaultPreemptionArgs' validation (pkg/scheduler/apis/config/validation)
// is ported into preempt (validate.go) on kube-scheduler's config/v1 types
// (k8s.io/kube-scheduler, a staging module, not k8s.io/kubernetes).
//
// What is generated or copied comes from `go generate ./internal/kube`
// (package gen), and gen's TestGeneratedFilesAreUpToDate fails when a
// file differs from what the module's k8s.io/kubernetes gives. What is
// ported is checked against upstream by a test beside it, which may import
// k8s.io/kubernetes: tests are not in the dependency list of the packages
// that use these (preempttest's TestContractAndSuiteImportNoKubernetes
// checks that list).
package kube

//go:generate go run ./gen
