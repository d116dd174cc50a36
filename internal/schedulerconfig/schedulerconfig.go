// Package schedulerconfig builds kube-scheduler's default configuration
// once, through upstream's own scheme (defaulting and conversion), for
// every package that needs it: the upstream adapter's default profile,
// the command's -config checks and the extenders' validation.
package schedulerconfig

import (
	"fmt"
	"sync"

	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
)

var defaulted = sync.OnceValues(build)

// DefaultUnderGates is Default computed afresh, under the process's
// feature gates as they are now (Default's is computed once, under the
// gates of its first call): the gated plugins (GangScheduling under
// GenericWorkload, ...) follow them.
func DefaultUnderGates() (*config.KubeSchedulerConfiguration, error) {
	return build()
}

func build() (*config.KubeSchedulerConfiguration, error) {
	versioned := &configv1.KubeSchedulerConfiguration{}
	scheme.Scheme.Default(versioned)
	cfg := &config.KubeSchedulerConfiguration{}
	if err := scheme.Scheme.Convert(versioned, cfg, nil); err != nil {
		return nil, fmt.Errorf("the default scheduler configuration: %w", err)
	}
	if len(cfg.Profiles) != 1 {
		return nil, fmt.Errorf("the default scheduler configuration has %d profiles, want 1", len(cfg.Profiles))
	}
	return cfg, nil
}

// Default returns the configuration kube-scheduler runs with an empty
// configuration file: one profile, default-scheduler, with the default
// plugins (and the feature-gated ones the process's gates enable) and
// every plugin's default args. Each call returns a copy of its own.
func Default() (*config.KubeSchedulerConfiguration, error) {
	cfg, err := defaulted()
	if err != nil {
		return nil, err
	}
	return cfg.DeepCopy(), nil
}
