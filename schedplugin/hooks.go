package schedplugin

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"

	"github.com/preemptbench/preemptbench/preempt"
)

// chosen is a decision as the hooks give it to upstream's Evaluator.
type chosen struct {
	node    string
	victims []preempt.PodRef
	numPDB  int
}

func chosenOf(c *preempt.Candidate) chosen {
	ch := chosen{node: c.Node, numPDB: c.NumPDBViolations}
	for _, v := range c.Victims {
		ch.victims = append(ch.victims, preempt.PodRef{Namespace: v.Namespace, Name: v.Name})
	}
	return ch
}

// hooks is upstream's preemption.Interface answering with the plugin's
// decision of the cycle: the chosen node (the only potential node,
// onlyNode) has the decision's victims, in its order, and any other node
// would be "not chosen" (Unschedulable); one candidate is wanted, and
// SelectCandidate takes it.
type hooks struct{ pl *Plugin }

var _ preemption.Interface = hooks{}

// notChosen is the status of the nodes the decision did not choose.
const notChosen = "not chosen by the preemptbench implementation"

func (h hooks) GetOffsetAndNumCandidates(int32) (int32, int32) { return 0, 1 }

func (h hooks) CandidatesToVictimsMap(candidates []preemption.Candidate) map[string]*extenderv1.Victims {
	m := make(map[string]*extenderv1.Victims, len(candidates))
	for _, c := range candidates {
		m[c.Name()] = c.Victims()
	}
	return m
}

// PodEligibleToPreemptOthers: the implementation found the pod eligible
// (the plugin calls Preempt only then).
func (h hooks) PodEligibleToPreemptOthers(context.Context, *v1.Pod, *fwk.Status) (bool, string) {
	return true, ""
}

// SelectVictimsOnNode answers with the decision's victims as upstream's
// would return them: the pods of the possible victims upstream found for
// the node (GetVictimsOnNode's DomainVictims), whose pods of a pod group
// in disruption mode All may be bound to other nodes.
func (h hooks) SelectVictimsOnNode(_ context.Context, _ fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo, possible []*preemption.DomainVictim, _ []*policy.PodDisruptionBudget) ([]*v1.Pod, int, *fwk.Status) {
	ch := h.pl.chosen
	if nodeInfo.Node().Name != ch.node {
		return nil, 0, fwk.NewStatus(fwk.Unschedulable, notChosen)
	}
	byRef := make(map[preempt.PodRef]*v1.Pod, len(nodeInfo.GetPods()))
	for _, dv := range possible {
		for _, pi := range dv.Pods() {
			p := pi.GetPod()
			byRef[preempt.PodRef{Namespace: p.Namespace, Name: p.Name}] = p
		}
	}
	pods := make([]*v1.Pod, 0, len(ch.victims))
	for _, r := range ch.victims {
		p := byRef[r]
		if p == nil {
			return nil, 0, fwk.AsStatus(fmt.Errorf("victim %s is not a possible victim of node %s in the scheduler's snapshot", r, ch.node))
		}
		pods = append(pods, p)
	}
	return pods, ch.numPDB, nil
}

func (h hooks) OrderedScoreFuncs(context.Context, map[string]*extenderv1.Victims) []func(string) int64 {
	return nil
}
