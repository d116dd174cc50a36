// Package upstream is the preempt contract answered by k8s.io/kubernetes
// at upstream.Version itself: upstream's DefaultPreemption plugin and
// preemption.Evaluator run on a real scheduler framework (upstream's default
// filters, a snapshot, a scheduling queue holding the nominated pods,
// informers), built the way upstream's default_preemption_test.go builds it.
//
// Upstream code is not changed; the contract's pinned semantics come from
// the places upstream lets a plugin decide:
//
//   - the offset: the plugin's GetOffsetAndNumCandidates returns
//     Request.Offset;
//   - potential nodes in name order: the NodeToStatusReader given to
//     Evaluator.Preempt sorts the nodes it returns;
//   - the dry run: the framework runs with parallelism 1 (Impl.Parallelism);
//   - victim ties: the plugin's MoreImportantVictim (v1.36:
//     MoreImportantPod) adds namespace, name and UID after upstream's;
//   - the clock: pods without status.startTime get Request.Now (on copies).
//
// Upstream's answers are read back through the same hooks: every
// SelectVictimsOnNode call is recorded, and the dry run's candidate list
// and node statuses are rebuilt from the records as upstream builds them.
//
// # Index
//
//   - [Impl]: the implementation; [Version] is the release it is built
//     against: preempt.CurrentRelease, or an earlier release of
//     preempt.ReleaseTable under that release's build tags (in the module
//     releases/VERSION, whose main is package upstream/serve).
//   - Releases: seams.go holds every call of a scheduler API that changed
//     since an earlier release, seams_v1_36.go v1.36's side of each; the
//     gang files below are the current release's only. The rest is the
//     same for every release.
//   - The gang path: Impl's PreemptPodGroup runs upstream's
//     PodGroupEvaluator (gang.go, gang_victims.go); SchedulerPlacement
//     (placer_scheduler.go) asks a real kube-scheduler's pod-group cycle.
//   - Determinism: tie.go and listtie.go (the final tie), pdborder.go and
//     pvorder.go (listers in name order), inflight.go (a still-running
//     asynchronous preemption), world.go (the framework, informers and
//     listers a decision runs on), update.go (following a cluster).
package upstream
