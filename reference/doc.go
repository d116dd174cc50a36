// Package reference is preemptbench's oracle: a plain, obviously-correct
// implementation of kube-scheduler's DefaultPreemption (k8s.io/kubernetes
// at upstream.Version, pkg/scheduler/framework/preemption and
// plugins/defaultpreemption) written to be read beside upstream's code.
// Clarity wins over speed everywhere: state is recomputed rather than
// cached, lists are copied rather than shared.
//
// It follows the contract of package preempt, including the deterministic
// rules documented there. Its only dependencies on upstream are API helpers
// (pod requests, tolerations, node affinity, pod conditions), never the
// scheduler framework itself, so that comparing it with package upstream
// compares two independent readings of the algorithm.
//
// The pod-group paths take six policy decisions through stages
// (stages.go, internal/refstages), as upstream's preemption Evaluator
// takes its policy from an Interface; Impl's are upstream's. Only the
// conformance suite's tests build the reference with one replaced
// (refstages.Reference), and nothing outside this module can.
package reference
