package reference

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/preempt"
)

// The filter plugin seam. It mirrors upstream's (k8s.io/kube-scheduler
// framework/interface.go: FilterPlugin, PreFilterPlugin,
// PreFilterExtensions, StateData, CycleState) with what this model needs
// and nothing else: a plugin is a value with a name and a Filter; it may
// have a PreFilter, which computes per-pod state once per scheduling cycle
// or returns Skip; a plugin whose state depends on the pods of the cluster
// also has AddPod and RemovePod, which update that state as the framework
// adds a pod to a node or removes one. The profile (profile.go) lists the
// plugins in order; everything else (Filter, the nominated pods, the dry
// run's victim selection) goes through cycleState below and names no
// plugin.

// filterPlugin is upstream's FilterPlugin. Filter decides whether pod fits
// node, which holds the pods as the caller has them (victims removed,
// nominated pods added); state is what the plugin's PreFilter returned
// for pod, nil for a plugin without PreFilter.
type filterPlugin interface {
	Name() string
	Filter(state stateData, pod *v1.Pod, node *nodeState) preempt.Status
}

// preFilterPlugin is upstream's PreFilterPlugin: PreFilter computes the
// plugin's state for pod from the cluster's nodes and their bound pods.
// skip is upstream's Skip status: the plugin's Filter and extensions do
// not run for pod in this cycle.
type preFilterPlugin interface {
	filterPlugin
	PreFilter(ev *evaluator, pod *v1.Pod) (state stateData, skip bool)
}

// preFilterFailer is a preFilterPlugin whose PreFilter can fail (neither
// Success nor Skip): PreFilterStatus is that failure, or Success. The
// first failure ends RunPreFilterPlugins, and every node gets it.
type preFilterFailer interface {
	preFilterPlugin
	PreFilterStatus(ev *evaluator, pod *v1.Pod) preempt.Status
}

// preFilterExtensions is upstream's PreFilterExtensions: AddPod and
// RemovePod update the PreFilter state of pod for added or removed being
// put on or taken off node (node already holds the change).
type preFilterExtensions interface {
	AddPod(state stateData, pod, added *v1.Pod, node *nodeState)
	RemovePod(state stateData, pod, removed *v1.Pod, node *nodeState)
}

// stateData is upstream's StateData: a plugin's PreFilter state. clone
// returns a copy AddPod and RemovePod may change without touching the
// original; a state they never change may return itself.
type stateData interface {
	clone() stateData
}

// cycleState is upstream's CycleState for one pod: the profile's plugins
// that did not Skip, in profile order, each with its PreFilter state.
type cycleState struct {
	running []runningPlugin
	// failed is the PreFilter failure (preFilterFailer, or a PreFilter
	// whose state is a rejection), nil without one, and failedAt the
	// failing plugin's place in the profile.
	failed   *preempt.Status
	failedAt int
}

type runningPlugin struct {
	plugin filterPlugin
	state  stateData
}

// preFilter is RunPreFilterPlugins over the default profile.
func (ev *evaluator) preFilter(pod *v1.Pod) *cycleState {
	cs := &cycleState{}
	for i, pl := range defaultProfile {
		var state stateData
		if pf, ok := pl.(preFilterFailer); ok {
			if st := pf.PreFilterStatus(ev, pod); !st.IsSuccess() {
				cs.failed, cs.failedAt = &st, i
				return cs
			}
		}
		if pf, ok := pl.(preFilterPlugin); ok {
			var skip bool
			if state, skip = pf.PreFilter(ev, pod); skip {
				continue
			}
			if r, ok := state.(rejection); ok {
				cs.failed, cs.failedAt = &r.status, i
				return cs
			}
		}
		cs.running = append(cs.running, runningPlugin{plugin: pl, state: state})
	}
	return cs
}

// rejectedBeforeDRA is whether PreFilter stopped with
// UnschedulableAndUnresolvable at a plugin before DynamicResources
// (preempt.FilterResult.PreFilterRejected).
func (cs *cycleState) rejectedBeforeDRA() bool {
	if cs.failed == nil || cs.failed.Code != preempt.UnschedulableAndUnresolvable {
		return false
	}
	for _, pl := range defaultProfile[:cs.failedAt+1] {
		if pl.Name() == "DynamicResources" {
			return false
		}
	}
	return true
}

