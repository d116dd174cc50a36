package upstream

import (
	"context"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	"k8s.io/kubernetes/pkg/scheduler/util"

	"github.com/preemptbench/preemptbench/preempt"
)

// moreImportantPod is upstream's util.MoreImportantPod with the contract's
// final key (namespace, name, UID) for pods neither of which is more
// important than the other.
func moreImportantPod(a, b *v1.Pod) bool {
	if util.MoreImportantPod(a, b) {
		return true
	}
	if util.MoreImportantPod(b, a) {
		return false
	}
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

	mu            sync.Mutex
	numCandidates int32
	calls         []selectCall
}

var _ preemption.Interface = &plugin{}

// GetOffsetAndNumCandidates returns the request's offset instead of a random one.
func (p *plugin) GetOffsetAndNumCandidates(n int32) (int32, int32) {
	num := p.cfg.NumCandidates(n)
	p.mu.Lock()
	p.numCandidates = num
	p.mu.Unlock()
	return p.offset, num
}

// SelectVictimsOnNode is upstream's, recorded.
func (p *plugin) SelectVictimsOnNode(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo, pdbs []*policy.PodDisruptionBudget) ([]*v1.Pod, int, *fwk.Status) {
	victims, n, status := p.DefaultPreemption.SelectVictimsOnNode(ctx, state, pod, nodeInfo, pdbs)
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
	dp, err := defaultpreemption.New(ctx, args, w.fh, ev.fts)
	if err != nil {
		return nil, nil, err
	}
	dp.MoreImportantPod = moreImportantPod
	p := &plugin{DefaultPreemption: dp, offset: req.Offset, cfg: req.Config}
	return p, preemption.NewEvaluator(names.DefaultPreemption, w.fh, p, dp.Executor), nil
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

// newStatusReader is the filter outcome of req: the listed codes, and
// UnschedulableAndUnresolvable (NodeToStatus's default) for the others.
func newStatusReader(req *preempt.Request) statusReader {
	m := framework.NewDefaultNodeToStatus()
	for node, code := range req.Filter {
		c := fwk.UnschedulableAndUnresolvable
		if code == preempt.Unschedulable {
			c = fwk.Unschedulable
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

// podPreemptor is a preemption.ExecutorPreemptor for a pod (upstream's
// podExecutorPreemptor is unexported).
type podPreemptor struct {
	*v1.Pod
}

var _ preemption.ExecutorPreemptor = &podPreemptor{}

func (p *podPreemptor) UID() types.UID           { return p.Pod.UID }
func (p *podPreemptor) SchedulerName() string    { return p.Spec.SchedulerName }
func (p *podPreemptor) Obj() runtime.Object      { return p.Pod }
func (p *podPreemptor) Pods() map[string]*v1.Pod { return map[string]*v1.Pod{p.Name: p.Pod} }
func (p *podPreemptor) Priority() int32          { return corev1helpers.PodPriority(p.Pod) }
func (p *podPreemptor) Type() string             { return "pod" }
