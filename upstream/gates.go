package upstream

import (
	"fmt"
	"sync"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"

	"github.com/preemptbench/preemptbench/internal/kube/features"
	"github.com/preemptbench/preemptbench/preempt"
)

// The gates preempt validates a Config's against (ParseFeatureGates,
// ValidateFeatureGates, ChangedGates) are this adapter's release's:
// kube-scheduler's gate as the process starts, before any evaluator sets
// one on it (k8s.io/kubernetes/pkg/features, which this package imports,
// has registered them). At the current release it is the table preempt
// would use anyway (TestReleaseGateIsTheTable); at an earlier one it is
// that release's, not the table (releases' TestChildValidatesItsGates).
func init() { features.UseReleaseGate(utilfeature.DefaultMutableFeatureGate) }

// The process's feature gate is global: kube-scheduler's plugins read it
// when the framework is built (NewInTreeRegistry, NewSchedulerFeaturesFromGates)
// and some code reads utilfeature.DefaultFeatureGate when called (the
// resource helpers, for one). An evaluator runs with its gates set on
// utilfeature.DefaultMutableFeatureGate, holding gateMu: shared by the
// evaluators with no gates set, exclusive for one that sets some; the
// previous values are restored when it is done.
var gateMu sync.RWMutex

// useGates sets gates on the process's gate until the returned function
// runs.
func useGates(gates map[string]bool) (restore func(), err error) {
	if len(gates) == 0 {
		gateMu.RLock()
		return gateMu.RUnlock, nil
	}
	// A gate the process does not register would panic in Enabled below,
	// gateMu held (an earlier release's child asked directly for a gate of
	// a later one): refused first.
	known := utilfeature.DefaultMutableFeatureGate.GetAll()
	for k := range gates {
		if _, ok := known[featuregate.Feature(k)]; !ok {
			return nil, fmt.Errorf("unrecognized feature gate: %s (kube-scheduler %s has no such gate)", k, Version)
		}
	}
	gateMu.Lock()
	prev := make(map[string]bool, len(gates))
	for k := range gates {
		prev[k] = utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(k))
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates); err != nil {
		gateMu.Unlock()
		return nil, err
	}
	return func() {
		// prev held together before, so it is accepted now.
		_ = utilfeature.DefaultMutableFeatureGate.SetFromMap(prev)
		gateMu.Unlock()
	}, nil
}

// gateKey is the gates set away from their defaults, as --feature-gates
// takes them: what a world depends on of the gates.
func gateKey(gates map[string]bool) string {
	if len(gates) == 0 {
		return ""
	}
	changed := map[string]bool{}
	for _, k := range preempt.ChangedGates(gates) {
		changed[k] = gates[k]
	}
	return preempt.FormatFeatureGates(changed)
}

// lock takes the evaluator's mutex and sets the gates req runs with
// (req.Config.FeatureGates; with no request, those SetFeatureGates gave)
// on the process's gate, until the returned function runs.
func (ev *evaluator) lock(req *preempt.Request) func() {
	ev.mu.Lock()
	gates := ev.gates
	if req != nil {
		gates = req.Config.FeatureGates
	}
	unlock := ev.useGatesLocked(gates)
	if req != nil && ev.gateErr == nil {
		if u := preempt.ReleaseGap(Version, req.Config); u != nil {
			ev.gateErr = u
		}
	}
	return unlock
}

// lockWorld is lock with the gates the cached world was built under.
func (ev *evaluator) lockWorld() func() {
	ev.mu.Lock()
	var gates map[string]bool
	if ev.w != nil {
		gates = ev.w.gates
	}
	return ev.useGatesLocked(gates)
}

// useGatesLocked sets gates on the process's gate, ev.mu held, until the
// returned function runs, which also releases ev.mu. A failure to set them
// is kept in ev.gateErr for the stages to report.
func (ev *evaluator) useGatesLocked(gates map[string]bool) func() {
	restore, err := useGates(gates)
	ev.gateErr = err
	if err != nil {
		return ev.mu.Unlock
	}
	return func() {
		restore()
		ev.mu.Unlock()
	}
}

// SetFeatureGates sets the gates Filter runs with (preempt.GateSetter).
func (ev *evaluator) SetFeatureGates(gates map[string]bool) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.gates = gates
}

// upstream runs kube-scheduler itself: it models every gate, so it is no
// preempt.GateLimited.
var _ preempt.GateSetter = (*evaluator)(nil)
