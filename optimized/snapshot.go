package optimized

import (
	"fmt"
	"math"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/preemptbench/preemptbench/internal/draext"
	"github.com/preemptbench/preemptbench/internal/podinfo"
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
	// clusterIdx[n] is node n's position in the cluster's Nodes (the
	// index of its code in Request.Codes)
	clusterIdx []int32

	dims       int                       // cpu, memory, ephemeral, the scalars, and a zero column (dims-1)
	scalarDims map[v1.ResourceName]int32 // scalar resource -> dimension
	// backedBy resolves the extended resources DeviceClasses back
	// (DRAExtendedResource): on a node that does not advertise one, its
	// allocatable is delegatedAllocatable.
	backedBy draext.Resolver
	// slices are the ResourceSlices with the DeviceTaintRules applied
	// (sliceView), what DynamicResources allocates from.
	slices  []*resourcev1.ResourceSlice
	scalars []v1.ResourceName // dimension-fixedDims -> name, in name order

	alloc       []int64 // node*dims
	allowedPods []int64 // node
	requested   []int64 // node*dims, sum of the bound pods
	tainted     []bool  // node has taints or is unschedulable

	// boundOf[n] lists node n's bound pods in cluster order, sortedOf[n]
	// the same pods by importance, valid when presorted[n]: when every one
	// of them has a start time (the order then does not depend on
	// Request.Now). nomOf[n] lists the pods nominated to n. Each is a
	// window of one array with its capacity cut at its end, so that Update
	// can grow one node's list without touching the others.
	boundOf   [][]int32
	sortedOf  [][]int32
	presorted []bool
	nomOf     [][]int32

	pods       []*v1.Pod
	antiTerms  [][]fwk.AffinityTerm // each pod's required anti-affinity terms
	withAnti   []int32              // the bound pods with such terms, in cluster order
	podNode    []int32              // the node a pod is bound to, -1 if none
	podNom     []int32              // the node an unbound pod is nominated to, -1 if none
	namespaces []*v1.Namespace
	podNS      []string // namespace, name and uid of each pod, contiguous:
	podName    []string // building results and breaking ties read these,
	podUID     []string // never the v1.Pod
	priority   []int32
	// victim is each pod as the contract's Victim, built once: output
	// copies one record per victim instead of gathering three arrays.
	victim      []preempt.Victim
	startNanos  []int64 // status.startTime, valid when hasStart
	hasStart    []bool
	req         []int64 // pod*dims
	terminating []bool  // being deleted because the scheduler preempted it
	portStart   []int32
	ports       []podinfo.HostPort
	pdbStart    []int32                         // pod -> pdbOf[pdbStart[p]:pdbStart[p+1]]
	pdbOf       []int32                         // matching PDBs that do not list the pod as disrupted, in pdbs order
	pdbs        []*policyv1.PodDisruptionBudget // the cluster's, in the contract's order
	pdbAllowed  []int32
	pdbSel      []labels.Selector // nil: matches nothing
	podIndex    map[podKey]int32

	// groupViews are the pod-group views under GenericWorkload, without
	// and with CompositePodGroup (podgroup.go), built on first use.
	groupMu    sync.Mutex
	groupViews [2]*groupView

	// reqs: how the placed pods' requests are computed (reqMode: v0.36's
	// component-helpers, pod-level resize off); the evaluator prepares a
	// snapshot of another mode beside its own only when some pod's
	// requests differ between the two (resizedDiffer).
	reqs reqMode

	volMu  sync.Mutex   // NodeVolumeLimits' index (plugin_nodevolumelimits.go),
	volIdx *volumeIndex // built by prepare when the cluster has volume objects, else on first use; extended by update
	// volIdxPX is the index under v1.35's Portworx rule
	// (preempt.SwitchPortworxMigrated off), built on first use.
	volIdxPX *volumeIndex
}

// resizedDiffer reports whether some pod of c has other requests under
// mode m than under the current release's (a pod resized in place): only
// then does a decision of mode m need a snapshot of its own.
func resizedDiffer(c *preempt.Cluster, m reqMode) bool {
	for _, p := range c.Pods {
		if !sameList(podinfo.PlacedPodRequests(p), placedRequests(p, m)) {
			return true
		}
	}
	return false
}

func sameList(a, b v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		r, ok := b[name]
		if !ok || q.Cmp(r) != 0 {
			return false
		}
	}
	return true
}

// delegatedAllocatable stands for the allocatable of an extended resource
// NodeResourcesFit leaves to DynamicResources on a node: more than any
// request, and far from overflowing when requests are subtracted.
const delegatedAllocatable = math.MaxInt64 / 4

