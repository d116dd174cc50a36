package schedplugin

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	"k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/preempt"
)

// Name is the plugin's name in the scheduler's registry and profiles.
const Name = "PreemptbenchPreemption"

// Plugin is the PostFilter plugin (with upstream's PreEnqueue, and a
// PreFilter that only records the pods that run a cycle): see the package
// doc.
type Plugin struct {
	fh   fwk.Handle
	impl preempt.Implementation
	cfg  preempt.Config
	// dp is upstream's DefaultPreemption, built with the plugin's args:
	// the fallback, the gangs' PodGroupPostFilter, and PreEnqueue and
	// the queueing hints. Its Executor is also the one that acts on the
	// implementation's decisions (ev), so that PreEnqueue sees every
	// asynchronous preemption.
	dp *defaultpreemption.DefaultPreemption
	ev *preemption.Evaluator
	// pgev is upstream's PodGroupEvaluator on the same Executor, with a
	// handle that answers the reprieve from the implementation's gang
	// decision (gang.go); gang is that cycle's state.
	pgev *preemption.PodGroupEvaluator
	gang gangCycle
	// refusal is the configuration's reason to fall back on every cycle
	// (a gate the implementation does not model), found once.
	refusal     Reason
	refusalText string

	profileOnce   sync.Once
	profileReason Reason
	profileText   string

	// mu serialises PostFilter: the scheduler runs one scheduling cycle
	// at a time, but nothing in the framework promises it to a plugin.
	mu     sync.Mutex
	follow *follower
	// chosen is the decision the hooks answer with, set for the length
	// of one call of ev.Preempt.
	chosen chosen
	codes  []preempt.Code
	rand   *rand.Rand
	// preFiltered is the pod of the last PreFilter: a PostFilter of
	// another pod means PreFilter is not enabled, and the follower reads
	// every node's nominations (nominations.hintPod).
	preFiltered    atomic.Value // types.UID
	noPreFilterLog sync.Once
}

var (
	_ fwk.PostFilterPlugin         = (*Plugin)(nil)
	_ fwk.PreFilterPlugin          = (*Plugin)(nil)
	_ fwk.PreEnqueuePlugin         = (*Plugin)(nil)
	_ fwk.EnqueueExtensions        = (*Plugin)(nil)
	_ fwk.PodGroupPostFilterPlugin = (*Plugin)(nil)
)

// New is the plugin's factory (frameworkruntime.PluginFactory), for
// app.WithPlugin(Name, New) or a frameworkruntime.Registry.
func New(ctx context.Context, obj runtime.Object, fh fwk.Handle) (fwk.Plugin, error) {
	args, cfg, err := decodeArgs(obj)
	if err != nil {
		return nil, err
	}
	impl, err := registry.Lookup(args.Impl)
	if err != nil {
		return nil, fmt.Errorf("%s args: %w", Name, err)
	}
	registerMetrics()
	// The features as the in-tree registry hands them to
	// DefaultPreemption (frameworkruntime.FactoryAdapter): the process's
	// gates (kube-scheduler's --feature-gates).
	fts := feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	dp, err := defaultpreemption.New(ctx, &config.DefaultPreemptionArgs{
		MinCandidateNodesPercentage: cfg.MinCandidateNodesPercentage,
		MinCandidateNodesAbsolute:   cfg.MinCandidateNodesAbsolute,
	}, fh, fts)
	if err != nil {
		return nil, err
	}
	cfg.Synchronous = !fts.EnableAsyncPreemption
	cfg.FeatureGates = changedGates()
	pl := &Plugin{fh: fh, impl: impl, cfg: cfg, dp: dp, rand: rand.New(rand.NewSource(time.Now().UnixNano()))}
	pl.ev = preemption.NewEvaluator(Name, fh, hooks{pl}, dp.Executor)
	pl.pgev = preemption.NewPodGroupEvaluator(reprieveHandle{Handle: fh, pl: pl}, dp.Executor, fts)
	pl.follow = newFollower(impl, fh)
	if u := gateRefusal(impl, cfg); u != nil {
		pl.refusal, pl.refusalText = ReasonGate, u.Error()
	}
	klog.FromContext(ctx).V(2).Info("Preemption by a preemptbench implementation", "plugin", Name, "impl", impl.Name(),
		"synchronous", cfg.Synchronous, "featureGates", preempt.FormatFeatureGates(cfg.FeatureGates))
	return pl, nil
}

