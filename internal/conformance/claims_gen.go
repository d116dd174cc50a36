package conformance

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"pgregory.net/rapid"

	"github.com/preemptbench/preemptbench/preempt"
)

// ClaimSpec gives a generated cluster devices and its pods resource claims
// (issue 32, DynamicResources): GPUs of DRADriverName published per node
// (ResourceSlices), maybe one reachable from every node, a DeviceClass
// "gpu" selecting them, bound pods holding their node's GPUs through
// allocated claims reserved for them, and the preemptor's claims of the
// kinds DynamicResources tells apart. Every claim exists and the
// preemptor's allocated claims are shared with another pod, so no
// implementation refuses the problem for its claims (preempt.DRACycleGaps).
type ClaimSpec struct {
	// Devices[i] indexes nodeDevices: the GPUs node i publishes (gpu-0, an
	// a100; gpu-1, an h100; ...).
	Devices []int
	// AllNodes adds one GPU reachable from every node (a slice with
	// allNodes, pool "fabric").
	AllNodes bool
	// Tainted is 0, or k for node (k-1 mod nodes)'s gpu-0 tainted
	// NoSchedule (DRADeviceTaints).
	Tainted int
	// TaintRule is 0, or k for DeviceTaintRule kind taintRuleKinds[k-1]
	// (DRADeviceTaintRules), on node (TaintRuleNode mod nodes)'s pool
	// where the kind names one.
	TaintRule     int
	TaintRuleNode int
	// Holds[k] is set when the k-th pod of the cluster (in Build's order),
	// if bound, holds a GPU of its node: claim "held-<pod>", allocated the
	// node's next GPU not yet held and reserved for the pod.
	Holds []bool
	// Preemptor indexes preemptorClaimKinds, one entry per claim.
	Preemptor []int
	// Extended indexes extendedKinds: whether class "gpu" backs the
	// extended resource pods ask for (ExtendedResource, through
	// spec.extendedResourceName), or the preemptor also asks for one
	// device by the class's implicit name (DRAExtendedResource): where a
	// node does not advertise it, DynamicResources allocates a claim the
	// scheduler makes for the pod.
	Extended int
	// Binding indexes bindingKinds: the binding conditions of the held
	// claims' devices (the preemptor may share one: claimShareHeld).
	Binding int
	// Members[i] indexes memberClaimKinds, one entry per claim of the
	// gang's member i (GenGangVolumes), none past the end.
	Members [][]int
	// MemberExtended[i] indexes memberExtendedKinds: the extended
	// resource a DeviceClass may back that the gang's member i asks for
	// (GenGangVolumes), none past the end.
	MemberExtended []int
	// HeldExtended makes each held claim the claim an earlier cycle made
	// for its holder's extended resources (the holder asks for one
	// deviceclass.resource.kubernetes.io/gpu; the claim is annotated,
	// controlled by the holder and named in its
	// status.extendedResourceClaimStatus), shared with no one
	// (GenGangVolumes).
	HeldExtended bool
}

// The extended resources a class backs.
const (
	extendedNone     = iota
	extendedBacked   // class gpu's extendedResourceName is ExtendedResource
	extendedImplicit // and the preemptor asks for deviceclass.resource.kubernetes.io/gpu: 1
)

// The held claims' binding conditions: none; "attached", not met, the
// allocation made in 2000 (timed out at any clock after) or in 2200 (not
// yet); its failure condition met; it met.
const (
	bindingNone = iota
	bindingTimedOut
	bindingPending
	bindingFailed
	bindingMet
)