// Prepare builds the snapshot of c, which must have passed Validate.
func Prepare(c *preempt.Cluster) (*Snapshot, error) { return prepare(c, 0) }

// prepare builds the snapshot of c, with the placed requests of mode m.
func prepare(c *preempt.Cluster, m reqMode) (*Snapshot, error) {
	s := &Snapshot{cluster: c, nodeIndex: make(map[string]int32, len(c.Nodes)), scalarDims: map[v1.ResourceName]int32{}, reqs: m,
		backedBy: draext.NewResolver(c.DeviceClasses), slices: sliceView(c)}
	s.clusterIdx = make([]int32, len(c.Nodes))
	for i := range s.clusterIdx {
		s.clusterIdx[i] = int32(i)
	}
	sort.Slice(s.clusterIdx, func(i, j int) bool { return c.Nodes[s.clusterIdx[i]].Name < c.Nodes[s.clusterIdx[j]].Name })
	s.nodes = make([]*v1.Node, len(c.Nodes))
	s.names = make([]string, len(s.nodes))
	for i, ci := range s.clusterIdx {
		n := c.Nodes[ci]
		s.nodes[i] = n
		s.nodeIndex[n.Name] = int32(i)
		s.names[i] = n.Name
	}

	// Dimensions: every scalar resource any node or pod names.
	podReqs := make([]v1.ResourceList, len(c.Pods))
	seen := map[v1.ResourceName]bool{}
	for _, n := range s.nodes {
		for name := range n.Status.Allocatable {
			if podinfo.IsScalarResource(name) {
				seen[name] = true
			}
		}
	}
	for i, p := range c.Pods {
		podReqs[i] = placedRequests(p, m)
		for name := range podReqs[i] {
			if podinfo.IsScalarResource(name) {
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
		for _, name := range s.scalars {
			// NodeResourcesFit leaves an extended resource a
			// DeviceClass backs to DynamicResources on a node that does
			// not advertise it (shouldDelegateResourceToDRA): no request
			// exceeds this allocatable.
			if dim := s.scalarDims[name]; s.backedBy.Class(name) != nil && s.alloc[i*s.dims+int(dim)] <= 0 {
				s.alloc[i*s.dims+int(dim)] = delegatedAllocatable
			}
		}
		pods := n.Status.Allocatable[v1.ResourcePods]
		s.allowedPods[i] = pods.Value()
		s.tainted[i] = n.Spec.Unschedulable || len(n.Spec.Taints) > 0
	}

	np := len(c.Pods)
	s.pods = make([]*v1.Pod, 0, np)
	s.namespaces = c.Namespaces
	s.podIndex = make(map[podKey]int32, np)
	s.portStart = append(make([]int32, 0, np+1), 0)
	s.pdbStart = append(make([]int32, 0, np+1), 0)
	s.req = make([]int64, 0, np*s.dims)
	s.pdbs = preempt.SortedPDBs(c.PDBs)
	s.pdbAllowed = make([]int32, len(s.pdbs))
	s.pdbSel = make([]labels.Selector, len(s.pdbs))
	for i, pdb := range s.pdbs {
		s.pdbAllowed[i] = pdb.Status.DisruptionsAllowed
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err == nil && !sel.Empty() {
			s.pdbSel[i] = sel // an invalid or empty selector matches nothing
		}
	}
	boundCount := make([]int32, nn)
	nomCount := make([]int32, nn)
	for i, p := range c.Pods {
		if err := s.appendPod(p, podReqs[i]); err != nil {
			return nil, err
		}
		if n := s.podNode[i]; n >= 0 {
			boundCount[n]++
		}
		if n := s.podNom[i]; n >= 0 {
			nomCount[n]++
		}
	}
	s.boundOf = windows(boundCount)
	s.nomOf = windows(nomCount)
	for i := range int32(np) {
		if n := s.podNode[i]; n >= 0 {
			s.boundOf[n] = append(s.boundOf[n], i)
		}
		if n := s.podNom[i]; n >= 0 {
			s.nomOf[n] = append(s.nomOf[n], i)
		}
	}
	s.sortedOf = windows(boundCount)
	s.presorted = make([]bool, nn)
	for n := range int32(nn) {
		s.sortNode(n)
	}
	if len(c.PVCs)+len(c.PVs)+len(c.CSINodes)+len(c.VolumeAttachments) > 0 {
		// Built with the snapshot, as kube-scheduler's volume listers are
		// filled before its first cycle, for the current release (Portworx
		// migrated); the other is built on first use.
		s.volIdx = newVolumeIndex(s, false)
	}
	return s, nil
}

// windows returns, for each count, an empty slice with that capacity,
// all of them cut from one array.
func windows(counts []int32) [][]int32 {
	total := 0
	for _, c := range counts {
		total += int(c)
	}
	all := make([]int32, total)
	out := make([][]int32, len(counts))
	at := 0
	for n, c := range counts {
		out[n] = all[at : at : at+int(c)]
		at += int(c)
	}
	return out
}

// appendPod adds p, with its requests reqs, as the next pod index: every
// per-pod vector, the pod index, the requested sums of its node. It does
// not touch the per-node lists.
func (s *Snapshot) appendPod(p *v1.Pod, reqs v1.ResourceList) error {
	i := int32(len(s.pods))
	key := preempt.Key(p.Namespace, p.Name)
	node, nom := int32(-1), int32(-1)
	switch {
	case preempt.IsBound(p):
		n, ok := s.nodeIndex[p.Spec.NodeName]
		if !ok {
			return fmt.Errorf("pod %s is bound to unknown node %q", key, p.Spec.NodeName)
		}
		node = n
	case preempt.IsNominated(p):
		n, ok := s.nodeIndex[p.Status.NominatedNodeName]
		if !ok {
			return fmt.Errorf("pod %s is nominated to unknown node %q", key, p.Status.NominatedNodeName)
		}
		nom = n
	}
	s.pods = append(s.pods, p)
	s.podNode = append(s.podNode, node)
	s.podNom = append(s.podNom, nom)
	var anti []fwk.AffinityTerm
	if terms := requiredTerms(p.Spec.Affinity, true); len(terms) > 0 {
		anti, _ = fwk.GetAffinityTerms(p, terms) // the API server rejects selectors that fail
	}
	s.antiTerms = append(s.antiTerms, anti)
	if node >= 0 && len(anti) > 0 {
		s.withAnti = append(s.withAnti, i)
	}
	s.podIndex[podKey{p.Namespace, p.Name}] = i
	s.podNS, s.podName, s.podUID = append(s.podNS, p.Namespace), append(s.podName, p.Name), append(s.podUID, string(p.UID))
	s.victim = append(s.victim, preempt.VictimOf(p))
	s.priority = append(s.priority, corev1helpers.PodPriority(p))
	var start int64
	if p.Status.StartTime != nil {
		start = p.Status.StartTime.UnixNano()
	}
	s.startNanos, s.hasStart = append(s.startNanos, start), append(s.hasStart, p.Status.StartTime != nil)
	s.req = append(s.req, make([]int64, s.dims)...)
	s.addList(s.req[int(i)*s.dims:int(i+1)*s.dims], reqs, 1)
	s.terminating = append(s.terminating, podinfo.TerminatingByPreemption(p))
	s.ports = podinfo.AppendHostPorts(s.ports, p)
	s.portStart = append(s.portStart, int32(len(s.ports)))
	if len(p.Labels) > 0 {
		for j, pdb := range s.pdbs {
			if s.pdbSel[j] == nil || pdb.Namespace != p.Namespace || !s.pdbSel[j].Matches(labels.Set(p.Labels)) {
				continue
			}
			if _, disrupted := pdb.Status.DisruptedPods[p.Name]; disrupted {
				continue
			}
			s.pdbOf = append(s.pdbOf, int32(j))
		}
	}
	s.pdbStart = append(s.pdbStart, int32(len(s.pdbOf)))
	if node >= 0 {
		s.addRequested(node, i, 1)
	}
	return nil
}

// addRequested adds sign times pod p's requests to node n's sums.
func (s *Snapshot) addRequested(n, p int32, sign int64) {
	row := s.requested[int(n)*s.dims : int(n+1)*s.dims]
	for d := range row {
		row[d] += sign * s.req[int(p)*s.dims+d]
	}
}

// sortNode rebuilds sortedOf[n] from boundOf[n] and presorted[n].
func (s *Snapshot) sortNode(n int32) {
	pods := append(s.sortedOf[n][:0], s.boundOf[n]...)
	s.sortedOf[n] = pods
	s.presorted[n] = true
	for _, p := range pods {
		if !s.hasStart[p] {
			s.presorted[n] = false
			return
		}
	}
	noNow := &decision{s: s} // every pod sorted here has a start time
	sort.Slice(pods, func(i, j int) bool { return noNow.moreImportant(pods[i], pods[j]) })
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
