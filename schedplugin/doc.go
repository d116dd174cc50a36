// Package schedplugin runs a preemptbench implementation (optimized,
// reference or upstream, package registry) as a PostFilter plugin of a
// real kube-scheduler v1.37.2, in place of DefaultPreemption.
//
// # Enabling it
//
// A kube-scheduler that registers the plugin (cmd/kube-scheduler does,
// through app.WithPlugin(Name, New)) runs it when its
// KubeSchedulerConfiguration disables DefaultPreemption and enables Name,
// with the implementation in the plugin's args (Args):
//
//	profiles:
//	- schedulerName: default-scheduler
//	  plugins:
//	    multiPoint:
//	      enabled:
//	      - name: PreemptbenchPreemption
//	      disabled:
//	      - name: DefaultPreemption
//	  pluginConfig:
//	  - name: PreemptbenchPreemption
//	    args:
//	      impl: optimized   # or reference, upstream
//
// # What a cycle does
//
// PostFilter reads the scheduler's own snapshot of the cycle
// (fwk.Handle.SnapshotSharedLister: nodes and the pods the cache holds,
// assumed pods included), the pods the scheduling queue nominated
// (fwk.Handle.NominatedPodsForNode), the PodDisruptionBudgets and
// namespaces of the scheduler's informers, and the NodeToStatus the
// filters left; it turns them into a preempt.Cluster and a
// preempt.Request (the filter codes in Request.Codes) and runs the
// implementation's stages: PodEligibleToPreemptOthers, FindCandidates,
// SelectCandidate. The decision, a node and its victims, is then acted
// on by upstream's own code: the plugin builds upstream's
// preemption.Evaluator with hooks (preemption.Interface) that answer
// with the decision (its dry run is offered the chosen node alone, which
// gets the decision's victims), so the Executor of k8s.io/kubernetes/pkg/scheduler/
// framework/preemption preempts the victims (DisruptionTarget condition,
// deletion, waiting pods rejected in memory), clears lower-priority
// nominations and nominates the preemptor, synchronously or
// asynchronously as the SchedulerAsyncPreemption gate says, and the
// plugin's PreEnqueue (upstream's) holds a preemptor while its
// asynchronous preemption runs. The API calls are upstream's.
//
// The cluster follows the scheduler cache between cycles (follower):
// nodes whose NodeInfo generation moved have their pods compared, the
// nominated pods come from a mirror of the queue's nominator that asks
// again only for the nodes where a nomination may have changed
// (nominations: an index of the scheduler's pod informer, the plugin's
// PreFilter recording the pods that run a cycle, the nodes PostFilter
// results nominate to), and the difference is given
// to the implementation as a preempt.Change (preempt.Follow): optimized
// and upstream update their state in place (preempt.Updater), reference
// is built again. A change of the nodes, PDBs, namespaces or pod groups
// builds the evaluator again.
//
// # Fallback
//
// A cycle the implementation does not model falls back to upstream's
// DefaultPreemption (built inside the plugin, sharing its Executor), and
// is counted by reason in the counter
// scheduler_preemptbench_fallbacks_total{impl,reason} of the scheduler's
// metrics registry (legacyregistry), with a log line at V(2). The
// reasons are the Reason constants: a filter plugin of the profile that
// the implementations do not model, extenders with a preempt verb, a
// preemptor in a pod group, a feature gate or pod the implementation refuses
// (preempt.Limited, GateLimited), a filter status other than
// Unschedulable or UnschedulableAndUnresolvable, and an error of the
// implementation, and a gang's cycle where the implementation's answer
// does not fit upstream's PodGroupEvaluator.
//
// # Gangs
//
// PodGroupPostFilter runs upstream's PodGroupEvaluator with the
// scheduler's own scheduling function; the implementation decides the
// victims with that placement, and the evaluator's reprieve keeps them
// (gang.go).
package schedplugin
