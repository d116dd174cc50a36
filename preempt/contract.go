package preempt

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/client-go/kubernetes"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// Code is the outcome of a filter, a stage or a whole decision. The values
// are upstream's fwk.Code names, plus Schedulable for a pod that needs no
// preemption (only `compare decide` produces it).
type Code string

const (
	Success                      Code = "Success"
	Unschedulable                Code = "Unschedulable"
	UnschedulableAndUnresolvable Code = "UnschedulableAndUnresolvable"
	Error                        Code = "Error"
	Schedulable                  Code = "Schedulable"
)

// Status is a code with upstream's reasons, in upstream's order.
type Status struct {
	Code    Code
	Reasons []string
}

// IsSuccess reports whether the status is a success (the zero Status is one).
func (s Status) IsSuccess() bool { return s.Code == "" || s.Code == Success }

// Message joins the reasons as upstream's fwk.Status.Message does.
func (s Status) Message() string {
	msg := ""
	for i, r := range s.Reasons {
		if i > 0 {
			msg += ", "
		}
		msg += r
	}
	return msg
}

// Cluster is a snapshot made of k8s.io/api objects.
//
// Pods holds the pods bound to a node (spec.nodeName set) and the pods
// nominated to a node but not bound (spec.nodeName empty,
// status.nominatedNodeName set). Pods that are neither are ignored. The
// preemptor is not part of the cluster.
type Cluster struct {
	Nodes []*v1.Node
	Pods  []*v1.Pod
	PDBs  []*policyv1.PodDisruptionBudget

	// The objects only the default profile's volume and inter-pod affinity
	// filters read: namespaces (namespaceSelector), persistent volume
	// claims and volumes, storage classes, CSI nodes and drivers, and
	// volume attachments (attach limits).
	// An implementation that models none of those filters ignores them
	// and refuses a pod they could matter to (see Limited).
	Namespaces     []*v1.Namespace
	PVCs           []*v1.PersistentVolumeClaim
	PVs            []*v1.PersistentVolume
	StorageClasses []*storagev1.StorageClass
	CSINodes       []*storagev1.CSINode
	CSIDrivers     []*storagev1.CSIDriver
	// VolumeAttachments count against a node's attach limit besides its
	// pods' volumes.
	VolumeAttachments []*storagev1.VolumeAttachment
	// CSIStorageCapacities are what VolumeBinding checks an unbound
	// claim's dynamic provisioning against, for a CSIDriver with
	// storageCapacity: true.
	CSIStorageCapacities []*storagev1.CSIStorageCapacity

	// The objects of dynamic resource allocation (resource.k8s.io/v1),
	// which DynamicResources reads: the claims (a pod's, by name or made
	// from a template, status.resourceClaimStatuses naming them; their
	// status.allocation the devices they hold), the templates, the
	// devices nodes publish (ResourceSlices) and the classes claims ask
	// for (DeviceClasses, which may also back an extended resource).
	ResourceClaims         []*resourcev1.ResourceClaim
	ResourceClaimTemplates []*resourcev1.ResourceClaimTemplate
	ResourceSlices         []*resourcev1.ResourceSlice
	DeviceClasses          []*resourcev1.DeviceClass
	// DeviceTaintRules (resource.k8s.io/v1, DRADeviceTaintRules) add
	// their taint to the devices their selector matches, in the slices
	// DynamicResources allocates from (the ResourceSlice tracker's
	// patched slices): a device with a taint the request does not
	// tolerate, NoSchedule or NoExecute, is not allocated.
	DeviceTaintRules []*DeviceTaintRule

	// PodGroups (scheduling.k8s.io/v1beta1) and CompositePodGroups
	// (v1alpha3) are the workload objects a pod's spec.schedulingGroup
	// names (PodGroupName) and their parents. kube-scheduler reads them
	// only under GenericWorkload (and CompositePodGroup for the
	// composites): a victim's priority and unit (PodGroupIndex), a gang
	// preemptor's policy (PodGroupRequest).
	PodGroups          []*PodGroup
	CompositePodGroups []*CompositePodGroup
}

