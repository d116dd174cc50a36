package reference

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/preempt"
)

// PrepareCandidate is upstream's synchronous prepareCandidate, one victim at
// a time in victim order, followed by the nomination of the preemptor:
//
//  1. each victim not already terminating gets the DisruptionTarget
//     condition and is deleted; a victim already gone is skipped, any other
//     API error stops here and is returned;
//  2. pods of lower priority nominated to the node lose their nomination
//     (errors are not fatal, as upstream);
//  3. the preemptor's status.nominatedNodeName is set to the node.
func (ev *evaluator) PrepareCandidate(ctx context.Context, cs kubernetes.Interface, c *preempt.Candidate, req *preempt.Request) error {
	pod := req.Pod
	for _, v := range c.Victims {
		victim := ev.podByKey[preempt.Key(v.Namespace, v.Name)]
		if victim == nil {
			return fmt.Errorf("victim %s is not in the cluster", preempt.Key(v.Namespace, v.Name))
		}
		if victim.DeletionTimestamp != nil {
			continue // graceful deletion already started
		}
		if err := preempt.PreemptPod(ctx, cs, pod, victim); err != nil {
			return err
		}
	}
	var lower []*v1.Pod
	for _, np := range ev.nominated[c.Node] {
		if corev1helpers.PodPriority(np) < corev1helpers.PodPriority(pod) {
			lower = append(lower, np)
		}
	}
	return preempt.ClearAndNominate(ctx, cs, lower, pod, c.Node)
}