var (
	extendedKinds = []int{extendedNone, extendedNone, extendedBacked, extendedImplicit}
	bindingKinds  = []int{bindingNone, bindingNone, bindingNone, bindingTimedOut, bindingPending, bindingFailed, bindingMet}
	// BindingLongAgo and BindingFarAhead are allocation times whose
	// binding timeout (600s) is reached, and not reached, at any clock a
	// test runs at: upstream reads time.Now(), reference and optimized
	// Request.Now.
	BindingLongAgo  = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	BindingFarAhead = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// DRADriverName is the driver of generated devices.
const DRADriverName = "gpu.example.com"

// The preemptor's claim kinds.
const (
	claimOneGPU      = iota // one GPU
	claimTwoGPUs            // two GPUs
	claimH100               // one GPU whose model is h100 (a CEL selector)
	claimTwoElseOne         // firstAvailable: two GPUs, else one (DRAPrioritizedList)
	claimNoClass            // one device of class "tpu", which does not exist: PreFilter rejects the pod
	claimShareHeld          // a held claim shared (allocated, reserved for its holder; one GPU when none is held)
	claimAllGPUs            // every GPU the node reaches (allocationMode All)
	claimAdminAccess        // one GPU with admin access (allocated to no one exclusively)
)

var (
	nodeDevices         = []int{0, 1, 1, 2, 3}
	preemptorClaimKinds = []int{claimOneGPU, claimOneGPU, claimTwoGPUs, claimH100, claimTwoElseOne, claimNoClass, claimShareHeld, claimShareHeld, claimAllGPUs, claimAdminAccess}
	gpuModels           = []string{"a100", "h100"}
)

// genClaims draws the devices and claims of s (its nodes and pods drawn).
func genClaims(t *rapid.T, s *Spec) *ClaimSpec {
	idx := func(table int, label string) int { return rapid.IntRange(0, table-1).Draw(t, label) }
	cs := &ClaimSpec{AllNodes: rapid.IntRange(0, 4).Draw(t, "allNodes") == 0}
	for range s.Nodes {
		cs.Devices = append(cs.Devices, idx(len(nodeDevices), "nodeDevices"))
	}
	if rapid.IntRange(0, 3).Draw(t, "withTaint") == 0 {
		cs.Tainted = rapid.IntRange(1, len(s.Nodes)).Draw(t, "tainted")
	}
	pods := len(s.Nominated)
	for _, ns := range s.Nodes {
		pods += len(ns.Bound)
	}
	for range pods {
		cs.Holds = append(cs.Holds, rapid.IntRange(0, 2).Draw(t, "holds") == 0)
	}
	for range rapid.IntRange(1, 2).Draw(t, "preemptorClaims") {
		cs.Preemptor = append(cs.Preemptor, idx(len(preemptorClaimKinds), "preemptorClaim"))
	}
	cs.Extended = idx(len(extendedKinds), "extended")
	cs.Binding = idx(len(bindingKinds), "binding")
	if rapid.IntRange(0, 2).Draw(t, "withTaintRule") == 0 {
		cs.TaintRule = rapid.IntRange(1, len(taintRuleKinds)).Draw(t, "taintRule")
		cs.TaintRuleNode = idx(len(s.Nodes), "taintRuleNode")
	}
	return cs
}

// The DeviceTaintRules a claim problem may hold: a NoSchedule taint on a
// node's gpu-0 (driver, pool and device), on a node's pool, on every GPU
// (driver only), on every gpu-1 (device name only); effect None on every
// device (an empty selector); NoExecute on the devices of a driver no
// slice has; and a rule without a selector (none).
const (
	taintRuleNodeGPU = iota
	taintRulePool
	taintRuleDriver
	taintRuleDevice
	taintRuleNone
	taintRuleNoMatch
	taintRuleNoSelector
)

var taintRuleKinds = []int{taintRuleNodeGPU, taintRuleNodeGPU, taintRulePool, taintRuleDriver, taintRuleDevice, taintRuleNone, taintRuleNoMatch, taintRuleNoSelector}

// taintRule is the DeviceTaintRule of cs on c's nodes, nil for none.
func (cs *ClaimSpec) taintRule(c *preempt.Cluster) *resourcev1.DeviceTaintRule {
	if cs.TaintRule <= 0 || len(c.Nodes) == 0 {
		return nil
	}
	pool := c.Nodes[at(cs.TaintRuleNode, len(c.Nodes))].Name
	sel := &resourcev1.DeviceTaintSelector{}
	effect := resourcev1.DeviceTaintEffectNoSchedule
	switch taintRuleKinds[at(cs.TaintRule-1, len(taintRuleKinds))] {
	case taintRuleNodeGPU:
		sel.Driver, sel.Pool, sel.Device = ptr.To(DRADriverName), ptr.To(pool), ptr.To("gpu-0")
	case taintRulePool:
		sel.Pool = ptr.To(pool)
	case taintRuleDriver:
		sel.Driver = ptr.To(DRADriverName)
	case taintRuleDevice:
		sel.Device = ptr.To("gpu-1")
	case taintRuleNone:
		effect = resourcev1.DeviceTaintEffectNone
	case taintRuleNoMatch:
		sel.Driver, effect = ptr.To("tpu.example.com"), resourcev1.DeviceTaintEffectNoExecute
	case taintRuleNoSelector:
		sel = nil
	}
	return &resourcev1.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: "rule", UID: "uid-rule"},
		Spec: resourcev1.DeviceTaintRuleSpec{DeviceSelector: sel, Taint: resourcev1.DeviceTaint{
			Key: "example.com/rule", Value: "x", Effect: effect,
			TimeAdded: &metav1.Time{Time: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)},
		}},
	}
}

func gpuRequest(name, class string) resourcev1.DeviceRequest {
	return resourcev1.DeviceRequest{Name: name, Exactly: &resourcev1.ExactDeviceRequest{
		DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1,
	}}
}