// Config is the scheduler configuration preemption reads: the
// DefaultPreemptionArgs, the extenders and the SchedulerAsyncPreemption
// feature gate.
type Config struct {
	MinCandidateNodesPercentage int32
	MinCandidateNodesAbsolute   int32
	// Extenders are KubeSchedulerConfiguration.extenders in configuration
	// order, in kubescheduler.config.k8s.io/v1's type (kube-scheduler
	// converts them field for field to its internal one). Those with a
	// preempt verb that are interested in the preemptor are called by
	// CallExtenders. A configuration whose extenders would change the
	// filter phase (a filter verb, resources ignored by the scheduler) is
	// the caller's to refuse.
	Extenders []configv1.Extender
	// Synchronous selects the synchronous actuation of releases before
	// v1.33 (SchedulerAsyncPreemption off). The zero value is upstream's
	// default, asynchronous preemption (see Actuate).
	Synchronous bool
	// FeatureGates are the feature gates set explicitly (kube-scheduler's
	// --feature-gates), on top of v1.37.2's defaults; nil sets none. A
	// gate set to its default changes nothing. SchedulerAsyncPreemption,
	// when set, must agree with Synchronous. An implementation that does
	// not model a gate set away from its default refuses (GateLimited).
	FeatureGates map[string]bool
	// Release is the upstream release whose behaviour the decision
	// reproduces (one of Releases; empty is CurrentRelease). Each behaviour
	// change between releases is a Switch (release.go).
	Release string `json:",omitempty"`
	// Switches set single behaviour switches on top of the release's, to
	// find which change explains a difference between releases; nil sets
	// none.
	Switches map[Switch]bool `json:",omitempty"`
}

// DefaultConfig is upstream's default DefaultPreemptionArgs.
func DefaultConfig() Config {
	return Config{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}
}

// Validate applies upstream's ValidateDefaultPreemptionArgs, and upstream's
// validation of the extenders (ValidateKubeSchedulerConfiguration's).
func (c Config) Validate() error {
	if err := validateDefaultPreemptionArgs(c.MinCandidateNodesPercentage, c.MinCandidateNodesAbsolute); err != nil {
		return err
	}
	if err := validateRelease(c); err != nil {
		return err
	}
	if err := ValidateFeatureGates(c.FeatureGates); err != nil {
		return fmt.Errorf("feature gates: %w", err)
	}
	if v, ok := c.FeatureGates[AsyncPreemptionGate]; ok && v == c.Synchronous {
		return fmt.Errorf("feature gates: %s=%t contradicts the synchronous setting (Synchronous=%t)", AsyncPreemptionGate, v, c.Synchronous)
	}
	if len(c.Extenders) == 0 {
		return nil
	}
	return ValidateExtenders(c.Extenders)
}

// NumCandidates is upstream's calculateNumCandidates:
// min(max(numNodes*percentage/100, absolute), numNodes), in int32 as upstream.
func (c Config) NumCandidates(numNodes int32) int32 {
	n := (numNodes * c.MinCandidateNodesPercentage) / 100
	if n < c.MinCandidateNodesAbsolute {
		n = c.MinCandidateNodesAbsolute
	}
	if n > numNodes {
		n = numNodes
	}
	return n
}

