package schedplugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/preemptbench/preemptbench/preempt"
)

// Gangs: PodGroupPostFilter.
//
// The scheduler's pod-group cycle calls PodGroupPostFilter with its own
// scheduling function, which places the gang on the scheduler's mutable
// snapshot (filters and scores, PlacementFeasible). The plugin runs
// upstream's own PodGroupEvaluator (as DefaultPreemption's
// PodGroupPostFilter does: in a mutation session of the snapshot), so
// that what only the scheduler can say is upstream's: the preemptor's
// eligibility, the ongoing preemption, the potential victims it removes,
// the placement (the scheduling function, called once with every
// potential victim removed) and the Executor's API calls. Two seams make
// the decision the implementation's:
//
//   - the scheduling function handed to the evaluator calls the
//     scheduler's, then asks the implementation (PreemptPodGroup with a
//     nil client: decide without acting) for the gang's victims, with
//     that placement as the request's Placement; every victim it names
//     must be one upstream removed (a potential victim);
//   - the evaluator's handle answers the reprieve's filter calls
//     (RunFilterPluginsWithNominatedPods) from the decision: the
//     assignment fits while none of the decision's victims is back in
//     the snapshot. Upstream's reprieve then keeps exactly the decision's
//     victims, and its Executor preempts them.
//
// When upstream's evaluator ends before it schedules (not eligible, an
// ongoing preemption, no potential victim, an error), the implementation
// is asked with a placement that fails the cycle if called, and must give
// the same status and message. A disagreement found before anything is
// acted on falls back (ReasonDisagreement); the evaluator then runs again
// as DefaultPreemption.

// gangCycle is what the seams share during one PodGroupPostFilter.
type gangCycle struct {
	active bool
	// asked: the scheduling function ran and asked the implementation.
	asked    bool
	decision preempt.PodGroupDecision
	// victims are the decision's victims (UID and node).
	victims []gangVictim
	// disagreement says why the implementation's answer does not fit
	// upstream's evaluator ("" when it does).
	disagreement string
}

type gangVictim struct {
	uid  types.UID
	node string
}

// errDisagreement ends the evaluator's run when the implementation's
// answer does not fit it, before anything is acted on.
var errDisagreement = errors.New("the preemptbench implementation's gang decision differs from upstream's evaluator")

// reprieveHandle is the framework handle of the plugin's PodGroupEvaluator:
// the scheduler's, but for the reprieve's filter calls during a gang
// cycle, answered from the implementation's decision.
type reprieveHandle struct {
	fwk.Handle
	pl *Plugin
}

// msgKeptVictim is the filter status of an assignment while one of the
// decision's victims is back in the snapshot.
const msgKeptVictim = "a victim of the preemptbench implementation's decision is back on the node"

func (h reprieveHandle) RunFilterPluginsWithNominatedPods(ctx context.Context, state fwk.CycleState, pod *v1.Pod, info fwk.NodeInfo) *fwk.Status {
	g := &h.pl.gang
	if !g.active || !g.asked {
		return h.Handle.RunFilterPluginsWithNominatedPods(ctx, state, pod, info)
	}
	nodes := h.Handle.MutableSnapshotSharedLister().NodeInfos()
	for _, v := range g.victims {
		if onNode(nodes, v) {
			return fwk.NewStatus(fwk.Unschedulable, msgKeptVictim)
		}
	}
	return nil
}

// onNode reports whether the victim is on its node in the snapshot.
func onNode(nodes fwk.NodeInfoLister, v gangVictim) bool {
	ni, err := nodes.Get(v.node)
	if err != nil {
		return false
	}
	for _, pi := range ni.GetPods() {
		if pi.GetPod().UID == v.uid {
			return true
		}
	}
	return false
}