// build adds the devices and claims to c: the class, the slices, the held
// claims of pods (c's pods in Build's order) and the preemptor's claims.
func (cs *ClaimSpec) build(c *preempt.Cluster, pods []*v1.Pod, preemptor *v1.Pod) {
	c.DeviceClasses = []*resourcev1.DeviceClass{{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu", UID: "uid-class-gpu"},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
			CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", DRADriverName)},
		}}},
	}}
	switch extendedKinds[at(cs.Extended, len(extendedKinds))] {
	case extendedImplicit:
		ctr := &preemptor.Spec.Containers[0]
		if ctr.Resources.Requests == nil {
			ctr.Resources.Requests = v1.ResourceList{}
		}
		ctr.Resources.Requests[v1.ResourceName(resourcev1.ResourceDeviceClassPrefix+"gpu")] = resource.MustParse("1")
		fallthrough
	case extendedBacked:
		c.DeviceClasses[0].Spec.ExtendedResourceName = ptr.To(string(ExtendedResource))
	}
	count := map[string]int{} // node -> its GPUs
	for i, node := range c.Nodes {
		k := nodeDevices[at(cs.Devices[min(i, len(cs.Devices)-1)], len(nodeDevices))]
		count[node.Name] = k
		if k == 0 {
			continue
		}
		slice := &resourcev1.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: node.Name + "-gpus", UID: types.UID("uid-slice-" + node.Name)},
			Spec: resourcev1.ResourceSliceSpec{Driver: DRADriverName, NodeName: ptr.To(node.Name),
				Pool: resourcev1.ResourcePool{Name: node.Name, ResourceSliceCount: 1}},
		}
		for d := range k {
			slice.Spec.Devices = append(slice.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", d),
				Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"model": {StringValue: ptr.To(gpuModels[d%len(gpuModels)])}}})
		}
		if cs.Tainted > 0 && at(cs.Tainted-1, len(c.Nodes)) == i {
			slice.Spec.Devices[0].Taints = []resourcev1.DeviceTaint{{Key: "broken", Effect: resourcev1.DeviceTaintEffectNoSchedule}}
		}
		c.ResourceSlices = append(c.ResourceSlices, slice)
	}
	if r := cs.taintRule(c); r != nil {
		c.DeviceTaintRules = []*resourcev1.DeviceTaintRule{r}
	}
	if cs.AllNodes {
		c.ResourceSlices = append(c.ResourceSlices, &resourcev1.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: "fabric", UID: "uid-slice-fabric"},
			Spec: resourcev1.ResourceSliceSpec{Driver: DRADriverName, AllNodes: ptr.To(true),
				Pool:    resourcev1.ResourcePool{Name: "fabric", ResourceSliceCount: 1},
				Devices: []resourcev1.Device{{Name: "gpu-0", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"model": {StringValue: ptr.To("a100")}}}}},
		})
	}
	held := map[string]int{} // node -> GPUs held
	var shareable []string   // held claims of namespace default
	for k, p := range pods {
		if k >= len(cs.Holds) || !cs.Holds[k] || p.Spec.NodeName == "" || held[p.Spec.NodeName] >= count[p.Spec.NodeName] {
			continue
		}
		node := p.Spec.NodeName
		rc := &resourcev1.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: "held-" + p.Name, UID: types.UID("uid-claim-held-" + p.Name)},
			Spec:       resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{gpuRequest("gpu", "gpu")}}},
			Status: resourcev1.ResourceClaimStatus{
				Allocation: &resourcev1.AllocationResult{
					Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{{
						Request: "gpu", Driver: DRADriverName, Pool: node, Device: fmt.Sprintf("gpu-%d", held[node]),
					}}},
					NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
						MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{node}}},
					}}},
				},
				ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: p.Name, UID: p.UID}},
			},
		}
		if b := bindingKinds[at(cs.Binding, len(bindingKinds))]; b != bindingNone {
			r := &rc.Status.Allocation.Devices.Results[0]
			r.BindingConditions, r.BindingFailureConditions = []string{"attached"}, []string{"failed"}
			rc.Status.Allocation.AllocationTimestamp = &metav1.Time{Time: BindingLongAgo}
			if b == bindingPending {
				rc.Status.Allocation.AllocationTimestamp = &metav1.Time{Time: BindingFarAhead}
			}
			cond := map[int]string{bindingFailed: "failed", bindingMet: "attached"}[b]
			if cond != "" {
				rc.Status.Devices = []resourcev1.AllocatedDeviceStatus{{Driver: r.Driver, Pool: r.Pool, Device: r.Device,
					Conditions: []metav1.Condition{{Type: cond, Status: metav1.ConditionTrue, Reason: "Generated", LastTransitionTime: metav1.Time{Time: BindingLongAgo}}}}}
			}
		}
		held[node]++
		c.ResourceClaims = append(c.ResourceClaims, rc)
		if cs.HeldExtended {
			heldForExtended(p, rc)
			continue
		}
		usesClaim(p, "gpu", rc.Name)
		if p.Namespace == preemptor.Namespace {
			shareable = append(shareable, rc.Name)
		}
	}
	used := map[string]bool{}
	for i, kind := range cs.Preemptor {
		addClaim(c, preemptor, fmt.Sprintf("c%d", i), fmt.Sprintf("preemptor-c%d", i), preemptorClaimKinds[at(kind, len(preemptorClaimKinds))], shareable, i, used)
	}
}

