package schedplugin

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	k8sjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/preemptbench/preemptbench/preempt"
)

// Args are the plugin's args (pluginConfig[].args of its name in a
// KubeSchedulerConfiguration), decoded from JSON or YAML.
type Args struct {
	// Impl names the implementation that decides: optimized (the
	// default), reference or upstream.
	Impl string `json:"impl,omitempty"`
	// MinCandidateNodesPercentage and MinCandidateNodesAbsolute are
	// DefaultPreemptionArgs' (defaults 10 and 100): the implementation
	// and the fallback DefaultPreemption both use them.
	MinCandidateNodesPercentage *int32 `json:"minCandidateNodesPercentage,omitempty"`
	MinCandidateNodesAbsolute   *int32 `json:"minCandidateNodesAbsolute,omitempty"`
}

// DefaultImpl is the implementation when Args.Impl is empty.
const DefaultImpl = "optimized"

// decodeArgs decodes obj (nil, *runtime.Unknown as the scheduler hands
// out-of-tree args, or *Args) and applies the defaults.
func decodeArgs(obj runtime.Object) (Args, preempt.Config, error) {
	var a Args
	switch o := obj.(type) {
	case nil:
	case *Args:
		a = *o
	case *runtime.Unknown:
		// Strictly, as kube-scheduler decodes its in-tree plugins' args:
		// an unknown field ("implementation", "IMPL") or a duplicate one
		// is an error, never the default implementation taken silently.
		raw := o.Raw
		if o.ContentType == runtime.ContentTypeYAML {
			var err error
			if raw, err = yaml.YAMLToJSON(raw); err != nil {
				return a, preempt.Config{}, fmt.Errorf("%s args: %w", Name, err)
			}
		}
		strictErrs, err := k8sjson.UnmarshalStrict(raw, &a)
		if err != nil {
			return a, preempt.Config{}, fmt.Errorf("%s args: %w", Name, err)
		}
		if len(strictErrs) > 0 {
			return a, preempt.Config{}, fmt.Errorf("%s args: %w (the fields are impl, minCandidateNodesPercentage and minCandidateNodesAbsolute)", Name, errors.Join(strictErrs...))
		}
	default:
		if err := frameworkruntime.DecodeInto(obj, &a); err != nil {
			return a, preempt.Config{}, fmt.Errorf("%s args: %w", Name, err)
		}
	}
	if a.Impl == "" {
		a.Impl = DefaultImpl
	}
	cfg := preempt.DefaultConfig()
	if a.MinCandidateNodesPercentage != nil {
		cfg.MinCandidateNodesPercentage = *a.MinCandidateNodesPercentage
	}
	if a.MinCandidateNodesAbsolute != nil {
		cfg.MinCandidateNodesAbsolute = *a.MinCandidateNodesAbsolute
	}
	if err := cfg.Validate(); err != nil {
		return a, cfg, fmt.Errorf("%s args: %w", Name, err)
	}
	return a, cfg, nil
}

// GetObjectKind and DeepCopyObject make *Args a runtime.Object, so a
// program building a scheduler in Go (scheduler.New with
// WithFrameworkOutOfTreeRegistry) can pass it as the plugin's args.
func (a *Args) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject copies a.
func (a *Args) DeepCopyObject() runtime.Object {
	c := *a
	if a.MinCandidateNodesPercentage != nil {
		v := *a.MinCandidateNodesPercentage
		c.MinCandidateNodesPercentage = &v
	}
	if a.MinCandidateNodesAbsolute != nil {
		v := *a.MinCandidateNodesAbsolute
		c.MinCandidateNodesAbsolute = &v
	}
	return &c
}