// Name is Name.
func (pl *Plugin) Name() string { return Name }

// Impl is the implementation's name.
func (pl *Plugin) Impl() string { return pl.impl.Name() }

// PreEnqueue is DefaultPreemption's: a pod whose asynchronous preemption
// still runs waits.
func (pl *Plugin) PreEnqueue(ctx context.Context, p *v1.Pod) *fwk.Status {
	return pl.dp.PreEnqueue(ctx, p)
}

// PreFilter lets nothing through or out: it records that pod runs a
// scheduling cycle, whose failure handler may change the pod's
// nomination in the scheduling queue's memory, so that the next
// PostFilter reads the nodes it was or is nominated to (nominations).
func (pl *Plugin) PreFilter(_ context.Context, _ fwk.CycleState, p *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	pl.follow.nominator.hintPod(p)
	pl.preFiltered.Store(p.UID)
	return nil, nil
}

// PreFilterExtensions is nil: the plugin has no Filter.
func (pl *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// hintResult records the nodes a PostFilter result nominates to.
func (pl *Plugin) hintResult(res *fwk.PostFilterResult) {
	if res != nil && res.NominatingInfo != nil && res.Mode() == fwk.ModeOverride {
		pl.follow.nominator.hintNode(res.NominatedNodeName)
	}
}

// EventsToRegister is DefaultPreemption's.
func (pl *Plugin) EventsToRegister(ctx context.Context) ([]fwk.ClusterEventWithHint, error) {
	return pl.dp.EventsToRegister(ctx)
}

// PostFilter decides with the implementation and acts with upstream's
// Executor, or falls back to DefaultPreemption.
func (pl *Plugin) PostFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, m fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	if reason, detail := pl.configRefusal(); reason != "" {
		pl.countFallback(ctx, reason, detail)
		return pl.dp.PostFilter(ctx, state, pod, m)
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if uid, _ := pl.preFiltered.Load().(types.UID); uid != pod.UID {
		pl.noPreFilterLog.Do(func() {
			klog.FromContext(ctx).V(2).Info("The plugin's PreFilter is not enabled: every node's nominated pods are read at every cycle", "plugin", Name)
		})
		pl.follow.nominator.readAllNodes()
	}
	res, status, reason, detail := pl.postFilter(ctx, state, pod, m)
	if reason != "" {
		pl.countFallback(ctx, reason, detail)
		res, status = pl.dp.PostFilter(ctx, state, pod, m)
	}
	pl.hintResult(res)
	return res, status
}

// configRefusal is the reason every cycle falls back, or "".
func (pl *Plugin) configRefusal() (Reason, string) {
	if pl.refusal != "" {
		return pl.refusal, pl.refusalText
	}
	pl.profileOnce.Do(func() { pl.profileReason, pl.profileText = profileRefusal(pl.fh) })
	if pl.profileReason != "" {
		return pl.profileReason, pl.profileText
	}
	for _, e := range pl.fh.Extenders() {
		if e.SupportsPreemption() {
			return ReasonExtenders, "extender " + e.Name() + " has a preempt verb"
		}
	}
	return "", ""
}

func (pl *Plugin) countFallback(ctx context.Context, reason Reason, detail string) {
	Fallbacks.WithLabelValues(pl.impl.Name(), string(reason)).Inc()
	klog.FromContext(ctx).V(2).Info("Preemption falls back to DefaultPreemption", "plugin", Name, "impl", pl.impl.Name(), "reason", string(reason), "detail", detail)
}

// postFilter is PostFilter's own path: a reason to fall back, or the
// cycle's answer.
func (pl *Plugin) postFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, m fwk.NodeToStatusReader) (_ *fwk.PostFilterResult, _ *fwk.Status, _ Reason, detail string) {
	start := time.Now()
	logger := klog.FromContext(ctx)
	// The latest version of the preemptor, as upstream's evaluate reads it.
	if p, err := pl.fh.SharedInformerFactory().Core().V1().Pods().Lister().Pods(pod.Namespace).Get(pod.Name); err == nil {
		pod = p
	}
	if pod.Spec.SchedulingGroup != nil {
		return nil, nil, ReasonPodGroup, "the preemptor belongs to a pod group"
	}
	if err := preempt.ValidatePod(pod); err != nil {
		return nil, nil, ReasonInvalid, err.Error()
	}
	ev, reason, detail := pl.syncFor(preemptorsOf(pod))
	if reason != "" {
		return nil, nil, reason, detail
	}
	c := pl.follow.c
	if pl.follow.has(pod.UID) {
		return nil, nil, ReasonInvalid, "the preemptor is bound in the scheduler's cache"
	}
	// The follower holds the volume objects and DeviceClasses, not the
	// scheduler's DRA manager (its claims and slices, and allocations in
	// flight that the API does not show yet): a preemptor DynamicResources
	// looks at falls back (reference and optimized model it where they are
	// given them).
	if u := preempt.ClaimGaps(c, pod); u != nil {
		return nil, nil, ReasonUnmodelled, u.Error() + "; the plugin does not follow the scheduler's DRA manager"
	}
	if l, ok := pl.impl.(preempt.Limited); ok {
		if u := l.Unmodelled(c, pod); u != nil {
			return nil, nil, ReasonUnmodelled, u.Error()
		}
	}

	// The filter codes, in the cluster's node order.
	pl.codes = pl.codes[:0]
	potential := int32(0)
	for _, n := range c.Nodes {
		switch st := m.Get(n.Name); st.Code() {
		case fwk.Unschedulable:
			pl.codes = append(pl.codes, preempt.Unschedulable)
			potential++
		case fwk.UnschedulableAndUnresolvable:
			pl.codes = append(pl.codes, preempt.UnschedulableAndUnresolvable)
		default:
			return nil, nil, ReasonFilterStatus, fmt.Sprintf("node %s has filter status %s", n.Name, st.Code())
		}
	}
	req := &preempt.Request{Pod: pod, Codes: pl.codes, Config: pl.cfg, ReuseOutput: true, Now: start}
	if potential > 0 {
		// Upstream's draw (DefaultPreemption.GetOffsetAndNumCandidates).
		req.Offset = pl.rand.Int31n(potential)
	}

	result := func(code fwk.Code) { Decisions.WithLabelValues(pl.impl.Name(), code.String()).Inc() }
	if ok, msg := ev.PodEligibleToPreemptOthers(req); !ok {
		logger.V(5).Info("Pod is not eligible for preemption", "pod", klog.KObj(pod), "reason", msg)
		result(fwk.Unschedulable)
		metrics.PreemptionAttempts.Inc()
		return nil, fwk.NewStatus(fwk.Unschedulable, "preemption: "+msg), "", ""
	}
	dr, err := ev.FindCandidates(ctx, req)
	if err == nil && len(dr.Errors) > 0 {
		err = errors.New(preempt.AggregateMessage(dr.Errors))
	}
	if err != nil && len(dr.Candidates) == 0 {
		return nil, nil, ReasonError, err.Error()
	}
	if len(dr.Candidates) == 0 {
		// Upstream's FitError over the dry run's statuses, every node
		// counted; the nomination, if any, is cleared.
		logger.V(2).Info("No preemption candidate is found; preemption is not helpful for scheduling", "pod", klog.KObj(pod))
		result(fwk.Unschedulable)
		metrics.PreemptionAttempts.Inc()
		return framework.NewPostFilterResultWithNominatedNode(""), fwk.NewStatus(fwk.Unschedulable, "preemption: "+preempt.FitErrorMessage(len(c.Nodes), dr.NodeStatuses)), "", ""
	}
	best := ev.SelectCandidate(dr.Candidates, req)
	if best == nil || best.Node == "" {
		result(fwk.Unschedulable)
		metrics.PreemptionAttempts.Inc()
		return nil, fwk.NewStatus(fwk.Unschedulable, "preemption: no candidate node for preemption"), "", ""
	}
	logger.V(4).Info("Preemption decided", "plugin", Name, "impl", pl.impl.Name(), "pod", klog.KObj(pod), "node", best.Node,
		"victims", len(best.Victims), "decision", time.Since(start))

	// Upstream acts on it: its Evaluator, with hooks that answer with
	// the decision, runs its dry run on the chosen node alone (the
	// NodeToStatus it is given offers only that node as a potential one)
	// and hands the candidate to its Executor.
	pl.chosen = chosenOf(best)
	defer func() { pl.chosen = chosen{} }()
	res, status := pl.ev.Preempt(ctx, state, pod, onlyNode{m, best.Node})
	metrics.PreemptionAttempts.Inc()
	result(status.Code())
	if msg := status.Message(); msg != "" {
		status = fwk.NewStatus(status.Code(), "preemption: "+msg)
	}
	return res, status, "", ""
}

