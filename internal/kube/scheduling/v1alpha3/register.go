// Package v1alpha3 is the API server's declarative validation and
// defaulting of scheduling.k8s.io/v1alpha3 objects (PodGroup,
// CompositePodGroup, ...) at k8s.io/kubernetes v1.37.2, without
// k8s.io/kubernetes:
// zz_generated.validations.go and zz_generated.defaults.go are
// k8s.io/kubernetes/pkg/apis/scheduling/v1alpha3's, copied byte for byte
// (package kube's gen), and defaults.go is that package's defaults.go with
// the gates read at the release's defaults.
package v1alpha3

import "k8s.io/apimachinery/pkg/runtime"

// localSchemeBuilder receives the generated validations' registration
// (upstream's registers on k8s.io/api's scheme builder; this copy keeps
// them to itself). Nothing adds it to a scheme: callers call Validate_*
// and SetObjectDefaults_* directly.
var localSchemeBuilder runtime.SchemeBuilder
