package preempt

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/featuregate"

	"github.com/preemptbench/preemptbench/internal/kube/features"
)

// AsyncPreemptionGate is the gate Config.Synchronous stands for.
const AsyncPreemptionGate = "SchedulerAsyncPreemption"

// pristineGates is kube-scheduler's feature gate
// (utilfeature.DefaultMutableFeatureGate) as the process starts, before
// anything sets a gate on it (the upstream adapter does, for the duration
// of a call): the known features, their defaults, locks and dependencies
// at the release's version. It is v1.37.2's, generated from
// k8s.io/kubernetes/pkg/features (internal/kube/features), unless the
// process runs an adapter of another release, which gives its own
// (features.UseReleaseGate, from its init function).
func pristineGates() featuregate.MutableVersionedFeatureGate { return features.ReleaseGate() }

// defaultGates is a copy of pristineGates to set gates on. (DeepCopyAndReset
// would lose the dependencies.)
func defaultGates() featuregate.MutableVersionedFeatureGate {
	return pristineGates().DeepCopy()
}

// ParseFeatureGates parses value as kube-scheduler's --feature-gates
// ("K=V,K2=V2"): component-base's FeatureGate.Set on a copy of its gate,
// with its errors (a missing or bad value, an unknown gate, a gate locked
// to its default, a gate enabled without the gates it depends on). The
// result holds the gates value sets, nil for an empty value.
func ParseFeatureGates(value string) (map[string]bool, error) {
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	if err := defaultGates().Set(value); err != nil {
		return nil, err
	}
	m := map[string]bool{}
	for _, s := range strings.Split(value, ",") {
		if k, v, ok := strings.Cut(s, "="); ok {
			b, _ := strconv.ParseBool(strings.TrimSpace(v)) // Set accepted it
			m[strings.TrimSpace(k)] = b
		}
	}
	return m, nil
}

// ValidateFeatureGates applies component-base's FeatureGate.SetFromMap to
// gates on a copy of kube-scheduler's gate: nil, or its error.
func ValidateFeatureGates(gates map[string]bool) error {
	if len(gates) == 0 {
		return nil
	}
	key := FormatFeatureGates(gates)
	if err, ok := gateChecks.Load(key); ok {
		return err.(gateCheck).err
	}
	err := defaultGates().SetFromMap(gates)
	if gateChecksN.Add(1) <= maxGateChecks {
		gateChecks.Store(key, gateCheck{err})
	}
	return err
}

// gateChecks memoises ValidateFeatureGates by the gates' canonical form
// (FormatFeatureGates): its answer depends on nothing else, and the copy
// of kube-scheduler's gate it sets them on costs hundreds of allocations,
// paid per request otherwise (a stream repeats one configuration).
// maxGateChecks bounds what is kept.
var (
	gateChecks  sync.Map // string -> gateCheck
	gateChecksN atomic.Int64
)

const maxGateChecks = 256

type gateCheck struct{ err error }

// FormatFeatureGates is gates as --feature-gates takes them, sorted.
func FormatFeatureGates(gates map[string]bool) string {
	var s []string
	for k, v := range gates {
		s = append(s, fmt.Sprintf("%s=%t", k, v))
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

// gateDefaults is every known gate's default, computed once.
var gateDefaults = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	g := pristineGates()
	for k := range g.GetAll() {
		m[string(k)] = g.Enabled(k)
	}
	return m
})