// Request is one preemption attempt: the pod, the filter outcome per node and
// the knobs upstream draws at random or reads from the wall clock.
type Request struct {
	// Pod is the preemptor. It is not in the Cluster.
	Pod *v1.Pod
	// Filter is the filter code of each node that failed the filters.
	// Nodes absent from it are UnschedulableAndUnresolvable, as in upstream's
	// NodeToStatus whose absent-node status is UnschedulableAndUnresolvable.
	Filter map[string]Code
	// Codes, when not nil, is the filter outcome as a slice instead of
	// Filter: Codes[i] is the code of the i-th node of the cluster the
	// evaluator was built from (Cluster.Nodes[i]), Unschedulable or
	// UnschedulableAndUnresolvable, and Filter is ignored. A scheduler has
	// its filter results in its node list's order; an implementation reads
	// one code per node instead of one map lookup per node. NodeOrder
	// turns a FilterResult into Codes.
	Codes  []Code
	Config Config
	// ReuseOutput says the caller keeps nothing a call returns past the
	// evaluator's next FindCandidates, DryRunPreemption or Preempt: the
	// candidates (with their victims) and node statuses of the DryRun or
	// Decision that this request's call returns may live in buffers the
	// evaluator reuses, as a scheduler that acts on one decision before
	// the next lets them. Answers are the same with it or without it; an
	// implementation may ignore it (reference and upstream do; optimized
	// then allocates nothing per candidate).
	ReuseOutput bool
	// Offset is the dry run's start in the list of potential nodes (>= 0).
	Offset int32
	// Now is the start time of every pod without status.startTime.
	Now time.Time
	// Preempting, when set, is the scheduler's record of an asynchronous
	// preemption of Pod still running (upstream's Executor): the pod is
	// then kept out of the scheduling queue (DefaultPreemption's
	// PreEnqueue) until it ends. Ignored when Config.Synchronous.
	Preempting *Preempting
}

// Preempting is the executor's record of a running asynchronous
// preemption.
type Preempting struct {
	// LastVictim is the victim the executor preempts last, once it has
	// started on it; nil while it still preempts the others. Once it has
	// started on the last victim, the preemption counts as finished as soon
	// as that pod is gone from the cluster or terminating.
	LastVictim *PodRef
}

// MessageWaitingForPreemption is PreEnqueue's message for a pod whose
// preemption is still running.
const MessageWaitingForPreemption = "waiting for the preemption for this pod to be finished"

// RunningPreemption is upstream's Executor.IsPodRunningPreemption for the
// request's pod on cluster c: a record, under asynchronous preemption,
// whose last victim (if the executor has reached it) is still in c and
// not terminating.
func RunningPreemption(c *Cluster, req *Request) bool {
	if req.Preempting == nil || req.Config.Synchronous {
		return false
	}
	last := req.Preempting.LastVictim
	if last == nil {
		return true
	}
	for _, p := range c.Pods {
		if p.Namespace == last.Namespace && p.Name == last.Name {
			return p.DeletionTimestamp == nil
		}
	}
	return false
}

// FilterCode is the filter code of node, UnschedulableAndUnresolvable when
// absent, from Filter. A request with Codes needs the cluster: see
// FilterCodes.
func (r *Request) FilterCode(node string) Code {
	if c, ok := r.Filter[node]; ok {
		return c
	}
	return UnschedulableAndUnresolvable
}

// FilterCodes is the request's filter outcome as a map, on cluster c (the
// evaluator's): Filter itself, or a map made from Codes.
func (r *Request) FilterCodes(c *Cluster) map[string]Code {
	if r.Codes == nil {
		return r.Filter
	}
	m := make(map[string]Code, len(r.Codes))
	for i, code := range r.Codes {
		if i < len(c.Nodes) {
			m[c.Nodes[i].Name] = code
		}
	}
	return m
}

// ValidateFor is Validate plus the checks that need the cluster: Codes has
// one code per node of c.
func (r *Request) ValidateFor(c *Cluster) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if r.Codes != nil && len(r.Codes) != len(c.Nodes) {
		return fmt.Errorf("request: %d filter codes for %d nodes", len(r.Codes), len(c.Nodes))
	}
	return nil
}

// Validate checks the parts of a request an implementation relies on.
func (r *Request) Validate() error {
	if r.Pod == nil {
		return fmt.Errorf("request: no preemptor pod")
	}
	if r.Offset < 0 {
		return fmt.Errorf("request: offset %d is negative", r.Offset)
	}
	for node, c := range r.Filter {
		switch c {
		case Unschedulable, UnschedulableAndUnresolvable:
		default:
			return fmt.Errorf("request: node %q has filter code %q, want Unschedulable or UnschedulableAndUnresolvable", node, c)
		}
	}
	for i, c := range r.Codes {
		switch c {
		case Unschedulable, UnschedulableAndUnresolvable:
		default:
			return fmt.Errorf("request: node #%d has filter code %q, want Unschedulable or UnschedulableAndUnresolvable", i, c)
		}
	}
	if err := r.Config.Validate(); err != nil {
		return fmt.Errorf("request: config: %w", err)
	}
	return nil
}

