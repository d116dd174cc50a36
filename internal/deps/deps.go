package deps

import (
	_ "github.com/google/go-cmp/cmp"
	_ "golang.org/x/perf/benchfmt"
	_ "golang.org/x/perf/benchmath"
	_ "golang.org/x/perf/benchproc"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/client-go/kubernetes/fake"
	_ "k8s.io/component-helpers/scheduling/corev1"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	_ "k8s.io/kubernetes/pkg/scheduler/testing/framework"
	_ "pgregory.net/rapid"
	_ "sigs.k8s.io/yaml"
)
