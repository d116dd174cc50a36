package upstream

import (
	"sync"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"

	"github.com/preemptbench/preemptbench/preempt"
)

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
	changed := map[string]bool{}
	for _, k := range preempt.ChangedGates(gates) {
		changed[k] = gates[k]
	}
	return preempt.FormatFeatureGates(changed)
}

// lock takes the evaluator's mutex and sets gates on the process's gate,
// until the returned function runs. A failure to set them is kept in
// ev.gateErr for the stages to report.
func (ev *evaluator) lock(gates map[string]bool) func() {
	ev.mu.Lock()
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

func gatesOf(req *preempt.Request) map[string]bool {
	if req == nil {
		return nil
	}
	return req.Config.FeatureGates
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