// PodRef names a pod.
type PodRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func (p PodRef) String() string { return p.Namespace + "/" + p.Name }

// Victim is a pod chosen for preemption.
type Victim struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Priority is the pod's own priority (spec.priority), not its
	// group's.
	Priority int32 `json:"priority"`
	// PodGroup is the pod group the pod names ("namespace/name" of
	// spec.schedulingGroup.podGroupName), whatever the gates; "" for a
	// pod outside any group.
	PodGroup string `json:"podGroup,omitempty"`
}

// VictimOf is p as a Victim: its own priority and the pod group it
// names.
func VictimOf(p *v1.Pod) Victim {
	v := Victim{Namespace: p.Namespace, Name: p.Name, Priority: corev1helpers.PodPriority(p)}
	if name, ok := PodGroupName(p); ok {
		v.PodGroup = Key(p.Namespace, name)
	}
	return v
}

// Candidate is a node on which the preemptor fits once its victims are gone.
// Victims are in importance order (most important first).
type Candidate struct {
	Node             string   `json:"node"`
	NumPDBViolations int      `json:"numPDBViolations"`
	Victims          []Victim `json:"victims"`
}

// NodeStatus is a node's outcome in the dry run (only nodes that did not
// become candidates have one).
type NodeStatus struct {
	Node    string
	Code    Code
	Reasons []string
}

// DryRun is what FindCandidates and DryRunPreemption return. Errors holds the
// messages of the nodes that ended in Error, in visit order.
type DryRun struct {
	Candidates   []Candidate
	NodeStatuses []NodeStatus // sorted by node name
	Errors       []string
}

// Decision is the outcome of one preemption attempt (Evaluator.Preempt plus
// the nomination the scheduler applies afterwards).
type Decision struct {
	Status  Code
	Message string
	// NominatedNode is the node the preemptor is nominated to, "" if none.
	NominatedNode    string
	NumPDBViolations int
	// NumPodGroupDisruptions is the chosen candidate's count of victims
	// that are pod groups (v1.37's Candidate.NumPodGroupDisruptions): 0
	// while every victim is a single pod.
	NumPodGroupDisruptions int
	Victims                []Victim
	// Eligible is PodEligibleToPreemptOthers' verdict; when false nothing
	// else ran.
	Eligible bool
	// Candidates is the dry run's candidate list, in the order the dry run
	// returned it.
	Candidates []Candidate
	// NodeStatuses holds the dry-run status of every visited node that is not
	// a candidate, sorted by node name.
	NodeStatuses []NodeStatus
	// Actions are the API calls made through the client, in order.
	Actions []Action
	// ActuationErrors holds, under asynchronous preemption only, the
	// errors of preempting victims in the background, in call order: the
	// decision stands (upstream logs them).
	ActuationErrors []string
	// PreemptorActivated is set, under asynchronous preemption only, when
	// the background work failed (a victim or a cleared nomination):
	// upstream then moves the preemptor back to the active queue.
	PreemptorActivated bool
}

// FilterResult is the outcome of the filter phase.
type FilterResult struct {
	Feasible     []string
	NodeStatuses []NodeStatus
	// PreFilterRejected is set when the PreFilter plugins stopped with
	// UnschedulableAndUnresolvable before DynamicResources' PreFilter ran
	// (a plugin before it in the profile rejected the pod, or their
	// PreFilterResults left no node): every node then has that status,
	// and kube-scheduler's PostFilter chain ends at DynamicResources,
	// which comes before DefaultPreemption and fails reading the state
	// its PreFilter never wrote (PreFilterRejectionDecision).
	PreFilterRejected bool `json:",omitempty"`
}

