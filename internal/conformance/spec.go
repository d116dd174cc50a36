package conformance

import (
	"fmt"
	"math"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
)

// A Spec is a preemption problem as small indices into the tables below.
// The rapid generator draws Specs, the fuzz decoder reads them from bytes,
// and Build turns one into an Input: one domain, two drivers.
type Spec struct {
	Nodes     []NodeSpec
	Nominated []PodSpec // Node: index of the node it is nominated to
	PDBs      []PDBSpec
	Preemptor PodSpec
	// PreemptNever sets preemptionPolicy Never; PreemptorNominated is 1 +
	// the index of the node the preemptor is nominated to, 0 for none.
	PreemptNever       bool
	PreemptorNominated int
	// SameStart starts every pod at Base with priority 0 or 1 under a
	// preemptor at 10, so that pickOneNodeForPreemption's criteria tie.
	SameStart  bool
	Offset     int
	Percentage int // index into percentages
	Absolute   int // index into absolutes
	// Topology turns on the pods' affinity and spread indices; without it
	// no pod has either, so that implementations and mutants that refuse
	// those filters still see most problems.
	Topology bool
	// Synchronous selects the synchronous actuation (the default is
	// asynchronous preemption, on by default since v1.33).
	Synchronous bool
	// Extenders are the scheduler's extenders, in configuration order.
	Extenders []ExtenderSpec
	// Fault makes one API call fail (harness.Fault): 0 for none; k in
	// 1..2P names the ((k-1)/2)-th pod of the cluster, its delete for odd
	// k, its status patch for even k; 2P+1 the preemptor's status patch.
	Fault int
	// Preempting is the executor's record of a running preemption of the
	// preemptor (Request.Preempting): 0 for none, 1 still at the first
	// victims, 2 at a last victim no longer in the cluster, k >= 3 at the
	// (k-3)-th pod of the cluster.
	Preempting int
	// Codes passes the filter outcome as Request.Codes (a code per node in
	// the cluster's order) instead of the Filter map.
	Codes bool
	// ReuseOutput sets Request.ReuseOutput: an implementation may lend
	// its lists (and keep scores of them).
	ReuseOutput bool
	// Namespaces indexes namespaceSets: the Namespace objects the cluster
	// holds (pods are in "default" or "other", with or without one), for
	// InterPodAffinity's namespace selectors.
	Namespaces int
	// PDBsReversed lists the PDBs in the cluster in reverse name order:
	// the contract takes them in (namespace, name) order whatever the
	// cluster's (v1.37 stops a victim's count at the first it violates).
	PDBsReversed bool
	// Resized, when k > 0, resizes every k-th bound pod (the first, the
	// (k+1)-th, ...) in place as resizes[ResizeShape] says.
	Resized, ResizeShape int
	// GenericWorkload turns the gate on: pods naming a PodGroup
	// (PodSpec.Group) are preempted as v1.37.2 groups them. Composite also
	// turns on CompositePodGroup (and TopologyAwareWorkloadScheduling,
	// which it needs).
	GenericWorkload, Composite bool
	// Groups are the PodGroups "g0", "g1", ... of namespace "default" (a
	// pod of namespace "other" naming one finds none); Composites the
	// CompositePodGroups "c0", "c1", ... they may sit under.
	Groups     []GroupSpec
	Composites []GroupSpec
	// Gang, when set, is a gang preemptor: PodGroup "gang" and its
	// unscheduled members (Input.Gang).
	Gang *GangSpec
	// Volumes, when set, gives the cluster storage and the pods volumes
	// (VolumeSpec).
	Volumes *VolumeSpec
	// Claims, when set, gives the cluster devices and the pods resource
	// claims (ClaimSpec).
	Claims *ClaimSpec
	// Switches turns behaviour switches off (Config.Switches): bit i set
	// turns preempt.Switches[i] off in the single-pod request, so the
	// properties hold every implementation that models releases to each
	// change alone. An adapter fixed at one release drops them (AtRelease).
	Switches int
}

// GroupSpec is a PodGroup or CompositePodGroup.
type GroupSpec struct {
	All      bool
	Priority int // index into priorities
	// Parent is 0 for none, k for composite c(k-1) (wrapping; a composite
	// under itself has none).
	Parent int
}

