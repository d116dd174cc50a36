package upstream

import (
	"context"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"

	"github.com/preemptbench/preemptbench/preempt"
)

// tieByKey is the contract's final key (namespace, name, UID) for two
// pods neither of which upstream finds more important than the other.
func tieByKey(a, b *v1.Pod) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.UID < b.UID
}

// selectCall is one SelectVictimsOnNode call.
type selectCall struct {
	node       string
	victims    []*v1.Pod
	violations int
	status     *fwk.Status
}

// plugin is upstream's DefaultPreemption with the offset taken from the
// request, and every SelectVictimsOnNode call recorded.
type plugin struct {
	*defaultpreemption.DefaultPreemption
	offset int32
	cfg    preempt.Config
	// victimsMaps counts CandidatesToVictimsMap's calls (listtie.go).
	victimsMaps int
	// args and fts built the plugin.
	args config.DefaultPreemptionArgs
	fts  feature.Features

	mu            sync.Mutex
	numCandidates int32
	calls         []selectCall
	// answer is the last extender's answer, nil when none answered: the
	// victims PostFilter's candidates carry after callExtenders.
	answer map[string]*extenderv1.Victims
	// errs are the errors of the executor's PreemptPod, in call order.
	errs []string
	// listOrderTie: see Impl.ListOrderTie; order is the candidates' order
	// of the last CandidatesToVictimsMap.
	listOrderTie bool
	order        []string
}

// recordAnswer keeps an extender's answer.
func (p *plugin) recordAnswer(answer map[string]*extenderv1.Victims) {
	p.mu.Lock()
	p.answer = answer
	p.mu.Unlock()
}

// victimsOn returns the victims of the candidate on node that PostFilter
// chose from: the last extender's answer, or else the dry run's last
// candidate on node (CandidatesToVictimsMap keeps the last).
func (p *plugin) victimsOn(node string, cands []preempt.Candidate) ([]preempt.Victim, int) {
	p.mu.Lock()
	answer := p.answer
	p.mu.Unlock()
	if answer != nil {
		if v := answer[node]; v != nil {
			return victimsOf(v.Pods), int(v.NumPDBViolations)
		}
		return []preempt.Victim{}, 0
	}
	for i := len(cands) - 1; i >= 0; i-- {
		if cands[i].Node == node {
			return cands[i].Victims, cands[i].NumPDBViolations
		}
	}
	return []preempt.Victim{}, 0
}

func (p *plugin) actuationErrors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errs...)
}

var _ preemption.Interface = &plugin{}

// GetOffsetAndNumCandidates is upstream's with the request's offset
// instead of its random one.
func (p *plugin) GetOffsetAndNumCandidates(n int32) (int32, int32) {
	_, num := p.DefaultPreemption.GetOffsetAndNumCandidates(n)
	p.mu.Lock()
	p.numCandidates = num
	p.mu.Unlock()
	return p.offset, num
}

// record notes a SelectVictimsOnNode call (the method, whose signature is
// the release's, is in seams.go) and returns its result.
func (p *plugin) record(nodeInfo fwk.NodeInfo, victims []*v1.Pod, n int, status *fwk.Status) ([]*v1.Pod, int, *fwk.Status) {
	p.mu.Lock()
	p.calls = append(p.calls, selectCall{node: nodeInfo.Node().Name, victims: victims, violations: n, status: status})
	p.mu.Unlock()
	return victims, n, status
}

// dryRun rebuilds what upstream's DryRunPreemption returned from the
// recorded calls, as it does with parallelism 1: non-violating candidates
// then violating ones, each list holding at most numCandidates, and a
// status for every other visited node.
func (p *plugin) dryRun() (candidates []preempt.Candidate, statuses []preempt.NodeStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var nonViolating, violating []preempt.Candidate
	for _, c := range p.calls {
		if c.status.IsSuccess() && len(c.victims) != 0 {
			cand := preempt.Candidate{Node: c.node, NumPDBViolations: c.violations, Victims: victimsOf(c.victims)}
			if c.violations == 0 {
				if int32(len(nonViolating)) < p.numCandidates {
					nonViolating = append(nonViolating, cand)
				}
			} else if int32(len(violating)) < p.numCandidates {
				violating = append(violating, cand)
			}
			continue
		}
		status := c.status
		if status.IsSuccess() {
			status = noVictimStatus(c.node)
		}
		statuses = append(statuses, nodeStatus(c.node, status))
	}
	sortNodeStatuses(statuses)
	return append(nonViolating, violating...), statuses
}

