// Package actuation makes the API calls of a preemption decision as
// upstream's Executor makes them: the victims preempted (the
// DisruptionTarget condition, then the delete), lower-priority nominations
// on the node cleared, the preemptor nominated, synchronously or as
// asynchronous preemption does. reference and optimized actuate with it;
// upstream uses its own Executor. It is not part of the contract.
package actuation

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	apipod "github.com/preemptbench/preemptbench/internal/kube/podutil"
)

// PreemptPod is upstream's Executor.PreemptPod for a pod that is neither
// waiting nor in PreBind. (Such a pod upstream preempts in memory only,
// and from v1.37 its asynchronous executor then activates the preemptor
// when that pod was the last victim, as no deletion event will; the
// contract's victims are always deleted through the API.)
func PreemptPod(ctx context.Context, cs kubernetes.Interface, preemptor, victim *v1.Pod) error {
	return PreemptPodAs(ctx, cs, preemptor.Spec.SchedulerName, "pod", victim)
}

// PreemptPodAs is PreemptPod for a preemptor of kind ("pod", or
// "podgroup" for a gang: the ExecutorPreemptor's Type) run by scheduler.
func PreemptPodAs(ctx context.Context, cs kubernetes.Interface, scheduler, kind string, victim *v1.Pod) error {
	condition := &v1.PodCondition{
		Type:               v1.DisruptionTarget,
		ObservedGeneration: apipod.CalculatePodConditionObservedGeneration(&victim.Status, victim.Generation, v1.DisruptionTarget),
		Status:             v1.ConditionTrue,
		Reason:             v1.PodReasonPreemptionByScheduler,
		Message:            preemptionMessage(scheduler, kind),
	}
	// A victim without the condition gets it appended: its patch is
	// written directly (fastpatch.go), the same bytes as the diff.
	if _, have := apipod.GetPodCondition(&victim.Status, condition.Type); have == nil {
		condition.LastTransitionTime = metav1.Now() // as UpdatePodCondition sets it
		if patch, ok := appendedConditionPatch(&victim.Status, condition); ok {
			if err := sendStatusPatch(ctx, cs, victim, patch); err != nil {
				if apierrors.IsNotFound(err) {
					return nil // already gone
				}
				return err
			}
			return deleteVictim(ctx, cs, victim)
		}
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
	return deleteVictim(ctx, cs, victim)
}

func deleteVictim(ctx context.Context, cs kubernetes.Interface, victim *v1.Pod) error {
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
	return sendStatusPatch(ctx, cs, p, patch)
}

// sendStatusPatch sends patch to p's status subresource. Upstream retries
// internal, unavailable, conflict and refused-connection errors with the
// default backoff (retry.OnError); the first attempt is made here, as
// OnError would make it (at once), and only a retriable error enters the
// backoff, whose first step is that attempt, not another.
func sendStatusPatch(ctx context.Context, cs kubernetes.Interface, p *v1.Pod, patch []byte) error {
	_, err := cs.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err == nil || !retriablePatchError(err) {
		return err
	}
	first := true
	return retry.OnError(retry.DefaultBackoff, retriablePatchError, func() error {
		if first {
			first = false
			return err
		}
		_, err := cs.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		return err
	})
}

func retriablePatchError(err error) bool {
	return apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsConflict(err) || utilnet.IsConnectionRefused(err)
}

// BackgroundError is what PrepareCandidate returns when the background work
// of asynchronous preemption failed. Upstream's PostFilter has already
// succeeded then: the decision stands, the preemptor stays nominated, and
// upstream moves it back to the active queue (Executor.prepareCandidateAsync
// calls Activate). PreemptWithStages reports it in the Decision.
type BackgroundError struct {
	// Victims holds the errors of preempting victims, in call order.
	Victims []string
	// Clearing is set when clearing a lower-priority nomination failed.
	Clearing bool
}

func (e *BackgroundError) Error() string {
	msg := "asynchronous preemption failed"
	if e.Clearing {
		msg += ": clearing a lower-priority nomination failed"
	}
	for _, v := range e.Victims {
		msg += ": " + v
	}
	return msg
}

// Actuate is upstream's executor for the chosen node, followed by the
// scheduler's nomination of the preemptor. victims are the pods to preempt
// in candidate order; lowerNominated are the pods of lower priority than
// the preemptor nominated to node, in nominator order.
//
// Synchronous (SchedulerAsyncPreemption off, prepareCandidate): each victim
// not already terminating is preempted (PreemptPod); the first error stops
// and is returned. Then the lower-priority nominations are cleared (errors
// ignored) and the preemptor is nominated.
//
// Asynchronous (the default since v1.33, prepareCandidateAsync): the preemptor is
// nominated first (its error is returned after the background work ran),
// then, if any victim is not already terminating: the lower-priority
// nominations are cleared, the victims but the last are preempted and, if
// none of them failed or skipLast is false (v1.35:
// preempt.SwitchAsyncSkipsLastVictim off), the last one. Upstream preempts all but the last
// in parallel and cancels the rest at the first error; the contract runs
// them in candidate order and stops at the first error. A failure is
// returned as a *BackgroundError, unless the nomination failed.
func Actuate(ctx context.Context, cs kubernetes.Interface, preemptor *v1.Pod, node string, victims, lowerNominated []*v1.Pod, synchronous, skipLast bool) error {
	preemptPod := func(ctx context.Context, victim *v1.Pod) error { return PreemptPod(ctx, cs, preemptor, victim) }
	return ActuateWith(ctx, cs, preemptPod, preemptor, node, victims, lowerNominated, synchronous, skipLast)
}

// ActuateWith is Actuate with another way to preempt one victim (the
// upstream adapter passes upstream's Executor.PreemptPod).
func ActuateWith(ctx context.Context, cs kubernetes.Interface, preemptPod func(context.Context, *v1.Pod) error, preemptor *v1.Pod, node string, victims, lowerNominated []*v1.Pod, synchronous, skipLast bool) error {
	var live []*v1.Pod
	for _, v := range victims {
		if v.DeletionTimestamp == nil { // graceful deletion not started yet
			live = append(live, v)
		}
	}
	if synchronous {
		for _, v := range live {
			if err := preemptPod(ctx, v); err != nil {
				return err
			}
		}
		clearNominations(ctx, cs, lowerNominated)
		return nominate(ctx, cs, preemptor, node)
	}
	nominateErr := nominate(ctx, cs, preemptor, node)
	if len(live) == 0 {
		return nominateErr
	}
	var bg BackgroundError
	bg.Clearing = clearNominations(ctx, cs, lowerNominated) != nil
	last := true
	for _, v := range live[:len(live)-1] {
		if err := preemptPod(ctx, v); err != nil {
			bg.Victims = append(bg.Victims, err.Error())
			last = false
			break
		}
	}
	if last || !skipLast {
		if err := preemptPod(ctx, live[len(live)-1]); err != nil {
			bg.Victims = append(bg.Victims, err.Error())
		}
	}
	if nominateErr != nil {
		return nominateErr
	}
	if bg.Clearing || len(bg.Victims) > 0 {
		return &bg
	}
	return nil
}

// ClearNominations is upstream's clearNominatedNodeName without an API
// cacher, for an executor that clears nominations on its own (the gang
// path's, which nominates no preemptor): a status patch per pod that has
// a nominated node, errors aggregated.
func ClearNominations(ctx context.Context, cs kubernetes.Interface, pods []*v1.Pod) error {
	return clearNominations(ctx, cs, pods)
}

// clearNominations is upstream's clearNominatedNodeName without an API
// cacher: a status patch per nominated pod, errors aggregated.
func clearNominations(ctx context.Context, cs kubernetes.Interface, pods []*v1.Pod) error {
	var errs []error
	for _, np := range pods {
		if np.Status.NominatedNodeName == "" {
			continue
		}
		if err := nominate(ctx, cs, np, ""); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// nominate sets the preemptor's status.nominatedNodeName, as the scheduler
// does after a successful PostFilter.
func nominate(ctx context.Context, cs kubernetes.Interface, pod *v1.Pod, node string) error {
	if patch, ok := nominationPatch(&pod.Status, node); ok {
		if patch == nil {
			return nil // PatchPodStatus sends nothing when nothing changes
		}
		return sendStatusPatch(ctx, cs, pod, patch)
	}
	newStatus := pod.Status.DeepCopy()
	newStatus.NominatedNodeName = node
	return PatchPodStatus(ctx, cs, pod, newStatus)
}
