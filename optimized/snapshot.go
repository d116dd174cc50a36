// Package optimized implements the preempt contract with the allocations
// taken out: a cluster is prepared once into flat integer vectors, a
// decision works on indices and reused scratch buffers, and the dry run runs
// on several workers while committing results in visit order, so that it
// returns exactly the sequential (reference) answer.
//
// The decision is the reference's for every input; preempttest proves it.
package optimized

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/preemptbench/preemptbench/preempt"
)

// Resource dimensions: cpu (millicores), memory, ephemeral storage, then
// the scalar resources of the cluster in name order.
const (
	dimCPU = iota
	dimMemory
	dimEphemeral
	fixedDims
)

type podKey struct{ namespace, name string }

// Snapshot is a cluster prepared for many decisions. It is read-only once
// built and may be shared by evaluators.
type Snapshot struct {
	cluster   *preempt.Cluster // what it was prepared from (extenders read its pods)
	nodes     []*v1.Node       // in name order
	names     []string         // the nodes' names, contiguous: the per-decision scan reads only these
	nodeIndex map[string]int32

	dims       int                       // cpu, memory, ephemeral, the scalars, and a zero column (dims-1)
	scalarDims map[v1.ResourceName]int32 // scalar resource -> dimension
	scalars    []v1.ResourceName         // dimension-fixedDims -> name, in name order

	alloc       []int64 // node*dims
	allowedPods []int64 // node
	requested   []int64 // node*dims, sum of the bound pods
	tainted     []bool  // node has taints or is unschedulable

	boundStart []int32 // node -> bound[boundStart[n]:boundStart[n+1]]
	bound      []int32 // pod indices, cluster order per node
	// byImportance holds each node's bound pods sorted by importance when
	// every one of them has a start time (the order then does not depend
	// on Request.Now); presorted[n] says whether node n's slice is.
	byImportance []int32
	presorted    []bool
	nomStart     []int32
	nominated    []int32

	pods        []*v1.Pod
	antiTerms   [][]fwk.AffinityTerm // each pod's required anti-affinity terms
	namespaces  []*v1.Namespace
	podNS       []string // namespace, name and uid of each pod, contiguous:
	podName     []string // building results and breaking ties read these,
	podUID      []string // never the v1.Pod
	priority    []int32
	startNanos  []int64 // status.startTime, valid when hasStart
	hasStart    []bool
	req         []int64 // pod*dims
	terminating []bool  // being deleted because the scheduler preempted it
	portStart   []int32
	ports       []preempt.HostPort
	pdbStart    []int32 // pod -> pdbOf[pdbStart[p]:pdbStart[p+1]]
	pdbOf       []int32 // matching PDBs that do not list the pod as disrupted
	pdbAllowed  []int32
	podIndex    map[podKey]int32
}