// PreFilterRejectionDecision is the cycle's answer when the filter phase
// was PreFilterRejected and the profile runs DynamicResources (the
// DynamicResourceAllocation gate, on by default): DynamicResources'
// PostFilter returns its state read's error ("not found"), an Error that
// ends RunPostFilterPlugins, so DefaultPreemption never runs and the
// preemptor's nomination is left as it was (no PostFilterResult).
func PreFilterRejectionDecision(cfg Config) (Decision, bool) {
	if on, set := cfg.FeatureGates[DynamicResourceAllocationGate]; set && !on {
		return Decision{}, false
	}
	return Decision{Status: Error, Message: "not found"}, true
}

// DynamicResourceAllocationGate puts DynamicResources in the default
// profile, before DefaultPreemption (GA, on by default).
const DynamicResourceAllocationGate = "DynamicResourceAllocation"

// NodeOrder maps a cluster's node names to their positions in
// Cluster.Nodes, to turn filter results into Request.Codes without a map
// lookup per node.
type NodeOrder struct {
	names []string // sorted
	index []int    // names[k] is Cluster.Nodes[index[k]]
}

// NewNodeOrder returns the order of c's nodes.
func NewNodeOrder(c *Cluster) *NodeOrder {
	o := &NodeOrder{names: make([]string, len(c.Nodes)), index: make([]int, len(c.Nodes))}
	for i := range c.Nodes {
		o.index[i] = i
	}
	sort.Slice(o.index, func(a, b int) bool { return c.Nodes[o.index[a]].Name < c.Nodes[o.index[b]].Name })
	for k, i := range o.index {
		o.names[k] = c.Nodes[i].Name
	}
	return o
}

// Codes writes f's code of every node into dst (resized to the node count)
// in cluster order: the code of each NodeStatus, Success for a feasible
// node, UnschedulableAndUnresolvable for a node f does not name. f's
// NodeStatuses and Feasible must be sorted by name, as Filter returns them.
func (o *NodeOrder) Codes(f FilterResult, dst []Code) []Code {
	if cap(dst) < len(o.names) {
		dst = make([]Code, len(o.names))
	}
	dst = dst[:len(o.names)]
	s, fe := 0, 0
	for k, name := range o.names {
		code := UnschedulableAndUnresolvable
		for s < len(f.NodeStatuses) && f.NodeStatuses[s].Node < name {
			s++
		}
		for fe < len(f.Feasible) && f.Feasible[fe] < name {
			fe++
		}
		switch {
		case s < len(f.NodeStatuses) && f.NodeStatuses[s].Node == name:
			code = f.NodeStatuses[s].Code
		case fe < len(f.Feasible) && f.Feasible[fe] == name:
			code = Success
		}
		dst[o.index[k]] = code
	}
	return dst
}

// Codes returns the filter codes of the failed nodes, for Request.Filter.
func (f FilterResult) Codes() map[string]Code {
	m := make(map[string]Code, len(f.NodeStatuses))
	for _, s := range f.NodeStatuses {
		m[s.Node] = s.Code
	}
	return m
}

