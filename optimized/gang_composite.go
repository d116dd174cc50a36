package optimized

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/preemptbench/preemptbench/internal/podinfo"
	"github.com/preemptbench/preemptbench/preempt"
)

// A CompositePodGroup preemptor (the reference's scheduleGang over a
// preempt.GroupNode tree): compositePodGroupSchedulingDefaultAlgorithm
// over the children in GetChildGroups' order, each leaf through
// podGroupSchedulingDefaultAlgorithm with the request's placement, every
// group inside TopologyAwareWorkloadScheduling's placement algorithm of
// its one placement (CompositePodGroup needs the gate). A group that
// fails is reverted (its members' rows, their stubs back on their
// nominated nodes, their topology contributions to later members'
// PreFilter gone) and keeps its placed members as proposals, as the
// scheduler's closure gathers every result.

// gangTrail is one Place of a composite's placement: the member, its
// node and the node's row before it.
type gangTrail struct {
	i     int32
	n     int32
	used  []int64
	pods  int64
	ports []podinfo.HostPort
	// volMark is the volume Reserve log's length before this Place.
	volMark int
}

// trailPlace records member i's Place on node n (called by Place before
// it changes the row) when a composite is being placed.
func (w *gangWorld) trailPlace(i int, n int32) {
	if !w.trailing {
		return
	}
	s := w.s
	t := gangTrail{i: int32(i), n: n, used: append([]int64(nil), w.used[int(n)*s.dims:int(n+1)*s.dims]...), pods: w.pods[n], volMark: w.volumeMark()}
	if w.anyPort {
		t.ports = append([]podinfo.HostPort(nil), w.portz[n]...)
	}
	w.trail = append(w.trail, t)
}

// revertTrail takes back the Places since mark.
func (w *gangWorld) revertTrail(mark int) {
	s := w.s
	if mark < len(w.trail) {
		w.revertVolumes(w.trail[mark].volMark)
	}
	for k := len(w.trail) - 1; k >= mark; k-- {
		t := &w.trail[k]
		copy(w.used[int(t.n)*s.dims:int(t.n+1)*s.dims], t.used)
		w.pods[t.n] = t.pods
		if w.anyPort {
			w.portz[t.n] = append(w.portz[t.n][:0], t.ports...)
		}
		w.inView[t.i] = false
		w.viewNode[t.i] = -1
	}
	w.trail = w.trail[:mark]
}

// compositeStatus is a group's status in the composite's scheduling:
// its code, its reasons and whether the scheduler's
// errPodGroupUnschedulable leads them (the reference's pgStatus).
type compositeStatus struct {
	code    preempt.Code
	reasons []string
	err     bool
}

func (c compositeStatus) message() string {
	msg := ""
	if c.err {
		msg = msgGroupUnschedulable
	}
	for _, r := range c.reasons {
		if msg != "" {
			msg += ", "
		}
		msg += r
	}
	return msg
}

func (c compositeStatus) asError() string {
	if c.err {
		return msgGroupUnschedulable
	}
	return c.message()
}

func gangFeasible(minCount, remaining, scheduled int) compositeStatus {
	switch {
	case remaining+scheduled < minCount:
		return compositeStatus{code: preempt.Unschedulable, reasons: []string{fmt.Sprintf("minCount (%d) cannot be satisfied: %d scheduled, %d remaining", minCount, scheduled, remaining)}}
	case scheduled < minCount:
		return compositeStatus{code: "Wait", reasons: []string{fmt.Sprintf("minCount (%d) is not yet satisfied: %d scheduled, %d remaining", minCount, scheduled, remaining)}}
	}
	return compositeStatus{code: preempt.Success}
}

// compositeRun is one composite's scheduling function.
type compositeRun struct {
	w         *gangWorld
	req       *preempt.PodGroupRequest
	placement preempt.Placement
	// placed are the members placed by every group evaluated, failed
	// ones included: member -> node (-1 none).
	placed []int32
}

// scheduleComposite is scheduleGang for a CompositePodGroup preemptor:
// each member's node ("" unplaced; the members of a failed child placed
// before it failed keep theirs), or the Unschedulable code and message.
func (w *gangWorld) scheduleComposite(ctx context.Context, req *preempt.PodGroupRequest, tree *preempt.GroupNode) ([]string, preempt.Code, string, error) {
	s := w.s
	if w.namesOf != s || len(w.names) != len(s.names) {
		w.names, w.namesOf = append([]string(nil), s.names...), s
	}
	r := compositeRun{w: w, req: req, placement: req.Placement}
	if r.placement == nil {
		r.placement = preempt.FirstFit
	}
	r.placed = make([]int32, len(req.Pods))
	for i := range r.placed {
		r.placed[i] = -1
	}
	w.undo, w.trail, w.trailing = w.undo[:0], w.trail[:0], true
	w.unbound = w.unbound[:0]
	st, any, err := r.group(ctx, tree)
	w.trailing = false
	w.revertTrail(0)
	w.restoreUndo()
	if err != nil {
		return nil, "", "", err
	}
	if st.code == preempt.Success && !any {
		st = compositeStatus{code: preempt.Unschedulable, err: true}
	}
	if st.code != preempt.Success {
		return nil, preempt.Unschedulable, st.message(), nil
	}
	out := make([]string, len(req.Pods))
	for i, n := range r.placed {
		w.assignedTo[i] = n
		if n >= 0 {
			out[i] = s.names[n]
		}
	}
	return out, preempt.Success, "", nil
}