// syncFor brings the follower to this cycle, whose preemptors are out,
// and counts what it took: the evaluator, or a reason to fall back.
func (pl *Plugin) syncFor(out preemptors) (preempt.Evaluator, Reason, string) {
	reads := pl.follow.nominator.reads
	ev, kind, err := pl.follow.sync(out)
	NominatedReads.WithLabelValues(pl.impl.Name()).Add(float64(pl.follow.nominator.reads - reads))
	if err != nil {
		var inv errInvalid
		if errors.As(err, &inv) {
			return nil, ReasonInvalid, err.Error()
		}
		return nil, ReasonError, err.Error()
	}
	if kind != synced {
		Rebuilds.WithLabelValues(pl.impl.Name(), string(kind)).Inc()
	}
	return ev, "", ""
}

// onlyNode is the cycle's NodeToStatus for upstream's Evaluator once the
// implementation has chosen node: the statuses are the filters', but the
// only node offered as a potential one (status Unschedulable) is node,
// so that upstream's dry run visits it alone, whether or not its victims
// violate a PDB (a violating candidate alone does not stop upstream's dry
// run early).
type onlyNode struct {
	fwk.NodeToStatusReader
	node string
}

func (o onlyNode) NodesForStatusCode(lister fwk.NodeInfoLister, code fwk.Code) ([]fwk.NodeInfo, error) {
	if code != fwk.Unschedulable {
		return o.NodeToStatusReader.NodesForStatusCode(lister, code)
	}
	ni, err := lister.Get(o.node)
	if err != nil {
		return nil, err
	}
	return []fwk.NodeInfo{ni}, nil
}