// GangSpec is a gang preemptor.
type GangSpec struct {
	Priority int // index into priorities
	// MinCount is 0 for a basic group, k for a gang of minCount k.
	MinCount int
	Members  []PodSpec // Node: 0 not nominated, k nominated to node k-1
	// Never sets preemptionPolicy Never on every member; GroupPolicy
	// turns on PodGroupPreemptionPolicy and sets the group's policy
	// (0 unset, 1 PreemptLowerPriority, 2 Never).
	Never       bool
	GroupPolicy int
	// Scheduled members of the gang already bound: pods of the cluster
	// named "gang-sN" on the nodes listed.
	Scheduled []int
	// Children > 0 makes the preemptor the CompositePodGroup "gang" (with
	// CompositePodGroup and TopologyAwareWorkloadScheduling on) of that
	// many child PodGroups "gang-c0", "gang-c1", ...: MinGroupCount is its
	// minGroupCount (0 for a basic policy), ChildMinCounts[k] child k's
	// minCount (0 basic); member i belongs to child Members[i].Group
	// (modulo Children), the scheduled members to gang-c0.
	Children, MinGroupCount int
	ChildMinCounts          []int
	// ChildCreated[k] is child k's creation, minutes before Base (the
	// composite's children are scheduled by creation time, then name).
	ChildCreated []int
	// Unplaceable > 0 makes member Unplaceable-1 ask for more CPU than any
	// node has: it fits nowhere, so its group fails after placing the
	// members before it when its minCount needs it (a composite then
	// keeps their proposals when it succeeds without that child).
	Unplaceable int
	// TAS turns TopologyAwareWorkloadScheduling on for a PodGroup gang.
	TAS bool
	// Every member and scheduled member has the gang's priority, the
	// default scheduler and one preemption policy (Never on each when
	// Never, the group's under GroupPolicy), as kube-scheduler's
	// validatePodGroup wants, unless Refuse breaks it for the last
	// member: 1 its priority, 2 its scheduler name (the first scheduled
	// member's when there is one: a member of another scheduler is in no
	// cycle), 3 its preemption policy; 4 breaks the first scheduled
	// member's priority.
	Refuse int
	// Deleting has bit i set when member i is being deleted
	// (deletionTimestamp set): the cycle skips it.
	Deleting int
}

// conform gives p, a member or a scheduled member of the gang, what
// validatePodGroup asks of it: the gang's priority (one more when
// otherPriority), the default scheduler, and the gang's preemption
// policy (Never when Never or the group's policy is Never).
func (g *GangSpec) conform(p *v1.Pod, otherPriority bool) {
	prio := groupPriority(g.Priority)
	if otherPriority {
		prio++
	}
	p.Spec.Priority = ptr.To(prio)
	p.Spec.PriorityClassName = ""
	p.Spec.SchedulerName = ""
	p.Spec.PreemptionPolicy = nil
	if g.GroupPolicy == 2 || (g.GroupPolicy == 0 && g.Never) {
		p.Spec.PreemptionPolicy = ptr.To(v1.PreemptNever)
	}
}

// groupOf is the name of the PodGroup member i of the gang belongs to
// (-1: the scheduled members).
func (g *GangSpec) groupOf(i int) string {
	if g.Children == 0 {
		return "gang"
	}
	if i < 0 {
		return "gang-c0"
	}
	return fmt.Sprintf("gang-c%d", at(g.Members[i].Group, g.Children))
}

// MaxExtenders bounds Spec.Extenders.
const MaxExtenders = 2

// NodeSpec is a node and the pods bound to it.
type NodeSpec struct {
	CPU, Memory, Pods, Ephemeral, Foo, Zone int // indices into the node tables
	Unresolvable                            bool
	Bound                                   []PodSpec
}

// PodSpec is a pod; each field indexes its table.
type PodSpec struct {
	Node                                    int
	Priority, CPU, Memory, Ephemeral, Foo   int
	Port, App, Start, Namespace, Terminated int
	Affinity, Spread                        int // indices into affinities, spreads
	// Group is 0 for a pod in no pod group, k for group g(k-1) (wrapping).
	Group int
}

// PDBSpec is a PodDisruptionBudget.
type PDBSpec struct {
	Namespace, Selector, App, Allowed, Disrupted int
}

// Limits of the domain.
const (
	MaxNodes      = 64
	MaxPodsOnNode = 12
	MaxNominated  = 5
	MaxPDBs       = 4
)

// Base is the time every start time is relative to, the tests' epoch
// (testobj.Epoch); requests use Now = Base + 1h.
func Base() time.Time { return testobj.Epoch }

// ExtendedResource is the extended resource of generated clusters.
const ExtendedResource = v1.ResourceName("example.com/foo")

