// Package ownimpl is an implementation of the preemptbench contract that
// lives outside the preemptbench module, as scheduler-plugins', Volcano's
// or Koordinator's preemption code does. Its tests run the project's whole
// conformance suite and its benchmarks run the project's stage benchmarks,
// with no edit to the project.
//
// The implementation itself is deliberately simple: preemption is the
// reference's, served under this package's own name and with its own
// evaluator type in front. A real user puts their own SelectVictimsOnNode,
// candidate pick and actuation here.
package ownimpl

import (
	"context"

	"k8s.io/client-go/kubernetes"

	"github.com/preemptbench/preemptbench/postfilter"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// Impl is the implementation.
type Impl struct{}

var _ preempt.Implementation = Impl{}

// Name is "ownimpl": the impl= key of its benchmark results.
func (Impl) Name() string { return "ownimpl" }

// NewEvaluator prepares c.
func (Impl) NewEvaluator(c *preempt.Cluster) (preempt.Evaluator, error) {
	inner, err := reference.Impl{}.NewEvaluator(c)
	if err != nil {
		return nil, err
	}
	return &evaluator{Evaluator: inner, cluster: c}, nil
}

// evaluator answers the stages with the inner evaluator, and composes the
// whole PostFilter from its own stages with the contract's helper, as an
// implementation that overrides a stage would.
type evaluator struct {
	preempt.Evaluator
	cluster *preempt.Cluster
}

// Update is preempt.Updater: the evaluator follows the cluster between
// scheduling cycles (here by preparing the new cluster afresh; a real
// implementation applies ch in place). The suite's Update property checks
// that it then answers as a new evaluator would.
func (ev *evaluator) Update(c *preempt.Cluster, ch preempt.Change) error {
	inner, err := reference.Impl{}.NewEvaluator(c)
	if err != nil {
		return err
	}
	ev.Evaluator, ev.cluster = inner, c
	return nil
}

var _ preempt.Updater = (*evaluator)(nil)

func (ev *evaluator) Preempt(ctx context.Context, cs kubernetes.Interface, req *preempt.Request) preempt.Decision {
	return postfilter.PreemptWithStages(ctx, ev, cs, req, ev.cluster)
}