// Evaluator runs the stages of DefaultPreemption on one prepared cluster
// snapshot.
//
// # What an implementation may assume
//
//   - The Cluster it was built from passed Cluster.Validate, and every
//     Request passed Request.Validate with a preemptor that is not in the
//     cluster (Cluster.ValidatePreemptor). Neither the cluster's objects
//     nor a request (its Pod and Filter map included) change while the
//     evaluator is in use: an implementation may keep pointers to them.
//   - Calls on one Evaluator are sequential: one request at a time. An
//     implementation may parallelise inside a call, and different
//     Evaluators (even on one snapshot) may run concurrently.
//   - Stage arguments (potential nodes, candidate lists) may name nodes or
//     pods that are not in the cluster; they are answered, not trusted.
//
// # What it must promise
//
//   - Inputs are read-only: no call modifies the cluster's objects, the
//     Request (Pod, Filter, Config, ...) or a slice passed in (the
//     candidates given to SelectCandidate, the potential nodes).
//   - Answers depend only on the snapshot and the arguments: reusing an
//     evaluator across requests gives the decisions fresh evaluators give,
//     whatever the earlier requests were, and so does any GOMAXPROCS.
//   - Determinism: every tie is broken by the rules of doc.go, except the
//     final tie of SelectCandidate, which an implementation may break at
//     random among equal-best candidates if it says so
//     (agreement.RandomFinalTie, as upstream does).
//
// # Who owns what is returned
//
//   - The Victims slice SelectVictimsOnNode returns may live in a buffer
//     the evaluator reuses: it is valid until the next call on the same
//     Evaluator. Copy it to keep it (optimized does reuse it).
//   - The *Candidate SelectCandidate returns may point into the slice it
//     was given (it is one of its elements, unchanged).
//   - With Request.ReuseOutput, the Candidates (and their Victims) and
//     NodeStatuses of the DryRun or Decision returned for that request may
//     live in buffers the evaluator reuses: valid until its next
//     FindCandidates, DryRunPreemption or Preempt (passing them to
//     SelectCandidate or PrepareCandidate is fine). No other call may
//     change them, and they are lent: the caller reads them, never
//     writes them (an evaluator may keep scores of what it lent).
//   - Everything else returned (FilterResult, DryRun, Decision and the
//     slices inside them) belongs to the caller and is never touched again
//     by the evaluator.
//
// # What may be cached across requests
//
// Anything derived from the snapshot alone (indexes, sorted victims,
// resource vectors). Work derived from a request may be cached only under
// a key that changes whenever the answer could: optimized keys its
// per-preemptor work by the *v1.Pod pointer and Request.Now, which is sound
// because a pod passed in a request is never modified (above); the Filter
// map, Config and Offset are read afresh on every call.
type Evaluator interface {
	// Filter runs the filter phase for pod: the nodes it fits (sorted by
	// name) and the status of every other node (sorted by name). Filters:
	// NodeName, NodeUnschedulable, TaintToleration, NodeAffinity (their
	// failures are UnschedulableAndUnresolvable), NodePorts and
	// NodeResourcesFit, in upstream's default order, with nominated pods of
	// equal or higher priority counted as present.
	Filter(ctx context.Context, pod *v1.Pod) FilterResult
	// PodEligibleToPreemptOthers: preemptionPolicy Never, or a terminating
	// lower-priority pod on the pod's nominated node (unless that node's code
	// is UnschedulableAndUnresolvable) make the pod ineligible.
	PodEligibleToPreemptOthers(req *Request) (bool, string)
	// FindCandidates picks the potential nodes, the candidate count and runs
	// the dry run.
	FindCandidates(ctx context.Context, req *Request) (DryRun, error)
	// DryRunPreemption runs SelectVictimsOnNode over potential (already in
	// node-name order) from offset until the stop rule holds.
	DryRunPreemption(ctx context.Context, req *Request, potential []string, offset, numCandidates int32) DryRun
	// SelectVictimsOnNode returns the victims on node in importance order and
	// how many of them violate a PDB.
	SelectVictimsOnNode(ctx context.Context, req *Request, node string) ([]Victim, int, Status)
	// SelectCandidate is pickOneNodeForPreemption with list order as the
	// final tie-break; nil for no candidates.
	SelectCandidate(candidates []Candidate, req *Request) *Candidate
	// PrepareCandidate deletes the victims, clears lower-priority
	// nominations on the node and nominates the preemptor, through cs.
	PrepareCandidate(ctx context.Context, cs kubernetes.Interface, c *Candidate, req *Request) error
	// Preempt runs the whole PostFilter and actuates through cs. Actions are
	// filled by Run, not by Preempt.
	Preempt(ctx context.Context, cs kubernetes.Interface, req *Request) Decision
}

// Implementation builds Evaluators.
type Implementation interface {
	Name() string
	// NewEvaluator prepares a snapshot of c. c must have passed Validate.
	NewEvaluator(c *Cluster) (Evaluator, error)
}