// The tables. Edge values first.
var (
	priorities     = []int32{0, math.MinInt32, math.MaxInt32, math.MinInt32 + 1, math.MaxInt32 - 1, -100, -1, 0, 1, 5, 5, 10, 100}
	samePriorities = []int32{0, 0, 1}
	nodeCPUs       = []int64{1000, 2000, 4000, 8000}
	nodeMemGi      = []int64{1, 4, 16}
	nodePods       = []int64{4, 8, 110}
	nodeEphGi      = []int64{0, 10, 100}
	nodeFoo        = []int64{0, 0, 1, 2, 4}
	podCPUs        = []int64{0, 100, 250, 500, 1000, 1500, 3000}
	podMemMi       = []int64{0, 256, 1024, 4096}
	podEphGi       = []int64{0, 0, 1, 20}
	podFoo         = []int64{0, 0, 0, 1, 2}
	portTable      = []v1.ContainerPort{{}, {}, {}, // mostly none
		{ContainerPort: 80, HostPort: 80}, {ContainerPort: 80, HostPort: 8080},
		{ContainerPort: 80, HostPort: 80, HostIP: "10.0.0.1"}, {ContainerPort: 80, HostPort: 80, HostIP: "10.0.0.2", Protocol: v1.ProtocolUDP},
		{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP}}
	apps        = []string{"", "a", "b", "c"}
	startMinute = []int{-1, 0, 0, 1, 2, 5, 10} // -1: no status.startTime
	namespaces  = []string{"default", "default", "default", "other"}
	terminated  = []int{0, 0, 0, 0, 0, 0, 0, 0, 1, 2} // 1: deleting, 2: deleting after preemption
	pdbNS       = []string{"default", "default", "other"}
	pdbApps     = []string{"a", "b", "c", "zzz"}
	selectors   = []string{"labels", "labels", "nil", "empty", "invalid", "in"}
	percentages = []int32{0, 1, 5, 10, 34, 50, 100}
	absolutes   = []int32{0, 1, 2, 3, 5, 100}
	zones       = []string{"z1", "z2", "", "z1", "z3"} // "": no zone label
	// namespaceSets are the Namespace objects of a cluster: none, a
	// labelled "default" only, both labelled, an unlabelled "other" only.
	namespaceSets = [][]*v1.Namespace{
		nil,
		{namespace("default", "team", "red")},
		{namespace("default", "team", "red"), namespace("other", "team", "blue")},
		{namespace("other")},
	}
	// resizes are the in-place resizes of a bound pod (its container "c",
	// or an init container it gains), as the kubelet reports them.
	resizes = []func(p *v1.Pod){
		nil,
		func(p *v1.Pod) { p.Status.ContainerStatuses = []v1.ContainerStatus{resizedStatus("c", "1500m", "")} },
		func(p *v1.Pod) { p.Status.ContainerStatuses = []v1.ContainerStatus{resizedStatus("c", "100m", "")} },
		func(p *v1.Pod) {
			p.Status.ContainerStatuses = []v1.ContainerStatus{resizedStatus("c", "250m", "2000m")}
		},
		func(p *v1.Pod) {
			p.Status.AllocatedResources = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m")}
			p.Status.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("750m")}}
		},
		func(p *v1.Pod) {
			p.Status.ContainerStatuses = []v1.ContainerStatus{resizedStatus("c", "250m", "500m")}
			p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonInfeasible})
		},
		func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "init", Image: "pause", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}}}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{resizedStatus("init", "3000m", "")}
		},
		// Pod-level requests resized in place (v1.35 counts the spec's:
		// preempt.SwitchPodLevelResizeRequests).
		func(p *v1.Pod) {
			p.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}}
			p.Status.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m")}}
		},
	}
)

func namespace(name string, labels ...string) *v1.Namespace {
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-ns-" + name)}}
	for i := 0; i+1 < len(labels); i += 2 {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[labels[i]] = labels[i+1]
	}
	return ns
}

// resizedStatus is a container status with the cpu request the runtime
// actuated and, unless "", the cpu the kubelet allocated.
func resizedStatus(name, actuated, allocated string) v1.ContainerStatus {
	cs := v1.ContainerStatus{Name: name, Resources: &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(actuated)}}}
	if allocated != "" {
		cs.AllocatedResources = v1.ResourceList{v1.ResourceCPU: resource.MustParse(allocated)}
	}
	return cs
}

// teamTerm is an anti-affinity term on hosts against app a in the
// namespaces whose "team" label satisfies op.
func teamTerm(op metav1.LabelSelectorOperator, values ...string) *v1.Affinity {
	t := term(HostnameKey, "a")
	t.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: op, Values: values}}}
	return anti(t)
}

// Topology keys of generated nodes: every node has its hostname, most a
// zone; no node has a rack.
const (
	HostnameKey = "kubernetes.io/hostname"
	ZoneKey     = "topology.kubernetes.io/zone"
	RackKey     = "example.com/rack"
)

