package preempt

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
	apipod "k8s.io/kubernetes/pkg/api/v1/pod"
)

// The API calls of actuation are the same for every implementation written
// here (upstream uses its own Executor): they are the contract's, not the
// algorithm's.

// PreemptPod is upstream's Executor.PreemptPod for a pod that is neither
// waiting nor in PreBind.
func PreemptPod(ctx context.Context, cs kubernetes.Interface, preemptor, victim *v1.Pod) error {
	condition := &v1.PodCondition{
		Type:               v1.DisruptionTarget,
		ObservedGeneration: apipod.CalculatePodConditionObservedGeneration(&victim.Status, victim.Generation, v1.DisruptionTarget),
		Status:             v1.ConditionTrue,
		Reason:             v1.PodReasonPreemptionByScheduler,
		Message:            fmt.Sprintf("%s: preempting to accommodate a higher priority pod", preemptor.Spec.SchedulerName),
	}
	newStatus := victim.Status.DeepCopy()
	if apipod.UpdatePodCondition(newStatus, condition) {
		if err := PatchPodStatus(ctx, cs, victim, newStatus); err != nil {
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

// PatchPodStatus sends the strategic merge patch from p's status to
// newStatus, and nothing when they are equal (upstream's PatchPodStatus).
func PatchPodStatus(ctx context.Context, cs kubernetes.Interface, p *v1.Pod, newStatus *v1.PodStatus) error {
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
