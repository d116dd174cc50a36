package harness

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	k8stesting "k8s.io/client-go/testing"

	"github.com/preemptbench/preemptbench/preempt"
)

// Replay makes calls, the pod calls a decision made through the fake
// clientset (Result.Calls), on cs with dryRun=All: a real API server
// validates and admits each deletion and patch as it would the scheduler's
// and changes nothing. It returns each call as the decision's Actions
// list it, with the error the API server answered ("" accepted). Calls
// other than the pods' (none a preemption makes) are not sent, with an
// error saying so.
func Replay(ctx context.Context, cs kubernetes.Interface, calls []k8stesting.Action) []preempt.Action {
	dryRun := []string{metav1.DryRunAll}
	var out []preempt.Action
	for _, a := range calls {
		if a.GetResource().Resource != "pods" {
			continue
		}
		var act preempt.Action
		var err error
		pods := cs.CoreV1().Pods(a.GetNamespace())
		switch c := a.(type) {
		case k8stesting.PatchAction:
			act = preempt.Action{Verb: "patch", Subresource: c.GetSubresource(), Namespace: c.GetNamespace(), Name: c.GetName(), Sets: patchSummary(c.GetPatch())}
			var sub []string
			if c.GetSubresource() != "" {
				sub = []string{c.GetSubresource()}
			}
			_, err = pods.Patch(ctx, c.GetName(), c.GetPatchType(), c.GetPatch(), metav1.PatchOptions{DryRun: dryRun}, sub...)
		case k8stesting.DeleteAction:
			act = preempt.Action{Verb: "delete", Namespace: c.GetNamespace(), Name: c.GetName()}
			opts := c.GetDeleteOptions()
			opts.DryRun = dryRun
			err = pods.Delete(ctx, c.GetName(), opts)
		case k8stesting.GetAction, k8stesting.ListAction, k8stesting.WatchAction:
			continue // reads
		default:
			act = preempt.Action{Verb: a.GetVerb(), Subresource: a.GetSubresource(), Namespace: a.GetNamespace()}
			if ca, ok := a.(k8stesting.CreateAction); ok && a.GetVerb() == "update" {
				if p, ok := ca.GetObject().(*v1.Pod); ok {
					act.Name = p.Name
					if a.GetSubresource() == "status" {
						_, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{DryRun: dryRun})
					} else {
						_, err = pods.Update(ctx, p, metav1.UpdateOptions{DryRun: dryRun})
					}
					break
				}
			}
			b, _ := json.Marshal(a)
			err = fmt.Errorf("not replayed: a %s of pods the replay does not make (%s)", a.GetVerb(), b)
		}
		if err != nil {
			act.Error = err.Error()
		}
		out = append(out, act)
	}
	return out
}
