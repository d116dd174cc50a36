package reference

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/internal/actuation"
	"github.com/preemptbench/preemptbench/preempt"
)

// PrepareCandidate finds the victims' pods and the pods of lower priority
// nominated to the node, and actuates (actuation.Actuate: upstream's
// executor, synchronous or asynchronous as req.Config says, and the
// nomination).
func (ev *evaluator) PrepareCandidate(ctx context.Context, cs kubernetes.Interface, c *preempt.Candidate, req *preempt.Request) error {
	pod := req.Pod
	var victims []*v1.Pod
	for _, v := range c.Victims {
		victim := ev.podByKey[preempt.Key(v.Namespace, v.Name)]
		if victim == nil {
			return fmt.Errorf("victim %s is not in the cluster", preempt.Key(v.Namespace, v.Name))
		}
		victims = append(victims, victim)
	}
	var lower []*v1.Pod
	for _, np := range ev.nominated[c.Node] {
		if corev1helpers.PodPriority(np) < corev1helpers.PodPriority(pod) {
			lower = append(lower, np)
		}
	}
	return actuation.Actuate(ctx, cs, pod, c.Node, victims, lower, req.Config.Synchronous, req.Config.Behaviour().AsyncSkipsLastVictim)
}
