package reference

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	apipod "k8s.io/kubernetes/pkg/api/v1/pod"

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
		if err := preemptPod(ctx, cs, pod, victim); err != nil {
			return err
		}
	}
	for _, np := range ev.nominated[c.Node] {
		if corev1helpers.PodPriority(np) >= corev1helpers.PodPriority(pod) || np.Status.NominatedNodeName == "" {
			continue
		}
		newStatus := np.Status.DeepCopy()
		newStatus.NominatedNodeName = ""
		_ = patchPodStatus(ctx, cs, np, newStatus) // not critical, as upstream
	}
	newStatus := pod.Status.DeepCopy()
	newStatus.NominatedNodeName = c.Node
	return patchPodStatus(ctx, cs, pod, newStatus)
}

// preemptPod is upstream's Executor.PreemptPod for a pod that is neither
// waiting nor in PreBind.
func preemptPod(ctx context.Context, cs kubernetes.Interface, preemptor, victim *v1.Pod) error {
	condition := &v1.PodCondition{
		Type:               v1.DisruptionTarget,
		ObservedGeneration: apipod.CalculatePodConditionObservedGeneration(&victim.Status, victim.Generation, v1.DisruptionTarget),
		Status:             v1.ConditionTrue,
		Reason:             v1.PodReasonPreemptionByScheduler,
		Message:            fmt.Sprintf("%s: preempting to accommodate a higher priority pod", preemptor.Spec.SchedulerName),
	}
	newStatus := victim.Status.DeepCopy()
	if apipod.UpdatePodCondition(newStatus, condition) {
		if err := patchPodStatus(ctx, cs, victim, newStatus); err != nil {
			if apierrors.IsNotFound(err) {
				return nil // already gone
			}
			return err
		}
	}
	err := cs.CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// patchPodStatus sends the strategic merge patch from p's status to
// newStatus, and nothing when they are equal (upstream's PatchPodStatus).
func patchPodStatus(ctx context.Context, cs kubernetes.Interface, p *v1.Pod, newStatus *v1.PodStatus) error {
	oldData, err := json.Marshal(v1.Pod{Status: p.Status})
	if err != nil {
		return err
	}
	newData, err := json.Marshal(v1.Pod{Status: *newStatus})
	if err != nil {
		return err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, &v1.Pod{})
	if err != nil {
		return fmt.Errorf("failed to create merge patch for pod %q/%q: %w", p.Namespace, p.Name, err)
	}
	if string(patch) == "{}" {
		return nil
	}
	// Upstream retries internal, unavailable, conflict and refused-connection
	// errors with the default backoff.
	retriable := func(err error) bool {
		return apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) ||
			apierrors.IsConflict(err) || utilnet.IsConnectionRefused(err)
	}
	return retry.OnError(retry.DefaultBackoff, retriable, func() error {
		_, err := cs.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		return err
	})
}
