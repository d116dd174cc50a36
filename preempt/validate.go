package preempt

import (
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"

	"github.com/preemptbench/preemptbench/internal/schedulerconfig"
)

// ValidateExtenders applies upstream's validation of
// KubeSchedulerConfiguration.extenders (at most one binder, positive
// weights for prioritizers, valid managed resource names, no repeated
// managed resource), with upstream's messages.
func ValidateExtenders(exts []schedconfig.Extender) error {
	cfg, err := schedulerconfig.Default()
	if err != nil {
		return err
	}
	cfg.Extenders = exts
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return err
	}
	return nil
}
