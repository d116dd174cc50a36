package cli

import (
	"fmt"
	"os"
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	configconv "k8s.io/kubernetes/pkg/scheduler/apis/config/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"

	"github.com/preemptbench/preemptbench/internal/loader"
	"github.com/preemptbench/preemptbench/internal/schedulerconfig"
	"github.com/preemptbench/preemptbench/preempt"
)

// maxConfigBytes bounds a -config file.
const maxConfigBytes = 16 << 20

// schedulerConfig is a KubeSchedulerConfiguration file as kube-scheduler
// reads it (its --config): decoded strictly by upstream's own scheme,
// defaulted and validated by upstream's validation.
type schedulerConfig struct {
	file string
	cfg  *config.KubeSchedulerConfiguration
}

func readSchedulerConfig(file string) (*schedulerConfig, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxConfigBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a scheduler configuration may have", file, st.Size(), maxConfigBytes)
	}
	// Read through the bound whatever the file is: a device or a pipe
	// has no size (-config /dev/zero read on, without end).
	path := file
	if path == "-" {
		path = "./-" // a file named "-", not standard input
	}
	data, err := loader.ReadInput(path, loader.Options{MaxBytes: maxConfigBytes})
	if loader.TooLarge(err) {
		return nil, fmt.Errorf("%s: more than the %d bytes a scheduler configuration may have", file, maxConfigBytes)
	}
	if err != nil {
		return nil, err
	}
	obj, gvk, err := scheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	cfg, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("%s: a %s, want a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)", file, gvk)
	}
	cfg.TypeMeta.APIVersion = gvk.GroupVersion().String()
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, fmt.Errorf("%s: invalid KubeSchedulerConfiguration: %v", file, err)
	}
	return &schedulerConfig{file: file, cfg: cfg}, nil
}

// defaultFullProfile is the default profile with its DefaultPreemption.
func defaultFullProfile() (*config.KubeSchedulerProfile, error) {
	cfg, err := schedulerconfig.Default()
	if err != nil {
		return nil, err
	}
	return &cfg.Profiles[0], nil
}

// preemptConfig is what pod's preemption reads of the configuration: the
// DefaultPreemptionArgs of the profile named by the pod's schedulerName,
// the extenders and the actuation mode. A configuration under which the
// project would not give upstream's answer is refused, naming what: a
// profile whose plugins or plugin args differ from the default profile's
// (other than DefaultPreemption's args), an extender resource the
// scheduler ignores (it changes NodeResourcesFit).
func (sc *schedulerConfig) preemptConfig(pod *v1.Pod, synchronous bool) (preempt.Config, error) {
	name := pod.Spec.SchedulerName
	if name == "" {
		name = v1.DefaultSchedulerName
	}
	var prof *config.KubeSchedulerProfile
	var known []string
	for i := range sc.cfg.Profiles {
		known = append(known, sc.cfg.Profiles[i].SchedulerName)
		if sc.cfg.Profiles[i].SchedulerName == name {
			prof = &sc.cfg.Profiles[i]
		}
	}
	if prof == nil {
		return preempt.Config{}, fmt.Errorf("%s: no profile for the pod's scheduler %q (profiles: %s): kube-scheduler would not schedule it", sc.file, name, strings.Join(known, ", "))
	}
	def, err := defaultFullProfile()
	if err != nil {
		return preempt.Config{}, err
	}
	if !reflect.DeepEqual(prof.Plugins, def.Plugins) {
		return preempt.Config{}, fmt.Errorf("%s: profile %q enables or disables plugins: only the default profile's plugins are modelled", sc.file, name)
	}
	out := preempt.DefaultConfig()
	out.Synchronous = synchronous
	defArgs := map[string]runtime.Object{}
	for _, pc := range def.PluginConfig {
		defArgs[pc.Name] = pc.Args
	}
	for _, pc := range prof.PluginConfig {
		if pc.Name == names.DefaultPreemption {
			args, ok := pc.Args.(*config.DefaultPreemptionArgs)
			if !ok {
				return preempt.Config{}, fmt.Errorf("%s: profile %q: DefaultPreemption args of an unexpected kind", sc.file, name)
			}
			out.MinCandidateNodesPercentage = args.MinCandidateNodesPercentage
			out.MinCandidateNodesAbsolute = args.MinCandidateNodesAbsolute
			continue
		}
		if !reflect.DeepEqual(pc.Args, defArgs[pc.Name]) {
			return preempt.Config{}, fmt.Errorf("%s: profile %q sets %s args: only the default args of the default profile's plugins are modelled (DefaultPreemption's may change)", sc.file, name, pc.Name)
		}
	}
	for i, e := range sc.cfg.Extenders {
		for _, r := range e.ManagedResources {
			if r.IgnoredByScheduler {
				return preempt.Config{}, fmt.Errorf("%s: extenders[%d] makes the scheduler ignore %s (ignoredByScheduler): NodeResourcesFit's ignored resources are not modelled", sc.file, i, r.Name)
			}
		}
	}
	out.Extenders, err = v1Extenders(sc.cfg.Extenders)
	if err != nil {
		return preempt.Config{}, err
	}
	return out, nil
}

// v1Extenders are exts in kubescheduler.config.k8s.io/v1, preempt.Config's
// type for them: upstream's conversion, the same fields.
func v1Extenders(exts []config.Extender) ([]configv1.Extender, error) {
	if exts == nil {
		return nil, nil
	}
	out := make([]configv1.Extender, len(exts))
	for i := range exts {
		if err := configconv.Convert_config_Extender_To_v1_Extender(exts[i].DeepCopy(), &out[i], nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// filterExtenderFor is the first extender with a filter verb interested in
// pod, "" for none: kube-scheduler calls it on the nodes the filters let
// through, which the project does not model.
func filterExtenderFor(exts []configv1.Extender, pod *v1.Pod) string {
	for _, e := range exts {
		if e.FilterVerb == "" {
			continue
		}
		if len(e.ManagedResources) == 0 || usesAny(pod, e.ManagedResources) {
			return e.URLPrefix
		}
	}
	return ""
}

func usesAny(pod *v1.Pod, rs []configv1.ExtenderManagedResource) bool {
	for _, cs := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range cs {
			for _, r := range rs {
				name := v1.ResourceName(r.Name)
				if _, ok := c.Resources.Requests[name]; ok {
					return true
				}
				if _, ok := c.Resources.Limits[name]; ok {
					return true
				}
			}
		}
	}
	return false
}