// newPlugin creates upstream's DefaultPreemption for req on w's framework,
// and an Evaluator driving it through the wrapper.
func (ev *evaluator) newPlugin(ctx context.Context, w *world, req *preempt.Request) (*plugin, *preemption.Evaluator, error) {
	args := &config.DefaultPreemptionArgs{
		MinCandidateNodesPercentage: req.Config.MinCandidateNodesPercentage,
		MinCandidateNodesAbsolute:   req.Config.MinCandidateNodesAbsolute,
	}
	fts := w.fts
	fts.EnableAsyncPreemption = !req.Config.Synchronous
	dp, err := defaultpreemption.New(ctx, args, w.fh, fts)
	if err != nil {
		return nil, nil, err
	}
	setVictimOrder(dp)
	p := &plugin{DefaultPreemption: dp, offset: req.Offset, cfg: req.Config, args: *args, fts: fts, listOrderTie: ev.listOrderTie}
	recordPreemptPodErrors(executorOf(dp), func(err error) {
		p.mu.Lock()
		p.errs = append(p.errs, err.Error())
		p.mu.Unlock()
	})
	// PostFilter runs the plugin's Evaluator: this one, with the hooks,
	// listing the PodDisruptionBudgets in the contract's order.
	dp.Evaluator = newEvaluator(names.DefaultPreemption, w.fh, p, executorOf(dp))
	dp.Evaluator.PdbLister = sortedPDBLister{dp.Evaluator.PdbLister}
	return p, dp.Evaluator, nil
}

// statusReader is framework.NodeToStatus with the potential nodes in node
// name order.
type statusReader struct {
	*framework.NodeToStatus
}

var _ fwk.NodeToStatusReader = statusReader{}

func (r statusReader) NodesForStatusCode(lister fwk.NodeInfoLister, code fwk.Code) ([]fwk.NodeInfo, error) {
	nodes, err := r.NodeToStatus.NodesForStatusCode(lister, code)
	if err != nil {
		return nil, err
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Node().Name < nodes[j].Node().Name })
	return nodes, nil
}

// newStatusReader is the filter outcome of req: the listed codes (a
// Success one too: the contract reads only UnschedulableAndUnresolvable as
// giving up the nominated node, in PodEligibleToPreemptOthers), and
// UnschedulableAndUnresolvable (NodeToStatus's default) for the others.
func newStatusReader(req *preempt.Request, c *preempt.Cluster) statusReader {
	m := framework.NewDefaultNodeToStatus()
	for node, code := range req.FilterCodes(c) {
		c := fwk.UnschedulableAndUnresolvable
		switch code {
		case preempt.Unschedulable:
			c = fwk.Unschedulable
		case preempt.Success:
			c = fwk.Success
		}
		m.Set(node, fwk.NewStatus(c))
	}
	return statusReader{m}
}

// candidate is a preemption.Candidate made from a preempt.Candidate.
type candidate struct {
	index   int
	name    string
	victims *extenderv1.Victims
}

func (c *candidate) Victims() *extenderv1.Victims { return c.victims }
func (c *candidate) Name() string                 { return c.name }

// NumPodGroupDisruptions: without GenericWorkload no victim is a group.
func (c *candidate) NumPodGroupDisruptions() int { return 0 }

// podPreemptor is a preemption.ExecutorPreemptor for a pod (upstream's
// podExecutorPreemptor is unexported); asPreemptor gives the executor's
// preemptor of each release (v1.35's is the pod).
type podPreemptor struct {
	*v1.Pod
}

func (p *podPreemptor) UID() types.UID           { return p.Pod.UID }
func (p *podPreemptor) SchedulerName() string    { return p.Spec.SchedulerName }
func (p *podPreemptor) Obj() runtime.Object      { return p.Pod }
func (p *podPreemptor) Pods() map[string]*v1.Pod { return map[string]*v1.Pod{p.Name: p.Pod} }
func (p *podPreemptor) Priority() int32          { return corev1helpers.PodPriority(p.Pod) }
func (p *podPreemptor) Type() string             { return "pod" }