// ChangedGates is the gates of gates set to a value other than their
// default, sorted: setting a gate to its default changes nothing. (An
// unknown gate counts as changed; ValidateFeatureGates refuses it.)
func ChangedGates(gates map[string]bool) []string {
	if len(gates) == 0 {
		return nil
	}
	defaults := gateDefaults()
	var out []string
	for k, v := range gates {
		if d, ok := defaults[k]; !ok || d != v {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// GateLimited is implemented by an implementation that models only some
// feature gates away from their defaults. ModelledGates lists them; the
// implementation refuses a Config that sets any other gate to a value
// other than its default (GateGaps). An implementation without it is taken
// to read Config.FeatureGates itself.
type GateLimited interface {
	ModelledGates() []string
}

// GateUseLimited is implemented by an implementation that models a gate
// only for part of its uses: UnmodelledGateUse reports the first object of
// c, or of the preemptor pod, a gate cfg sets changes in a way not
// modelled, or nil.
type GateUseLimited interface {
	UnmodelledGateUse(c *Cluster, pod *v1.Pod, cfg Config) *Unmodelled
}

// SinglePodGates are the feature gates the implementations of single-pod
// preemption (reference and optimized) model away from their defaults;
// they refuse a Config that sets any other gate to a value other than its
// default. SchedulerAsyncPreemption is Config.Synchronous.
// GenericWorkload=true changes nothing for pods outside pod groups; pods
// in one are victims as v1.37.2 groups them (reference and optimized add
// the pod-group gates they model to these; an implementation that models
// no pod group refuses them with PodGroupGaps). The resource helpers (podinfo)
// read the gates at their defaults, once, so
// InPlacePodLevelResourcesVerticalScaling, PodLevelResources and
// DRANodeAllocatableResources are not modelled and refused, like every
// other gate.
func SinglePodGates() []string { return []string{GenericWorkloadGate} }

// GenericWorkloadGate groups the pods of a PodGroup into one victim in
// v1.37's GetVictimsOnNode (getCrossNodesVictims) and sorts such victims
// apart (MoreImportantVictim); a pod without spec.schedulingGroup stays a
// victim of its own, at its own priority, as with the gate off.
const GenericWorkloadGate = "GenericWorkload"

// CompositePodGroupGate is the gate under which upstream reads the
// CompositePodGroup hierarchy above a PodGroup (off by default in v1.37.2).
const CompositePodGroupGate = "CompositePodGroup"

// PodGroupGaps is UnmodelledGateUse for an implementation that models
// GenericWorkload for single pods only: with the gate on, the first pod of
// c, or the preemptor, that belongs to a pod group (spec.schedulingGroup).
func PodGroupGaps(c *Cluster, pod *v1.Pod, cfg Config) *Unmodelled {
	if !cfg.FeatureGates[GenericWorkloadGate] {
		return nil
	}
	inGroup := func(p *v1.Pod) *Unmodelled {
		if _, set := schedulingGroup(p); !set {
			return nil
		}
		return &Unmodelled{"pod groups (GenericWorkload=true)", "pod " + Key(p.Namespace, p.Name), "belongs to a pod group (spec.schedulingGroup)"}
	}
	if pod != nil {
		if u := inGroup(pod); u != nil {
			return u
		}
	}
	for _, p := range c.Pods {
		if u := inGroup(p); u != nil {
			return u
		}
	}
	return nil
}

// GateGaps is the first gate of cfg set away from its default that is not
// in modelled (SchedulerAsyncPreemption is always modelled: it is
// Config.Synchronous), or nil.
func GateGaps(cfg Config, modelled []string) *Unmodelled {
	for _, k := range ChangedGates(cfg.FeatureGates) {
		if k == AsyncPreemptionGate || contains(modelled, k) {
			continue
		}
		v := cfg.FeatureGates[k]
		return &Unmodelled{
			Feature: "feature gate " + k,
			Object:  "the configuration",
			Detail:  fmt.Sprintf("sets %s=%t (%s's default is %t)", k, v, CurrentRelease, !v),
		}
	}
	return nil
}

func contains(s []string, k string) bool {
	for _, x := range s {
		if x == k {
			return true
		}
	}
	return false
}

// GateSetter is an Evaluator whose filter phase reads the feature gates:
// its Filter (and FilterCodes) run with the gates last given to
// SetFeatureGates (none: the defaults). A request's stages run with the
// request's Config.FeatureGates.
type GateSetter interface {
	SetFeatureGates(gates map[string]bool)
}

// SetFeatureGates gives gates to ev when it is a GateSetter.
func SetFeatureGates(ev Evaluator, gates map[string]bool) {
	if s, ok := ev.(GateSetter); ok {
		s.SetFeatureGates(gates)
	}
}