// affinities are the pods' required inter-pod (anti-)affinity, none first
// and most often: edge cases of InterPodAffinity's filter (a topology key
// no node has, other namespaces, a namespace selector, an empty selector,
// several terms).
var affinities = []func() *v1.Affinity{
	nil, nil, nil, nil, nil, nil,
	func() *v1.Affinity { return anti(term(HostnameKey, "a")) },
	func() *v1.Affinity { return anti(term(ZoneKey, "b")) },
	func() *v1.Affinity { return podAffinity(term(ZoneKey, "a")) },
	func() *v1.Affinity { return podAffinity(term(HostnameKey, "c")) },
	func() *v1.Affinity { return podAffinity(term(RackKey, "a")) },
	func() *v1.Affinity {
		t := term(HostnameKey, "b")
		t.Namespaces = []string{"other"}
		return anti(t)
	},
	func() *v1.Affinity {
		t := term(ZoneKey, "a")
		t.NamespaceSelector = &metav1.LabelSelector{}
		return anti(t)
	},
	func() *v1.Affinity {
		t := term(HostnameKey, "")
		t.LabelSelector = &metav1.LabelSelector{}
		return anti(t)
	},
	func() *v1.Affinity {
		a := podAffinity(term(ZoneKey, "a"), term(HostnameKey, "a"))
		a.PodAntiAffinity = anti(term(HostnameKey, "b")).PodAntiAffinity
		return a
	},
	// Namespace selectors under every operator, for namespaces with and
	// without a Namespace object (namespaceSets).
	func() *v1.Affinity { return teamTerm(metav1.LabelSelectorOpIn, "red") },
	func() *v1.Affinity { return teamTerm(metav1.LabelSelectorOpNotIn, "blue") },
	func() *v1.Affinity { return teamTerm(metav1.LabelSelectorOpExists) },
	func() *v1.Affinity { return teamTerm(metav1.LabelSelectorOpDoesNotExist) },
}

// spreads are the pods' topology spread constraints, none first and most
// often: DoNotSchedule on zones and hosts, minDomains, a key no node has,
// matchLabelKeys, the node inclusion policies, and ScheduleAnyway, which
// never filters.
var spreads = []func() []v1.TopologySpreadConstraint{
	nil, nil, nil, nil, nil, nil,
	func() []v1.TopologySpreadConstraint { return []v1.TopologySpreadConstraint{spread(ZoneKey, 1, "a")} },
	func() []v1.TopologySpreadConstraint {
		return []v1.TopologySpreadConstraint{spread(HostnameKey, 1, "b")}
	},
	func() []v1.TopologySpreadConstraint {
		c := spread(ZoneKey, 1, "a")
		c.MinDomains = ptr.To[int32](4)
		return []v1.TopologySpreadConstraint{c}
	},
	func() []v1.TopologySpreadConstraint { return []v1.TopologySpreadConstraint{spread(RackKey, 1, "a")} },
	func() []v1.TopologySpreadConstraint {
		c := spread(ZoneKey, 2, "")
		c.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpExists}}}
		c.MatchLabelKeys = []string{"app"}
		return []v1.TopologySpreadConstraint{c}
	},
	func() []v1.TopologySpreadConstraint {
		c := spread(ZoneKey, 1, "c")
		c.NodeAffinityPolicy = ptr.To(v1.NodeInclusionPolicyIgnore)
		c.NodeTaintsPolicy = ptr.To(v1.NodeInclusionPolicyHonor)
		return []v1.TopologySpreadConstraint{c}
	},
	func() []v1.TopologySpreadConstraint {
		c := spread(ZoneKey, 1, "a")
		c.WhenUnsatisfiable = v1.ScheduleAnyway
		return []v1.TopologySpreadConstraint{c}
	},
	func() []v1.TopologySpreadConstraint {
		return []v1.TopologySpreadConstraint{spread(ZoneKey, 1, "b"), spread(HostnameKey, 2, "b")}
	},
}

func spread(key string, maxSkew int32, app string) v1.TopologySpreadConstraint {
	return v1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}
}

func term(key, app string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}
}

func anti(terms ...v1.PodAffinityTerm) *v1.Affinity {
	return &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}}
}

func podAffinity(terms ...v1.PodAffinityTerm) *v1.Affinity {
	return &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}}
}

