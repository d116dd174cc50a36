package schedplugin

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Reason is why a cycle fell back to upstream's DefaultPreemption: the
// reason label of Fallbacks.
type Reason string

const (
	// ReasonFilterPlugin: the profile enables a filter plugin the
	// implementations do not model (ModelledFilters).
	ReasonFilterPlugin Reason = "unmodelled_filter_plugin"
	// ReasonExtenders: an extender with a preempt verb is configured.
	ReasonExtenders Reason = "extenders"
	// ReasonPodGroup: the preemptor of a PostFilter belongs to a pod
	// group, or a gang's preemptor is a CompositePodGroup. (Victims in
	// pod groups are the implementation's: the follower gets their
	// groups from the scheduler's snapshot; so are the gangs of
	// PodGroups: gang.go.)
	ReasonPodGroup Reason = "pod_group"
	// ReasonGate: the implementation does not model a feature gate set
	// away from its default.
	ReasonGate Reason = "feature_gate"
	// ReasonUnmodelled: the implementation does not model something the
	// preemptor uses (volumes, resource claims: preempt.Limited).
	ReasonUnmodelled Reason = "unmodelled_pod"
	// ReasonFilterStatus: a node's filter status is neither
	// Unschedulable nor UnschedulableAndUnresolvable.
	ReasonFilterStatus Reason = "filter_status"
	// ReasonInvalid: the cluster or the preemptor fails the contract's
	// validation (preempt.Cluster.Validate, preempt.ValidatePod).
	ReasonInvalid Reason = "invalid"
	// ReasonDisagreement: a gang's cycle where the implementation's
	// answer does not fit upstream's PodGroupEvaluator, which acts on it
	// (gang.go), found before anything was acted on.
	ReasonDisagreement Reason = "disagreement"
	// ReasonError: the implementation failed (building or updating its
	// evaluator, an error without candidates).
	ReasonError Reason = "error"
)

var (
	// Fallbacks counts the cycles that fell back to DefaultPreemption,
	// by implementation and Reason.
	Fallbacks = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "scheduler",
		Name:           "preemptbench_fallbacks_total",
		Help:           "Number of preemption cycles the preemptbench plugin handed to upstream's DefaultPreemption, by implementation and reason.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"impl", "reason"})
	// Decisions counts the cycles the implementation decided, by
	// implementation and result (the status code: Success,
	// Unschedulable, Error).
	Decisions = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "scheduler",
		Name:           "preemptbench_decisions_total",
		Help:           "Number of preemption cycles decided by the preemptbench plugin's implementation, by implementation and result.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"impl", "result"})
	// Rebuilds counts the times the plugin built its implementation's
	// evaluator from the whole cluster (kind "build"), and the cycles
	// it followed the scheduler cache with a change (kind "update").
	Rebuilds = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "scheduler",
		Name:           "preemptbench_cluster_syncs_total",
		Help:           "Number of times the preemptbench plugin built its evaluator from the whole cluster (kind=build) or followed a change of the scheduler cache (kind=update).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"impl", "kind"})
	// NominatedReads counts the nodes whose nominated pods the plugin
	// read from the scheduling queue (fwk.Handle.NominatedPodsForNode,
	// a deep copy of each): the nodes where a nomination may have
	// changed since the last cycle, not every node every cycle.
	NominatedReads = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "scheduler",
		Name:           "preemptbench_nominated_node_reads_total",
		Help:           "Number of nodes whose nominated pods the preemptbench plugin read from the scheduling queue.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"impl"})
)

var registerOnce sync.Once

// registerMetrics registers the plugin's metrics in the scheduler's
// registry (legacyregistry), once per process.
func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(Fallbacks, Decisions, Rebuilds, NominatedReads)
	})
}