// Change is what a scheduling cycle did to a cluster: pods that left it
// (deleted victims, pods whose nomination was cleared) and pods that
// joined it (a preemptor bound to its node).
type Change struct {
	Removed []PodRef
	Added   []*v1.Pod
}

// Apply returns the pods of c after ch: c.Pods without the removed pods,
// in their order, then the added ones. It fails when a removed pod is not
// in c or an added one already is.
func (ch Change) Apply(pods []*v1.Pod) ([]*v1.Pod, error) {
	gone := make(map[PodRef]bool, len(ch.Removed))
	for _, r := range ch.Removed {
		gone[r] = true
	}
	out := make([]*v1.Pod, 0, len(pods)-len(ch.Removed)+len(ch.Added))
	seen := make(map[PodRef]bool, len(ch.Added))
	for _, p := range ch.Added {
		seen[PodRef{p.Namespace, p.Name}] = true
	}
	found := 0
	for _, p := range pods {
		ref := PodRef{p.Namespace, p.Name}
		if gone[ref] {
			found++
			continue
		}
		if seen[ref] {
			return nil, fmt.Errorf("pod %s is already in the cluster", ref)
		}
		out = append(out, p)
	}
	if found != len(gone) {
		return nil, fmt.Errorf("%d of the %d removed pods are not in the cluster", len(gone)-found, len(gone))
	}
	return append(out, ch.Added...), nil
}

// Updater is an Evaluator that follows a changing cluster, as
// kube-scheduler's cache follows the API server between scheduling
// cycles, instead of being built again.
//
// Update moves the evaluator to cluster c: its last cluster (the one it
// was built from or last updated to) with ch applied (c.Pods is
// ch.Apply of the last cluster's pods; nodes, PDBs and the other objects
// are the same). c passed Validate. From then on every answer is the one
// a new evaluator of c would give, and the last cluster is not read
// again. On error the evaluator must not be used.
type Updater interface {
	Update(c *Cluster, ch Change) error
}

// Follow moves ev, an evaluator of impl, to c after ch: ev.Update when ev
// is an Updater, a new evaluator of c otherwise.
func Follow(impl Implementation, ev Evaluator, c *Cluster, ch Change) (Evaluator, error) {
	if u, ok := ev.(Updater); ok {
		if err := u.Update(c, ch); err != nil {
			return nil, err
		}
		return ev, nil
	}
	return impl.NewEvaluator(c)
}

// CodeFilter is an Evaluator that can run the filter phase for the codes
// alone: what a scheduling cycle needs to go on to preemption, without a
// NodeStatus and its reasons for every node.
type CodeFilter interface {
	// FilterCodes writes into dst, resized to the node count, the code
	// Filter gives each node of the cluster, in Cluster.Nodes order:
	// Success for a feasible node (NodeOrder.Codes of Filter's result).
	FilterCodes(ctx context.Context, pod *v1.Pod, dst []Code) []Code
}

// FilterCodesOf is ev's FilterCodes when it has one, NodeOrder.Codes of
// its Filter otherwise.
func FilterCodesOf(ctx context.Context, ev Evaluator, order *NodeOrder, pod *v1.Pod, dst []Code) []Code {
	if cf, ok := ev.(CodeFilter); ok {
		return cf.FilterCodes(ctx, pod, dst)
	}
	return order.Codes(ev.Filter(ctx, pod), dst)
}