// schedulerPlacement is the placement the scheduler's scheduling function
// made (node by member UID), as a preempt.Placement: each placed member
// is placed on the implementation's view, which must find it fits there.
func schedulerPlacement(at map[types.UID]string) preempt.Placement {
	return func(ctx context.Context, view preempt.PlacementView, members []*v1.Pod) ([]string, error) {
		out := make([]string, len(members))
		for i, m := range members {
			n := at[m.UID]
			if n == "" {
				continue
			}
			if ok, err := view.Fits(ctx, m, n); err != nil || !ok {
				return nil, fmt.Errorf("the scheduler placed member %s on node %s, where the implementation finds it does not fit (%v)", preempt.Key(m.Namespace, m.Name), n, err)
			}
			if ok, err := view.Place(ctx, m, n); err != nil || !ok {
				return nil, fmt.Errorf("the scheduler placed member %s on node %s, where the implementation cannot (%v)", preempt.Key(m.Namespace, m.Name), n, err)
			}
			out[i] = n
		}
		return out, nil
	}
}

// PodGroupPostFilter decides a gang's preemption with the implementation
// and acts with upstream's PodGroupEvaluator and Executor, or falls back
// to DefaultPreemption's PodGroupPostFilter.
func (pl *Plugin) PodGroupPostFilter(ctx context.Context, state fwk.PodGroupCycleState, pgInfo fwk.PodGroupInfo, schedule fwk.PodGroupSchedulingFunc) (*fwk.PodGroupPostFilterResult, *fwk.Status) {
	res, status, reason, detail := pl.podGroupPostFilterOrReason(ctx, pgInfo, schedule)
	if reason != "" {
		pl.countFallback(ctx, reason, "pod group "+pgInfo.GetNamespace()+"/"+pgInfo.GetName()+": "+detail)
		res, status = pl.dp.PodGroupPostFilter(ctx, state, pgInfo, schedule)
	}
	if res != nil {
		for _, ni := range res.NominatingInfos {
			if ni != nil && ni.Mode() == fwk.ModeOverride {
				pl.follow.nominator.hintNode(ni.NominatedNodeName)
			}
		}
	}
	return res, status
}

