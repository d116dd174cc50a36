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
	// offset is the chosen node's index in the dry run's list, so that
	// it is visited first.
	offset int32
}

func chosenOf(c *preempt.Candidate) chosen {
	ch := chosen{node: c.Node, numPDB: c.NumPDBViolations}
	for _, v := range c.Victims {
		ch.victims = append(ch.victims, preempt.PodRef{Namespace: v.Namespace, Name: v.Name})
	}
	return ch
}

// hooks is upstream's preemption.Interface answering with the plugin's
// decision of the cycle: every node but the chosen one is "not chosen"
// (Unschedulable), the chosen one has the decision's victims, in its
// order; one candidate is wanted, so the dry run stops there and
// SelectCandidate takes it.
type hooks struct{ pl *Plugin }

var _ preemption.Interface = hooks{}

// errNotChosen is the status of the nodes the decision did not choose.
const notChosen = "not chosen by the preemptbench implementation"

func (h hooks) GetOffsetAndNumCandidates(n int32) (int32, int32) {
	off := h.pl.chosen.offset
	if off >= n {
		off = 0
	}
	return off, 1
}

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

func (h hooks) SelectVictimsOnNode(_ context.Context, _ fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo, _ []*preemption.DomainVictim, _ []*policy.PodDisruptionBudget) ([]*v1.Pod, int, *fwk.Status) {
	ch := h.pl.chosen
	if nodeInfo.Node().Name != ch.node {
		return nil, 0, fwk.NewStatus(fwk.Unschedulable, notChosen)
	}
	byRef := make(map[preempt.PodRef]*v1.Pod, len(nodeInfo.GetPods()))
	for _, pi := range nodeInfo.GetPods() {
		p := pi.GetPod()
		byRef[preempt.PodRef{Namespace: p.Namespace, Name: p.Name}] = p
	}
	pods := make([]*v1.Pod, 0, len(ch.victims))
	for _, r := range ch.victims {
		p := byRef[r]
		if p == nil {
			return nil, 0, fwk.AsStatus(fmt.Errorf("victim %s is not on node %s in the scheduler's snapshot", r, ch.node))
		}
		pods = append(pods, p)
	}
	return pods, ch.numPDB, nil
}

func (h hooks) OrderedScoreFuncs(context.Context, map[string]*extenderv1.Victims) []func(string) int64 {
	return nil
}