// DeepCopy returns a copy of c that shares nothing with it: every object
// of every list is copied.
func (c *Cluster) DeepCopy() *Cluster {
	if c == nil {
		return nil
	}
	return &Cluster{
		Nodes:             deepCopyAll(c.Nodes, (*v1.Node).DeepCopy),
		Pods:              deepCopyAll(c.Pods, (*v1.Pod).DeepCopy),
		PDBs:              deepCopyAll(c.PDBs, (*policyv1.PodDisruptionBudget).DeepCopy),
		Namespaces:        deepCopyAll(c.Namespaces, (*v1.Namespace).DeepCopy),
		PVCs:              deepCopyAll(c.PVCs, (*v1.PersistentVolumeClaim).DeepCopy),
		PVs:               deepCopyAll(c.PVs, (*v1.PersistentVolume).DeepCopy),
		StorageClasses:    deepCopyAll(c.StorageClasses, (*storagev1.StorageClass).DeepCopy),
		CSINodes:          deepCopyAll(c.CSINodes, (*storagev1.CSINode).DeepCopy),
		CSIDrivers:        deepCopyAll(c.CSIDrivers, (*storagev1.CSIDriver).DeepCopy),
		VolumeAttachments: deepCopyAll(c.VolumeAttachments, (*storagev1.VolumeAttachment).DeepCopy),

		CSIStorageCapacities: deepCopyAll(c.CSIStorageCapacities, (*storagev1.CSIStorageCapacity).DeepCopy),

		ResourceClaims:         deepCopyAll(c.ResourceClaims, (*resourcev1.ResourceClaim).DeepCopy),
		ResourceClaimTemplates: deepCopyAll(c.ResourceClaimTemplates, (*resourcev1.ResourceClaimTemplate).DeepCopy),
		ResourceSlices:         deepCopyAll(c.ResourceSlices, (*resourcev1.ResourceSlice).DeepCopy),
		DeviceClasses:          deepCopyAll(c.DeviceClasses, (*resourcev1.DeviceClass).DeepCopy),
		DeviceTaintRules:       deepCopyAll(c.DeviceTaintRules, (*DeviceTaintRule).DeepCopy),

		PodGroups:          deepCopyAll(c.PodGroups, (*PodGroup).DeepCopy),
		CompositePodGroups: deepCopyAll(c.CompositePodGroups, (*CompositePodGroup).DeepCopy),
	}
}

func deepCopyAll[T any](in []*T, copyOf func(*T) *T) []*T {
	if in == nil {
		return nil
	}
	out := make([]*T, len(in))
	for i, x := range in {
		out[i] = copyOf(x)
	}
	return out
}

// DeepCopy returns a copy of r that shares nothing with it: the pod, the
// filter outcome, the configuration's extenders and the running
// preemption are copied.
func (r *Request) DeepCopy() *Request {
	if r == nil {
		return nil
	}
	out := *r
	out.Pod = r.Pod.DeepCopy()
	if r.Filter != nil {
		out.Filter = make(map[string]Code, len(r.Filter))
		for k, v := range r.Filter {
			out.Filter[k] = v
		}
	}
	if r.Codes != nil {
		out.Codes = append([]Code(nil), r.Codes...)
	}
	if r.Config.Extenders != nil {
		out.Config.Extenders = make([]configv1.Extender, len(r.Config.Extenders))
		for i := range r.Config.Extenders {
			r.Config.Extenders[i].DeepCopyInto(&out.Config.Extenders[i])
		}
	}
	if p := r.Preempting; p != nil {
		cp := *p
		if p.LastVictim != nil {
			lv := *p.LastVictim
			cp.LastVictim = &lv
		}
		out.Preempting = &cp
	}
	return &out
}

// ClockSetter is an Evaluator whose filter phase reads the clock:
// DynamicResources' Filter finds a claim allocated with binding
// conditions, none of them met yet, unavailable once its
// status.allocation.allocationTimestamp plus the binding timeout (600s,
// DynamicResourcesArgs' default) is before the clock (isClaimTimeout).
// Its Filter (and FilterCodes) read the time last given to SetNow (none:
// the zero time, before every allocation); a request's stages read
// Request.Now. Upstream reads time.Now() there; here the clock is an input
// (decide's -now, else the time the input was loaded), so one request
// gets one answer.
type ClockSetter interface {
	SetNow(now time.Time)
}

// SetFilterNow gives now to ev when it is a ClockSetter: the clock its
// filter phase reads.
func SetFilterNow(ev Evaluator, now time.Time) {
	if s, ok := ev.(ClockSetter); ok {
		s.SetNow(now)
	}
}