// Prepare builds the snapshot of c, which must have passed Validate.
func Prepare(c *preempt.Cluster) (*Snapshot, error) {
	s := &Snapshot{cluster: c, nodeIndex: make(map[string]int32, len(c.Nodes)), scalarDims: map[v1.ResourceName]int32{}}
	s.nodes = append([]*v1.Node(nil), c.Nodes...)
	sort.Slice(s.nodes, func(i, j int) bool { return s.nodes[i].Name < s.nodes[j].Name })
	s.names = make([]string, len(s.nodes))
	for i, n := range s.nodes {
		s.nodeIndex[n.Name] = int32(i)
		s.names[i] = n.Name
	}

	// Dimensions: every scalar resource any node or pod names.
	podReqs := make([]v1.ResourceList, len(c.Pods))
	seen := map[v1.ResourceName]bool{}
	for _, n := range s.nodes {
		for name := range n.Status.Allocatable {
			if preempt.IsScalarResource(name) {
				seen[name] = true
			}
		}
	}
	for i, p := range c.Pods {
		podReqs[i] = preempt.PlacedPodRequests(p)
		for name := range podReqs[i] {
			if preempt.IsScalarResource(name) {
				seen[name] = true
			}
		}
	}
	for name := range seen {
		s.scalars = append(s.scalars, name)
	}
	sort.Slice(s.scalars, func(i, j int) bool { return s.scalars[i] < s.scalars[j] })
	for i, name := range s.scalars {
		s.scalarDims[name] = int32(fixedDims + i)
	}
	// One more dimension, zero everywhere, stands for a scalar resource the
	// preemptor asks for and nothing in the cluster names.
	s.dims = fixedDims + len(s.scalars) + 1

	nn := len(s.nodes)
	s.alloc = make([]int64, nn*s.dims)
	s.allowedPods = make([]int64, nn)
	s.requested = make([]int64, nn*s.dims)
	s.tainted = make([]bool, nn)
	for i, n := range s.nodes {
		s.addList(s.alloc[i*s.dims:(i+1)*s.dims], n.Status.Allocatable, 1)
		pods := n.Status.Allocatable[v1.ResourcePods]
		s.allowedPods[i] = pods.Value()
		s.tainted[i] = n.Spec.Unschedulable || len(n.Spec.Taints) > 0
	}

	np := len(c.Pods)
	s.pods = c.Pods
	s.namespaces = c.Namespaces
	s.antiTerms = make([][]fwk.AffinityTerm, np)
	for i, p := range c.Pods {
		if terms := requiredTerms(p.Spec.Affinity, true); len(terms) > 0 {
			s.antiTerms[i], _ = fwk.GetAffinityTerms(p, terms) // the API server rejects selectors that fail
		}
	}
	s.podNS, s.podName, s.podUID = make([]string, np), make([]string, np), make([]string, np)
	s.priority = make([]int32, np)
	s.startNanos = make([]int64, np)
	s.hasStart = make([]bool, np)
	s.req = make([]int64, np*s.dims)
	s.terminating = make([]bool, np)
	s.portStart = make([]int32, np+1)
	s.pdbStart = make([]int32, np+1)
	s.podIndex = make(map[podKey]int32, np)
	s.pdbAllowed = make([]int32, len(c.PDBs))
	selectors := make([]labels.Selector, len(c.PDBs))
	for i, pdb := range c.PDBs {
		s.pdbAllowed[i] = pdb.Status.DisruptionsAllowed
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err == nil && !sel.Empty() {
			selectors[i] = sel // an invalid or empty selector matches nothing
		}
	}
	boundCount := make([]int32, nn+1)
	nomCount := make([]int32, nn+1)
	for i, p := range c.Pods {
		s.podIndex[podKey{p.Namespace, p.Name}] = int32(i)
		s.podNS[i], s.podName[i], s.podUID[i] = p.Namespace, p.Name, string(p.UID)
		s.priority[i] = corev1helpers.PodPriority(p)
		if p.Status.StartTime != nil {
			s.startNanos[i], s.hasStart[i] = p.Status.StartTime.UnixNano(), true
		}
		s.addList(s.req[i*s.dims:(i+1)*s.dims], podReqs[i], 1)
		s.terminating[i] = preempt.TerminatingByPreemption(p)
		s.ports = preempt.AppendHostPorts(s.ports, p)
		s.portStart[i+1] = int32(len(s.ports))
		if len(p.Labels) > 0 {
			for j, pdb := range c.PDBs {
				if selectors[j] == nil || pdb.Namespace != p.Namespace || !selectors[j].Matches(labels.Set(p.Labels)) {
					continue
				}
				if _, disrupted := pdb.Status.DisruptedPods[p.Name]; disrupted {
					continue
				}
				s.pdbOf = append(s.pdbOf, int32(j))
			}
		}
		s.pdbStart[i+1] = int32(len(s.pdbOf))
		switch {
		case preempt.IsBound(p):
			n, ok := s.nodeIndex[p.Spec.NodeName]
			if !ok {
				return nil, fmt.Errorf("pod %s is bound to unknown node %q", preempt.Key(p.Namespace, p.Name), p.Spec.NodeName)
			}
			boundCount[n+1]++
			row := s.requested[int(n)*s.dims : int(n+1)*s.dims]
			for d := range row {
				row[d] += s.req[i*s.dims+d]
			}
		case preempt.IsNominated(p):
			n, ok := s.nodeIndex[p.Status.NominatedNodeName]
			if !ok {
				return nil, fmt.Errorf("pod %s is nominated to unknown node %q", preempt.Key(p.Namespace, p.Name), p.Status.NominatedNodeName)
			}
			nomCount[n+1]++
		}
	}
	s.boundStart, s.bound = csr(nn, boundCount, c.Pods, func(p *v1.Pod) (string, bool) { return p.Spec.NodeName, preempt.IsBound(p) }, s.nodeIndex)
	s.nomStart, s.nominated = csr(nn, nomCount, c.Pods, func(p *v1.Pod) (string, bool) { return p.Status.NominatedNodeName, preempt.IsNominated(p) }, s.nodeIndex)

	s.byImportance = append([]int32(nil), s.bound...)
	s.presorted = make([]bool, nn)
	noNow := &decision{s: s} // every pod sorted here has a start time
	for n := range nn {
		pods := s.byImportance[s.boundStart[n]:s.boundStart[n+1]]
		s.presorted[n] = true
		for _, p := range pods {
			if !s.hasStart[p] {
				s.presorted[n] = false
			}
		}
		if s.presorted[n] {
			sort.Slice(pods, func(i, j int) bool { return noNow.moreImportant(pods[i], pods[j]) })
		}
	}
	return s, nil
}

// csr lays out, per node, the indices of the pods that belong to it, in
// cluster order.
func csr(nn int, counts []int32, pods []*v1.Pod, nodeOf func(*v1.Pod) (string, bool), index map[string]int32) ([]int32, []int32) {
	start := make([]int32, nn+1)
	for i := 1; i <= nn; i++ {
		start[i] = start[i-1] + counts[i]
	}
	out := make([]int32, start[nn])
	fill := append([]int32(nil), start[:nn]...)
	for i, p := range pods {
		if name, ok := nodeOf(p); ok {
			n := index[name]
			out[fill[n]] = int32(i)
			fill[n]++
		}
	}
	return start, out
}

func (s *Snapshot) addList(row []int64, rl v1.ResourceList, sign int64) {
	for name, q := range rl {
		switch name {
		case v1.ResourceCPU:
			row[dimCPU] += sign * q.MilliValue()
		case v1.ResourceMemory:
			row[dimMemory] += sign * q.Value()
		case v1.ResourceEphemeralStorage:
			row[dimEphemeral] += sign * q.Value()
		default:
			if d, ok := s.scalarDims[name]; ok {
				row[d] += sign * q.Value()
			}
		}
	}
}