// Build makes the Input of s. Indices out of range wrap around, so every
// Spec builds.
func (s Spec) Build() Input {
	c := &preempt.Cluster{}
	n := len(s.Nodes)
	podCount, bound := 0, 0
	newPod := func(ps PodSpec) *v1.Pod {
		podCount++
		p := s.pod(ps, fmt.Sprintf("p%d", podCount))
		return p
	}
	filter := map[string]preempt.Code{}
	for i, ns := range s.Nodes {
		node := buildNode(ns, fmt.Sprintf("node-%02d", i))
		c.Nodes = append(c.Nodes, node)
		filter[node.Name] = preempt.Unschedulable
		if ns.Unresolvable {
			filter[node.Name] = preempt.UnschedulableAndUnresolvable
		}
		for _, ps := range ns.Bound {
			p := newPod(ps)
			p.Spec.NodeName = node.Name
			p.Status.Phase = v1.PodRunning
			if resize := pick(resizes, s.ResizeShape); s.Resized > 0 && resize != nil && bound%s.Resized == 0 {
				resize(p)
			}
			bound++
			c.Pods = append(c.Pods, p)
		}
	}
	for _, ps := range s.Nominated {
		p := newPod(ps)
		p.DeletionTimestamp = nil
		p.Status.Conditions = nil
		p.Status.Phase = v1.PodPending
		p.Status.NominatedNodeName = c.Nodes[at(ps.Node, n)].Name
		c.Pods = append(c.Pods, p)
	}
	for i, ps := range s.PDBs {
		c.PDBs = append(c.PDBs, buildPDB(ps, fmt.Sprintf("pdb-%d", i), podCount))
	}
	if s.PDBsReversed {
		slices.Reverse(c.PDBs)
	}
	for _, ns := range pick(namespaceSets, s.Namespaces) {
		c.Namespaces = append(c.Namespaces, ns.DeepCopy())
	}

	s.buildGroups(c)
	if s.Gang != nil {
		for i, node := range s.Gang.Scheduled {
			ps := s.Gang.Members[at(i, len(s.Gang.Members))]
			p := s.pod(ps, fmt.Sprintf("gang-s%d", i))
			p.Namespace, p.UID = "default", types.UID(fmt.Sprintf("uid-gang-s%d", i))
			s.Gang.conform(p, i == 0 && s.Gang.Refuse == 4)
			if i == 0 && s.Gang.Refuse == 2 {
				p.Spec.SchedulerName = "other-scheduler"
			}
			p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To(s.Gang.groupOf(-1))}
			p.Spec.NodeName = c.Nodes[at(node, n)].Name
			c.Pods = append(c.Pods, p)
		}
	}

	preemptorSpec := s.Preemptor
	preemptorSpec.Group = 0
	pod := s.pod(preemptorSpec, "preemptor")
	pod.Namespace, pod.UID = "default", "uid-preemptor"
	pod.DeletionTimestamp = nil
	pod.Status = v1.PodStatus{Phase: v1.PodPending}
	if s.SameStart {
		prio := int32(10)
		pod.Spec.Priority = &prio
	}
	if s.PreemptNever {
		never := v1.PreemptNever
		pod.Spec.PreemptionPolicy = &never
	}
	if k := at(s.PreemptorNominated, n+1); k > 0 {
		pod.Status.NominatedNodeName = c.Nodes[k-1].Name
	}
	if s.Volumes != nil {
		s.Volumes.build(c, c.Pods[:podCount], pod)
		if s.Volumes.rejectedAtPreFilter() {
			// kube-scheduler gives every node the PreFilter's rejection
			// (NodeToStatus.SetAbsentNodesStatus), and the dry run then
			// tries none: a drawn Unschedulable would have it run
			// plugins whose PreFilter never ran.
			for name := range filter {
				filter[name] = preempt.UnschedulableAndUnresolvable
			}
		}
	}
	if s.Claims != nil {
		s.Claims.build(c, c.Pods[:podCount], pod)
		if s.Claims.rejectedAtPreFilter() {
			for name := range filter {
				filter[name] = preempt.UnschedulableAndUnresolvable
			}
		}
	}
	cfg := preempt.Config{
		MinCandidateNodesPercentage: percentages[at(s.Percentage, len(percentages))],
		MinCandidateNodesAbsolute:   absolutes[at(s.Absolute, len(absolutes))],
	}
	if cfg.MinCandidateNodesPercentage == 0 && cfg.MinCandidateNodesAbsolute == 0 {
		cfg.MinCandidateNodesAbsolute = 1 // both zero is invalid
	}
	cfg.Synchronous = s.Synchronous
	gangCfg := cfg // a gang's request runs at the release, switches untouched
	if off := s.Switches & (1<<len(preempt.Switches) - 1); off != 0 {
		cfg.Switches = map[preempt.Switch]bool{}
		for i, si := range preempt.Switches {
			if off&(1<<i) != 0 {
				cfg.Switches[si.Switch] = false
			}
		}
	}
	managed := false
	for _, e := range s.Extenders {
		e.Managed = e.Managed && !managed // upstream refuses a resource managed twice
		managed = managed || e.Managed
		cfg.Extenders = append(cfg.Extenders, ExtenderConfig(e))
	}
	req := &preempt.Request{Pod: pod, Filter: filter, Config: cfg, Offset: int32(at(s.Offset, 2*n+1)), Now: Base().Add(time.Hour), ReuseOutput: s.ReuseOutput}
	if s.Codes {
		req.Codes = make([]preempt.Code, len(c.Nodes))
		for i, node := range c.Nodes {
			req.Codes[i] = req.FilterCode(node.Name)
		}
		req.Filter = nil
	}
	switch k := at(s.Preempting, len(c.Pods)+3); {
	case k == 1:
		req.Preempting = &preempt.Preempting{}
	case k == 2:
		req.Preempting = &preempt.Preempting{LastVictim: &preempt.PodRef{Namespace: "default", Name: "gone"}}
	case k >= 3:
		p := c.Pods[k-3]
		req.Preempting = &preempt.Preempting{LastVictim: &preempt.PodRef{Namespace: p.Namespace, Name: p.Name}}
	}
	if s.GenericWorkload {
		cfg.FeatureGates = map[string]bool{preempt.GenericWorkloadGate: true}
		if s.Composite {
			cfg.FeatureGates["CompositePodGroup"] = true
			cfg.FeatureGates["TopologyAwareWorkloadScheduling"] = true
		}
		req.Config = cfg
	}
	in := Input{Cluster: c, Request: req, Switched: len(cfg.Switches) > 0}
	if s.Gang != nil {
		gangCfg.Extenders, gangCfg.FeatureGates = cfg.Extenders, cfg.FeatureGates
		in.Gang = s.buildGang(c, gangCfg)
		if s.Volumes != nil {
			s.Volumes.buildMembers(in.Gang.Pods)
		}
		if s.Claims != nil {
			s.Claims.buildMembers(c, in.Gang.Pods)
		}
	}
	if k := at(s.Fault, 2*len(c.Pods)+2); k > 0 {
		f := harness.Fault{Verb: "patch", Subresource: "status", Namespace: pod.Namespace, Name: pod.Name}
		if k <= 2*len(c.Pods) {
			p := c.Pods[(k-1)/2]
			f.Namespace, f.Name = p.Namespace, p.Name
			if k%2 == 1 {
				f.Verb, f.Subresource = "delete", ""
			}
		}
		in.Faults = []harness.Fault{f}
	}
	return in
}