// reachedDRA is whether PreFilter ran DynamicResources' PreFilter, which
// writes its state (and its pod-group state, in a pod-group cycle) before
// anything else: no plugin before it rejected the pod.
func (cs *cycleState) reachedDRA() bool {
	if cs.failed == nil {
		return true
	}
	for _, pl := range defaultProfile[:cs.failedAt+1] {
		if pl.Name() == "DynamicResources" {
			return true
		}
	}
	return false
}

// clone is CycleState.Clone: every state cloned.
func (cs *cycleState) clone() *cycleState {
	out := &cycleState{running: make([]runningPlugin, len(cs.running)), failed: cs.failed, failedAt: cs.failedAt}
	for i, r := range cs.running {
		out.running[i] = r
		if r.state != nil {
			out.running[i].state = r.state.clone()
		}
	}
	return out
}

// runFilterPlugins is RunFilterPlugins: the running plugins' Filters in
// order, up to the first failure.
func (cs *cycleState) runFilterPlugins(pod *v1.Pod, node *nodeState) preempt.Status {
	if cs.failed != nil {
		return *cs.failed
	}
	for _, r := range cs.running {
		if status := r.plugin.Filter(r.state, pod, node); !status.IsSuccess() {
			return status
		}
	}
	return preempt.Status{Code: preempt.Success}
}

// addPod is RunPreFilterExtensionAddPod: added is now on node.
func (cs *cycleState) addPod(pod, added *v1.Pod, node *nodeState) {
	for _, r := range cs.running {
		if ext, ok := r.plugin.(preFilterExtensions); ok {
			ext.AddPod(r.state, pod, added, node)
		}
	}
}

// removePod is RunPreFilterExtensionRemovePod: removed is now off node.
func (cs *cycleState) removePod(pod, removed *v1.Pod, node *nodeState) {
	for _, r := range cs.running {
		if ext, ok := r.plugin.(preFilterExtensions); ok {
			ext.RemovePod(r.state, pod, removed, node)
		}
	}
}

// removePodFailure is RunPreFilterExtensionRemovePod's error after a
// PreFilter failure, which kube-scheduler never preempts on (every node
// is UnschedulableAndUnresolvable) but a request's filter codes may ask
// for: only the Skips before the failure are recorded, so the framework
// calls RemovePod of every plugin with PreFilterExtensions from the
// failing one on, and the first fails reading the state its PreFilter
// never wrote (upstream's getPreFilterState errors, stateMissing).
func (cs *cycleState) removePodFailure() error {
	if cs.failed == nil {
		return nil
	}
	if cs.failed.Code == preempt.Error {
		// A PreFilter error ends upstream's request before any node:
		// the error is the PreFilter's.
		return errors.New(cs.failed.Message())
	}
	for _, pl := range defaultProfile[cs.failedAt:] {
		if _, ok := pl.(preFilterExtensions); !ok {
			continue
		}
		return fmt.Errorf("running RemovePod on PreFilter plugin %q: %s", pl.Name(), stateMissing[pl.Name()])
	}
	return nil
}

// stateMissing are upstream's getPreFilterState errors for a state
// PreFilter did not write, by plugin.
var stateMissing = map[string]string{
	"VolumeRestrictions": `cannot read "PreFilterVolumeRestrictions" from cycleState`,
	"PodTopologySpread":  `reading "PreFilterPodTopologySpread" from cycleState: not found`,
	"InterPodAffinity":   `error reading "PreFilterInterPodAffinity" from cycleState: not found`,
}

// filtersWithNominatedPods is RunFilterPluginsWithNominatedPods: the
// filters run with the nominated pods of equal or higher priority (other
// than pod itself) added to a copy of the node and, through AddPod, to a
// copy of the cycle state; when that passes, once more on the node and
// state as given, since a nominated pod may be what satisfies the pod's
// affinity.
func (ev *evaluator) filtersWithNominatedPods(pod *v1.Pod, cs *cycleState, s *nodeState) preempt.Status {
	csWith, withNominated := cs, s
	for _, np := range ev.nominated[s.node.Name] {
		if corev1helpers.PodPriority(np) >= corev1helpers.PodPriority(pod) && np.UID != pod.UID {
			if withNominated == s {
				csWith, withNominated = cs.clone(), s.clone()
			}
			withNominated.addPod(np)
			csWith.addPod(pod, np, withNominated)
		}
	}
	status := csWith.runFilterPlugins(pod, withNominated)
	if withNominated != s && status.IsSuccess() {
		status = cs.runFilterPlugins(pod, s)
	}
	return status
}

func unresolvable(reason string) preempt.Status {
	return preempt.Status{Code: preempt.UnschedulableAndUnresolvable, Reasons: []string{reason}}
}
