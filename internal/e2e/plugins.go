package e2e

import (
	"fmt"
	"slices"

	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/preemptbench/preemptbench/schedplugin"
)

// Plugged are the implementations the plugin (package schedplugin) runs.
var Plugged = []string{"optimized", "reference", "upstream"}

// Registry is the out-of-tree registry scheduler_perf's scheduler gets
// for impl: none for the stock scheduler, the plugin otherwise.
func Registry(impl string) (frameworkruntime.Registry, error) {
	if impl == Stock {
		return nil, nil
	}
	if !slices.Contains(Plugged, impl) {
		return nil, fmt.Errorf("unknown preemption %q (known: %s, optimized, reference, upstream)", impl, Stock)
	}
	return frameworkruntime.Registry{schedplugin.Name: schedplugin.New}, nil
}

// SchedulerConfig is the KubeSchedulerConfiguration that plugs impl in
// place of DefaultPreemption (docs/real-scheduler.md): none for the stock
// scheduler.
func SchedulerConfig(impl string) ([]byte, error) {
	if _, err := Registry(impl); err != nil || impl == Stock {
		return nil, err
	}
	return fmt.Appendf(nil, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: %[1]s
      disabled:
      - name: DefaultPreemption
  pluginConfig:
  - name: %[1]s
    args:
      impl: %[2]s
`, schedplugin.Name, impl), nil
}
