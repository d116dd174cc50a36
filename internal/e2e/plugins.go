package e2e

import (
	"fmt"

	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// Registry is the out-of-tree registry scheduler_perf's scheduler gets
// for impl: none for the stock scheduler.
func Registry(impl string) (frameworkruntime.Registry, error) {
	if impl == Stock {
		return nil, nil
	}
	return nil, fmt.Errorf("implementation %q cannot be plugged into kube-scheduler yet", impl)
}

// SchedulerConfig is the KubeSchedulerConfiguration that plugs impl in
// place of DefaultPreemption: none for the stock scheduler.
func SchedulerConfig(impl string) ([]byte, error) {
	if impl == Stock {
		return nil, nil
	}
	return nil, fmt.Errorf("implementation %q cannot be plugged into kube-scheduler yet", impl)
}