// at wraps i into [0, n).
func at(i, n int) int {
	if n <= 0 {
		return 0
	}
	i %= n
	if i < 0 {
		i += n
	}
	return i
}

func pick[T any](table []T, i int) T { return table[at(i, len(table))] }

func buildNode(ns NodeSpec, name string) *v1.Node {
	alloc := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(pick(nodeCPUs, ns.CPU), resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(pick(nodeMemGi, ns.Memory)<<30, resource.BinarySI),
		v1.ResourcePods:   *resource.NewQuantity(pick(nodePods, ns.Pods), resource.DecimalSI),
	}
	if eph := pick(nodeEphGi, ns.Ephemeral); eph > 0 {
		alloc[v1.ResourceEphemeralStorage] = *resource.NewQuantity(eph<<30, resource.BinarySI)
	}
	if foo := pick(nodeFoo, ns.Foo); foo > 0 {
		alloc[ExtendedResource] = *resource.NewQuantity(foo, resource.DecimalSI)
	}
	nodeLabels := map[string]string{HostnameKey: name}
	if z := pick(zones, ns.Zone); z != "" {
		nodeLabels[ZoneKey] = z
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: nodeLabels},
		Status:     v1.NodeStatus{Allocatable: alloc, Capacity: alloc},
	}
}