// changedGates is kube-scheduler's feature gates set away from their
// defaults (the process's gate, as --feature-gates left it, against each
// feature's default at its version), for preempt.Config, less the gates
// only upstream's actuation reads (actuationGates). (Not
// preempt.ChangedGates: its defaults are a copy of the gate made before
// the logging and metrics gates of component-base were registered or
// set, which a kube-scheduler's logging setup changes.)
func changedGates() map[string]bool {
	var out map[string]bool
	for k, spec := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		if actuationGates[string(k)] {
			continue
		}
		if v := utilfeature.DefaultFeatureGate.Enabled(k); v != spec.Default {
			if out == nil {
				out = map[string]bool{}
			}
			out[string(k)] = v
		}
	}
	return out
}

// actuationGates are the gates v1.37.2's preemption reads only when it
// acts, never when it decides: in the plugin upstream's own Executor acts
// on every decision, so the implementations are not asked to model them.
// SchedulerAsyncAPICalls: pkg/scheduler/framework/preemption reads it only
// through fh.APICacher() in executor.go's clearNominatedNodeName (the
// nominations it clears go through the scheduler's API dispatcher); the
// cluster the decision reads is the scheduler's own cache and queue,
// whatever sent the calls that made it. (The upstream implementation
// refuses the gate in `compare decide`, where no dispatcher exists.)
var actuationGates = map[string]bool{"SchedulerAsyncAPICalls": true}

// gateRefusal is the implementation's refusal of the configuration's
// gates and release (what harness.GateRefusal checks, minus the uses of
// pod groups, which the plugin checks per cycle).
func gateRefusal(impl preempt.Implementation, cfg preempt.Config) *preempt.Unmodelled {
	if r, ok := impl.(preempt.ReleaseFixed); ok {
		if u := preempt.ReleaseGap(r.UpstreamRelease(), cfg); u != nil {
			return u
		}
	}
	if u := preempt.BehaviourGap(impl, cfg); u != nil {
		return u
	}
	if l, ok := impl.(preempt.GateLimited); ok {
		if u := preempt.GateGaps(cfg, l.ModelledGates()); u != nil {
			return u
		}
	}
	if l, ok := impl.(preempt.GateUseLimited); ok {
		if u := l.UnmodelledGateUse(&preempt.Cluster{}, &v1.Pod{}, cfg); u != nil {
			return u
		}
	}
	return nil
}
