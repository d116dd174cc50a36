// Package optimized implements the preempt contract with the allocations
// taken out: a cluster is prepared once into flat integer vectors, a
// decision works on indices and reused scratch buffers, and the dry run runs
// on several workers while committing results in visit order, so that it
// returns exactly the sequential (reference) answer.
//
// The decision is the reference's for every input; preempttest proves it.
//
// # Index
//
//   - [Impl]: the implementation (preempt.Implementation,
//     preempt.PodGroupPreempter, preempt.ReleaseModeller, preempt.Limited);
//     Workers and ParallelFrom set the dry run's parallelism
//     ([DefaultWorkers]).
//   - [Prepare] and [Snapshot]: a cluster prepared once, shared by
//     evaluators; the evaluator is a preempt.Updater (it follows a changing
//     cluster in place) and a preempt.CodeFilter.
//   - Files: snapshot.go and update.go (the prepared cluster), evaluator.go,
//     decision.go, dryrun.go and victims.go (the filter phase, the dry run
//     and the reprieve), plugin_*.go (each filter's state), topology.go
//     (AddPod/RemovePod on per-node counters), podgroup.go (pod groups as
//     victims), gang*.go (gang preemption).
package optimized