func (s Spec) pod(ps PodSpec, name string) *v1.Pod {
	ns := pick(namespaces, ps.Namespace)
	prio := pick(priorities, ps.Priority)
	if s.SameStart {
		prio = pick(samePriorities, ps.Priority)
	}
	req := v1.ResourceList{}
	if cpu := pick(podCPUs, ps.CPU); cpu > 0 {
		req[v1.ResourceCPU] = *resource.NewMilliQuantity(cpu, resource.DecimalSI)
	}
	if mem := pick(podMemMi, ps.Memory); mem > 0 {
		req[v1.ResourceMemory] = *resource.NewQuantity(mem<<20, resource.BinarySI)
	}
	if eph := pick(podEphGi, ps.Ephemeral); eph > 0 {
		req[v1.ResourceEphemeralStorage] = *resource.NewQuantity(eph<<30, resource.BinarySI)
	}
	if foo := pick(podFoo, ps.Foo); foo > 0 {
		req[ExtendedResource] = *resource.NewQuantity(foo, resource.DecimalSI)
	}
	ctr := v1.Container{Name: "c", Image: "pause", Resources: v1.ResourceRequirements{Requests: req}}
	if port := pick(portTable, ps.Port); port.HostPort > 0 {
		ctr.Ports = []v1.ContainerPort{port}
	}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + ns + "-" + name)},
		Spec:       v1.PodSpec{Priority: &prio, SchedulerName: v1.DefaultSchedulerName, Containers: []v1.Container{ctr}},
	}
	if app := pick(apps, ps.App); app != "" {
		p.Labels = map[string]string{"app": app}
	}
	if a := pick(affinities, ps.Affinity); a != nil && s.Topology {
		p.Spec.Affinity = a()
	}
	if sp := pick(spreads, ps.Spread); sp != nil && s.Topology {
		p.Spec.TopologySpreadConstraints = sp()
	}
	if m := pick(startMinute, ps.Start); m >= 0 {
		st := metav1.NewTime(Base().Add(time.Duration(m) * time.Minute))
		if s.SameStart {
			st = metav1.NewTime(Base())
		}
		p.Status.StartTime = &st
	}
	if ps.Group > 0 && len(s.Groups) > 0 {
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To(fmt.Sprintf("g%d", at(ps.Group-1, len(s.Groups))))}
	}
	if t := pick(terminated, ps.Terminated); t > 0 {
		dt := metav1.NewTime(Base().Add(50 * time.Minute))
		p.DeletionTimestamp = &dt
		if t == 2 {
			p.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler}}
		}
	}
	return p
}

func buildPDB(ps PDBSpec, name string, podCount int) *policyv1.PodDisruptionBudget {
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: pick(pdbNS, ps.Namespace), UID: types.UID("uid-" + name)},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: int32(at(ps.Allowed, 3))},
	}
	switch pick(selectors, ps.Selector) {
	case "nil":
	case "empty":
		pdb.Spec.Selector = &metav1.LabelSelector{}
	case "invalid":
		pdb.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus", Values: []string{"a"}}}}
	case "in":
		pdb.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}}
	default:
		pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": pick(pdbApps, ps.App)}}
	}
	// Disrupted: 0 none, k lists pod p<k>.
	if k := at(ps.Disrupted, podCount+1); k > 0 {
		pdb.Status.DisruptedPods = map[string]metav1.Time{fmt.Sprintf("p%d", k): metav1.NewTime(Base())}
	}
	return pdb
}

// buildGroups adds s's PodGroups and CompositePodGroups to c.
func (s Spec) buildGroups(c *preempt.Cluster) {
	parent := func(k, self int) *string {
		if k == 0 || len(s.Composites) == 0 {
			return nil
		}
		i := at(k-1, len(s.Composites))
		if i == self {
			return nil
		}
		return ptr.To(fmt.Sprintf("c%d", i))
	}
	for i, gs := range s.Groups {
		pg := &preempt.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("g%d", i), UID: types.UID(fmt.Sprintf("uid-g%d", i))},
			Spec: schedulingv1beta1.PodGroupSpec{Priority: ptr.To(groupPriority(gs.Priority)), ParentCompositePodGroupName: parent(gs.Parent, -1),
				SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}}}}
		pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}
		if gs.All {
			pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
		}
		c.PodGroups = append(c.PodGroups, pg)
	}
	for i, cs := range s.Composites {
		cpg := &preempt.CompositePodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("c%d", i), UID: types.UID(fmt.Sprintf("uid-c%d", i))},
			Spec: schedulingv1alpha3.CompositePodGroupSpec{Priority: ptr.To(groupPriority(cs.Priority)),
				SchedulingPolicy: schedulingv1alpha3.CompositePodGroupSchedulingPolicy{Basic: &schedulingv1alpha3.CompositeBasicSchedulingPolicy{}}}}
		// Only a composite of a lower index may be a parent: no cycles.
		if cs.Parent > 0 && at(cs.Parent-1, len(s.Composites)) < i {
			cpg.Spec.ParentCompositePodGroupName = parent(cs.Parent, i)
		}
		cpg.Spec.DisruptionMode = &schedulingv1alpha3.CompositeDisruptionMode{Single: &schedulingv1alpha3.SingleCompositeDisruptionMode{}}
		if cs.All {
			cpg.Spec.DisruptionMode = &schedulingv1alpha3.CompositeDisruptionMode{All: &schedulingv1alpha3.AllCompositeDisruptionMode{}}
		}
		c.CompositePodGroups = append(c.CompositePodGroups, cpg)
	}
}

// groupPriority is the i-th of priorities as a pod group's: the API
// server refuses a PodGroup or CompositePodGroup priority above
// 1000000000 (its declarative validation), so higher ones become that.
func groupPriority(i int) int32 {
	return min(pick(priorities, i), maxGroupPriority)
}

// maxGroupPriority is the largest spec.priority a pod group may have.
const maxGroupPriority = 1000000000