// group is podGroupSchedulingRecursiveAlgorithm for n inside the
// placement algorithm: its status and whether it scheduled a member.
func (r *compositeRun) group(ctx context.Context, n *preempt.GroupNode) (compositeStatus, bool, error) {
	mark := len(r.w.trail)
	var st compositeStatus
	var any bool
	var err error
	if n.CompositePodGroup != nil {
		st, any, err = r.composite(ctx, n)
	} else {
		st, any, err = r.leaf(ctx, n)
	}
	if err != nil {
		return st, false, err
	}
	if st.code == "Wait" {
		st = compositeStatus{code: preempt.Unschedulable, reasons: st.reasons, err: true}
	}
	if st.code != preempt.Success {
		r.w.revertTrail(mark)
		any = false
		// Its members are not bound (its proposals still go to the
		// reprieve).
		n.Walk(func(g *preempt.GroupNode) { r.w.unbound = append(r.w.unbound, g.Members...) })
		st = compositeStatus{code: preempt.Unschedulable, err: true, reasons: []string{placementsReport + st.asError()}}
	}
	return st, any, nil
}

// leaf is podGroupSchedulingDefaultAlgorithm for the PodGroup of n.
func (r *compositeRun) leaf(ctx context.Context, n *preempt.GroupNode) (compositeStatus, bool, error) {
	w, s, pg := r.w, r.w.s, n.PodGroup
	// ScheduledPodsCount: the group's bound members left in the world.
	scheduled := 0
	for p, pod := range s.pods {
		if s.podNode[p] >= 0 && s.live(int32(p)) && w.gone[p] != w.epoch {
			if name, ok := preempt.PodGroupName(pod); ok && name == pg.Name && pod.Namespace == pg.Namespace {
				scheduled++
			}
		}
	}
	minCount := n.MinCount()
	remaining := len(n.Members)
	st := gangFeasible(minCount, remaining, scheduled)
	if st.code == preempt.Unschedulable {
		st.err = true
		return st, false, nil
	}
	members := make([]*v1.Pod, len(n.Members))
	for k, i := range n.Members {
		members[k] = r.req.Pods[i]
	}
	nodes, err := r.placement(ctx, gangView{w}, members)
	if err != nil {
		return st, false, err
	}
	any := false
	for k, i := range n.Members {
		remaining--
		placed := k < len(nodes) && nodes[k] != ""
		if placed {
			node, ok := s.nodeIndex[nodes[k]]
			if !ok {
				return st, false, fmt.Errorf("placement: no node %q", nodes[k])
			}
			scheduled++
			r.placed[i] = node
		}
		st = gangFeasible(minCount, remaining, scheduled)
		if st.code == preempt.Unschedulable {
			break
		}
		any = any || placed
	}
	return st, any, nil
}

// composite is compositePodGroupSchedulingDefaultAlgorithm for the
// CompositePodGroup of n.
func (r *compositeRun) composite(ctx context.Context, n *preempt.GroupNode) (compositeStatus, bool, error) {
	minCount := n.MinCount()
	remaining, scheduled := len(n.Children), 0
	st := gangFeasible(minCount, remaining, scheduled)
	if st.code == preempt.Unschedulable {
		return st, false, nil
	}
	any := false
	for _, c := range n.Children {
		cst, cany, err := r.group(ctx, c)
		if err != nil {
			return st, false, err
		}
		any = any || cany
		remaining--
		if cst.code == preempt.Success {
			scheduled++
		}
		st = gangFeasible(minCount, remaining, scheduled)
		if st.code == preempt.Unschedulable {
			break
		}
	}
	return st, any, nil
}

// gangPriorityAndPolicy are the preemptor's priority and its resolved
// preemption policy (resolvePreemptionPolicy, or
// resolveCompositePreemptionPolicy for a CompositePodGroup).
func gangPriorityAndPolicy(req *preempt.PodGroupRequest, groupPolicy bool) (int32, schedulingv1beta1.PreemptionPolicy) {
	cpg := req.CompositePodGroup
	if cpg == nil {
		return preempt.PodGroupPriority(req.PodGroup), gangPolicy(req.PodGroup, req.Pods, groupPolicy)
	}
	prio := preempt.CompositePodGroupPriority(cpg)
	if groupPolicy {
		if cpg.Spec.PreemptionPolicy != nil && *cpg.Spec.PreemptionPolicy != schedulingv1alpha3.PreemptLowerPriority {
			return prio, schedulingv1beta1.PreemptNever
		}
		return prio, schedulingv1beta1.PreemptLowerPriority
	}
	return prio, gangPolicy(nil, req.Pods, false)
}