func (pl *Plugin) podGroupPostFilterOrReason(ctx context.Context, pgInfo fwk.PodGroupInfo, schedule fwk.PodGroupSchedulingFunc) (_ *fwk.PodGroupPostFilterResult, _ *fwk.Status, _ Reason, detail string) {
	if reason, detail := pl.configRefusal(); reason != "" {
		return nil, nil, reason, detail
	}
	pg := pgInfo.GetPodGroup()
	if pg == nil || pgInfo.GetCompositePodGroup() != nil {
		return nil, nil, ReasonPodGroup, "the preemptor is a CompositePodGroup"
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	start := time.Now()
	logger := klog.FromContext(ctx)
	members := pgInfo.GetUnscheduledPods()
	for _, m := range members {
		if err := preempt.ValidatePod(m); err != nil {
			return nil, nil, ReasonInvalid, err.Error()
		}
	}
	ev, reason, detail := pl.syncFor(preemptorsOf(members...))
	if reason != "" {
		return nil, nil, reason, detail
	}
	for _, m := range members {
		if pl.follow.has(m.UID) {
			return nil, nil, ReasonInvalid, "member " + preempt.Key(m.Namespace, m.Name) + " is bound in the scheduler's cache"
		}
	}
	gp, ok := ev.(preempt.PodGroupPreempter)
	if !ok {
		return nil, nil, ReasonUnmodelled, pl.impl.Name() + " does not decide gangs"
	}
	c := pl.follow.c
	req := &preempt.PodGroupRequest{PodGroup: pg, Pods: members, Config: pl.cfg, Now: start}
	if l, ok := pl.impl.(preempt.PodGroupLimited); ok {
		if u := l.UnmodelledPodGroup(c, req); u != nil {
			return nil, nil, ReasonUnmodelled, u.Error()
		}
	}
	where := make(map[string]*v1.Pod, len(c.Pods))
	for _, p := range c.Pods {
		where[preempt.Key(p.Namespace, p.Name)] = p
	}

	mutable := pl.fh.MutableSnapshotSharedLister()
	if err := mutable.StartMutations(); err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("pod group preemption: failed to start mutations: %w", err)), "", ""
	}
	g := &pl.gang
	*g = gangCycle{active: true}
	defer func() { *g = gangCycle{} }()
	decide := func(ctx context.Context) (*fwk.PodGroupAssignments, *fwk.Status) {
		as, st := schedule(ctx)
		g.asked = true
		at := map[types.UID]string{}
		if st.IsSuccess() && as != nil {
			for _, a := range as.ProposedAssignments {
				at[a.GetPod().UID] = a.GetNodeName()
			}
		}
		r := *req
		r.Placement = schedulerPlacement(at)
		d := gp.PreemptPodGroup(ctx, nil, &r)
		g.decision = d
		if !st.IsSuccess() {
			if d.Status == preempt.Success {
				g.disagreement = fmt.Sprintf("the scheduler placed the gang nowhere (%s), %s answered %s", st.Message(), pl.impl.Name(), d.Status)
				return nil, fwk.AsStatus(errDisagreement)
			}
			return as, st
		}
		if d.Status != preempt.Success {
			g.disagreement = fmt.Sprintf("the scheduler placed the gang, %s answered %s %q", pl.impl.Name(), d.Status, d.Message)
			return nil, fwk.AsStatus(errDisagreement)
		}
		infos := mutable.NodeInfos()
		for _, v := range d.Victims {
			p := where[preempt.Key(v.Namespace, v.Name)]
			if p == nil {
				g.disagreement = fmt.Sprintf("victim %s is not a pod of the cluster", preempt.Key(v.Namespace, v.Name))
				return nil, fwk.AsStatus(errDisagreement)
			}
			gv := gangVictim{uid: p.UID, node: p.Spec.NodeName}
			if onNode(infos, gv) {
				g.disagreement = fmt.Sprintf("victim %s is not one of upstream's potential victims", preempt.Key(v.Namespace, v.Name))
				return nil, fwk.AsStatus(errDisagreement)
			}
			g.victims = append(g.victims, gv)
		}
		return as, st
	}
	res, status := pl.pgev.Preempt(ctx, pgInfo, decide)
	if err := mutable.EndMutations(); err != nil {
		status = fwk.AsStatus(fmt.Errorf("pod group preemption: failed to end mutations: %w", err))
	}
	if g.disagreement != "" {
		return nil, nil, ReasonDisagreement, g.disagreement
	}
	msg := status.Message()
	same := func(d preempt.PodGroupDecision) bool {
		return string(d.Status) == status.Code().String() && d.Message == "pod group preemption: "+msg
	}
	if !g.asked {
		// Upstream's evaluator ended before it scheduled: the
		// implementation must end there too, with the same answer.
		r := *req
		r.Placement = func(context.Context, preempt.PlacementView, []*v1.Pod) ([]string, error) {
			return nil, errDisagreement
		}
		if d := gp.PreemptPodGroup(ctx, nil, &r); !same(d) {
			return nil, nil, ReasonDisagreement, fmt.Sprintf("upstream's evaluator answered %s %q before scheduling, %s %s %q", status.Code(), msg, pl.impl.Name(), d.Status, d.Message)
		}
	} else if d := g.decision; !same(d) {
		if !status.IsSuccess() {
			return nil, nil, ReasonDisagreement, fmt.Sprintf("upstream's evaluator answered %s %q, %s %s %q", status.Code(), msg, pl.impl.Name(), d.Status, d.Message)
		}
		// Acted on already: said, not fallen back.
		logger.Error(errDisagreement, "Answers differ", "plugin", Name, "impl", pl.impl.Name(), "podGroup", klog.KObj(pg),
			"upstream", status.Code().String()+" "+msg, "implementation", string(d.Status)+" "+d.Message)
	}
	metrics.WorkloadPreemptionAttempts.WithLabelValues(status.Code().String()).Inc()
	Decisions.WithLabelValues(pl.impl.Name(), status.Code().String()).Inc()
	logger.V(4).Info("Gang preemption decided", "plugin", Name, "impl", pl.impl.Name(), "podGroup", klog.KObj(pg),
		"status", status.Code().String(), "victims", len(g.victims), "decision", time.Since(start))
	if len(msg) > 0 {
		status = fwk.NewStatus(status.Code(), "pod group preemption: "+msg)
	}
	return res, status, "", ""
}