// buildGang is s.Gang's request on c under cfg (GenericWorkload on).
func (s Spec) buildGang(c *preempt.Cluster, cfg preempt.Config) *preempt.PodGroupRequest {
	g := s.Gang
	cfg.FeatureGates = map[string]bool{preempt.GenericWorkloadGate: true}
	pg := &preempt.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gang", UID: "uid-gang"},
		Spec: schedulingv1beta1.PodGroupSpec{Priority: ptr.To(groupPriority(g.Priority)),
			SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}}}}
	if g.MinCount > 0 {
		pg.Spec.SchedulingPolicy = schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: int32(g.MinCount)}}
	}
	if g.GroupPolicy > 0 {
		cfg.FeatureGates["PodGroupPreemptionPolicy"] = true
		pg.Spec.PreemptionPolicy = ptr.To(schedulingv1beta1.PreemptLowerPriority)
		if g.GroupPolicy == 2 {
			pg.Spec.PreemptionPolicy = ptr.To(schedulingv1beta1.PreemptNever)
		}
	}
	req := &preempt.PodGroupRequest{PodGroup: pg, Config: cfg, Now: Base().Add(time.Hour)}
	if g.TAS {
		cfg.FeatureGates["TopologyAwareWorkloadScheduling"] = true
	}
	if g.Children > 0 {
		cfg.FeatureGates["CompositePodGroup"] = true
		cfg.FeatureGates["TopologyAwareWorkloadScheduling"] = true
		cpg := &preempt.CompositePodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gang", UID: "uid-gang"},
			Spec: schedulingv1alpha3.CompositePodGroupSpec{Priority: pg.Spec.Priority,
				SchedulingPolicy: schedulingv1alpha3.CompositePodGroupSchedulingPolicy{Basic: &schedulingv1alpha3.CompositeBasicSchedulingPolicy{}}}}
		if g.MinGroupCount > 0 {
			cpg.Spec.SchedulingPolicy = schedulingv1alpha3.CompositePodGroupSchedulingPolicy{Gang: &schedulingv1alpha3.CompositeGangSchedulingPolicy{MinGroupCount: int32(g.MinGroupCount)}}
		}
		if pg.Spec.PreemptionPolicy != nil {
			cpg.Spec.PreemptionPolicy = ptr.To(schedulingv1alpha3.PreemptionPolicy(*pg.Spec.PreemptionPolicy))
		}
		req.PodGroup, req.CompositePodGroup = nil, cpg
		for k := range g.Children {
			child := &preempt.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("gang-c%d", k), UID: types.UID(fmt.Sprintf("uid-gang-c%d", k))},
				Spec: schedulingv1beta1.PodGroupSpec{Priority: pg.Spec.Priority, ParentCompositePodGroupName: ptr.To("gang"),
					SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}}}}
			if k < len(g.ChildCreated) {
				child.CreationTimestamp = metav1.NewTime(Base().Add(-time.Duration(g.ChildCreated[k]) * time.Minute))
			}
			if k < len(g.ChildMinCounts) && g.ChildMinCounts[k] > 0 {
				child.Spec.SchedulingPolicy = schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: int32(g.ChildMinCounts[k])}}
			}
			req.PodGroups = append(req.PodGroups, child)
		}
	}
	for i, ps := range g.Members {
		node := ps.Node
		ps.Node, ps.Group = 0, 0
		p := s.pod(ps, fmt.Sprintf("m%d", i))
		p.Namespace, p.UID = "default", types.UID(fmt.Sprintf("uid-m%d", i))
		p.DeletionTimestamp, p.Status = nil, v1.PodStatus{Phase: v1.PodPending}
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To(g.groupOf(i))}
		last := i == len(g.Members)-1
		g.conform(p, last && g.Refuse == 1)
		if last && g.Refuse == 2 && len(g.Scheduled) == 0 {
			p.Spec.SchedulerName = "other-scheduler"
		}
		if last && g.Refuse == 3 {
			if p.Spec.PreemptionPolicy != nil && *p.Spec.PreemptionPolicy == v1.PreemptNever {
				p.Spec.PreemptionPolicy = ptr.To(v1.PreemptLowerPriority)
			} else {
				p.Spec.PreemptionPolicy = ptr.To(v1.PreemptNever)
			}
		}
		if g.Deleting&(1<<i) != 0 {
			del := metav1.NewTime(Base().Add(30 * time.Minute))
			p.DeletionTimestamp = &del
		}
		if i == g.Unplaceable-1 {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("100000")
		}
		if node > 0 && len(c.Nodes) > 0 {
			p.Status.NominatedNodeName = c.Nodes[at(node-1, len(c.Nodes))].Name
		}
		req.Pods = append(req.Pods, p)
	}
	return req
}
