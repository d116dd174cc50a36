// Package preempt is the contract every preemptbench implementation satisfies:
// the input (a cluster snapshot and a preemption request), the output (a
// Decision), and the stages of kube-scheduler's DefaultPreemption PostFilter
// plugin, written once so that reference, optimized and upstream can be run on
// the same input and compared field by field.
//
// # Semantics pinned by this project
//
// Upstream k8s.io/kubernetes (the release upstream.Version names) leaves a
// few choices to chance. The
// contract fixes each of them; docs/divergences.md lists them with the test
// that shows each one.
//   - Offset. Upstream draws the dry-run offset with rand.Int31n. Here it is
//     Request.Offset (>= 0), used exactly as upstream uses its random value:
//     node i of the dry run is potential[(offset+i) % len(potential)].
//   - Potential nodes. Upstream lists the nodes whose filter status is
//     Unschedulable in snapshot order (built from a map). Here they are taken
//     in node-name order.
//   - Dry run. Upstream checks nodes in parallel and cancels once the
//     candidate lists are full enough, so which nodes were visited depends on
//     timing. Here the dry run visits the potential nodes in rotated order from
//     the offset and stops as soon as there is at least one non-violating
//     candidate and the number of candidates reaches the candidate count:
//     upstream with parallelism 1. As upstream, each of the two lists keeps at
//     most numCandidates entries, so a run with many violating candidates
//     before the first non-violating one still returns at most numCandidates
//     violating candidates.
//   - Candidate order: non-violating candidates first, then violating ones,
//     each group in visit order (as upstream's two candidate lists).
//   - Victim order: priority (high first), then start time (early first), then
//     namespace, name and UID. Upstream sorts with sort.Slice on
//     MoreImportantPod, whose order for pods equal in priority and start time
//     depends on the NodeInfo's internal pod order; that order decides which of
//     two equal pods is reprieved.
//   - pickOneNodeForPreemption walks the candidates in list order, and breaks
//     the last tie by that order. Upstream walks a map, so its final tie is
//     random among the nodes that are equal on all five criteria.
//   - Clock. A pod without a start time takes Request.Now, for the victim sort
//     and for the latest-start-time criterion. Upstream calls time.Now() at
//     every comparison. DynamicResources' binding timeout (a claim allocated
//     with binding conditions not met) reads Request.Now too, and in the
//     filter phase the time given to SetFilterNow (ClockSetter); upstream
//     reads time.Now().
//   - Reasons of a NodeResourcesFit failure list extended, hugepages and other
//     scalar resources in name order (upstream ranges over a map).
//   - Extenders. Upstream's callExtenders rebuilds the candidates from a map;
//     here the survivors come in node-name order (CallExtenders).
//   - Asynchronous actuation (the default since v1.33; Actuate). Upstream's
//     nomination patch races with the executor's goroutine, which preempts
//     all victims but the last in parallel. Here: the nomination first, then
//     the cleared nominations, the victims in candidate order (stopping at
//     the first error), the last one unless one failed. Config.Synchronous
//     selects the synchronous prepareCandidate: victims, cleared
//     nominations, then the nomination.
//   - A still-running asynchronous preemption, upstream's in-memory record,
//     is an input (Request.Preempting).
//   - PodDisruptionBudget order. Upstream lists the budgets from the
//     informer (a map), and from v1.37 FilterVictimsWithPDBViolation stops
//     counting a victim's budgets at the first one it takes below zero, so
//     with overlapping budgets the order decides which budgets later
//     victims still find, and the violation count. Here they are taken in
//     (namespace, name) order (SortedPDBs), by every implementation: the
//     upstream adapter's PDB lister sorts what the informer lists.
//
// # Streams
//
// A scheduler filters, preempts and binds pod after pod on one cluster.
// Request.Codes carries the filter outcome as it holds it (a code per node
// in the cluster's order); an Evaluator may be an Updater (it follows the
// cluster's changes between cycles, as the scheduler cache does) and a
// CodeFilter (filter codes without reasons). harness.Stream drives them;
// an implementation without them is built again each cycle.
//
// docs/divergences.md gives each rule with its test.
package preempt