// heldForExtended makes rc, held by bound pod p, the claim DynamicResources
// made for p's extended resources in an earlier cycle: p asks for one
// device of class gpu by the class's implicit name, rc is annotated and
// controlled by p, its request named as createRequestsAndMappings names
// it, and p's status.extendedResourceClaimStatus maps it.
func heldForExtended(p *v1.Pod, rc *resourcev1.ResourceClaim) {
	name := v1.ResourceName(resourcev1.ResourceDeviceClassPrefix + "gpu")
	ctr := &p.Spec.Containers[0]
	if ctr.Resources.Requests == nil {
		ctr.Resources.Requests = v1.ResourceList{}
	}
	ctr.Resources.Requests[name] = resource.MustParse("1")
	keys := make([]string, 0, len(ctr.Resources.Requests))
	for k := range ctr.Resources.Requests {
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	request := fmt.Sprintf("container-0-request-%d", slices.Index(keys, string(name)))
	rc.Spec.Devices.Requests[0].Name = request
	rc.Status.Allocation.Devices.Results[0].Request = request
	rc.Annotations = map[string]string{resourcev1.ExtendedResourceClaimAnnotation: "true"}
	rc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID, Controller: ptr.To(true)}}
	p.Status.ExtendedResourceClaimStatus = &v1.PodExtendedResourceClaimStatus{
		ResourceClaimName: rc.Name,
		RequestMappings:   []v1.ContainerExtendedResourceRequest{{ContainerName: ctr.Name, ResourceName: string(name), RequestName: request}},
	}
}

// addClaim gives p, through its pod claim podClaim, a claim of kind: a
// held claim of shareable (the pick-th, when kind is claimShareHeld and
// p uses it not yet: used), else a new claim name of p's namespace.
func addClaim(c *preempt.Cluster, p *v1.Pod, podClaim, name string, kind int, shareable []string, pick int, used map[string]bool) {
	rc := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: name, UID: types.UID("uid-claim-" + name)},
		Spec:       resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{gpuRequest("gpu", "gpu")}}},
	}
	req := &rc.Spec.Devices.Requests[0]
	switch kind {
	case claimTwoGPUs:
		req.Exactly.Count = 2
	case claimH100:
		req.Exactly.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: fmt.Sprintf("device.attributes[%q].model == \"h100\"", DRADriverName),
		}}}
	case claimTwoElseOne:
		req.Exactly = nil
		req.FirstAvailable = []resourcev1.DeviceSubRequest{
			{Name: "two", DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 2},
			{Name: "one", DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
		}
	case claimNoClass:
		req.Exactly.DeviceClassName = "tpu"
	case claimShareHeld:
		if len(shareable) > 0 {
			if shared := shareable[pick%len(shareable)]; !used[shared] {
				used[shared] = true
				usesClaim(p, podClaim, shared)
				return
			}
		}
	case claimAllGPUs:
		req.Exactly.AllocationMode, req.Exactly.Count = resourcev1.DeviceAllocationModeAll, 0
	case claimAdminAccess:
		req.Exactly.AdminAccess = ptr.To(true)
	}
	c.ResourceClaims = append(c.ResourceClaims, rc)
	usesClaim(p, podClaim, name)
}

// usesClaim makes p use claim by name, through its pod claim podClaim.
func usesClaim(p *v1.Pod, podClaim, claim string) {
	p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, v1.PodResourceClaim{Name: podClaim, ResourceClaimName: ptr.To(claim)})
	if len(p.Spec.Containers) > 0 {
		p.Spec.Containers[0].Resources.Claims = append(p.Spec.Containers[0].Resources.Claims, v1.ResourceClaim{Name: podClaim})
	}
}

// rejectedAtPreFilter reports whether the preemptor's claims make
// DynamicResources' PreFilter reject it (a device class missing:
// UnschedulableAndUnresolvable, for every node).
func (cs *ClaimSpec) rejectedAtPreFilter() bool {
	for _, kind := range cs.Preemptor {
		if preemptorClaimKinds[at(kind, len(preemptorClaimKinds))] == claimNoClass {
			return true
		}
	}
	return false
}
