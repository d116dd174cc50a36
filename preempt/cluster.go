package preempt

import (
	"fmt"
	"runtime"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/preemptbench/preemptbench/internal/podinfo"
)

// MaxQuantity bounds every request and allocatable value (in the unit the
// scheduler counts it: millicores for cpu, the base unit otherwise). It keeps
// every sum the scheduler makes far from int64 overflow.
const MaxQuantity = int64(1) << 53

// Key names a namespaced object as "namespace/name".
func Key(namespace, name string) string { return namespace + "/" + name }

// IsBound reports whether p is bound to a node.
func IsBound(p *v1.Pod) bool { return p.Spec.NodeName != "" }

// IsNominated reports whether p waits, unbound, on a nominated node.
func IsNominated(p *v1.Pod) bool { return p.Spec.NodeName == "" && p.Status.NominatedNodeName != "" }

// Validate rejects what no implementation could answer meaningfully: empty
// or duplicate names and UIDs, pods bound or nominated to unknown nodes,
// negative or overflow-sized quantities, invalid host ports. Each error names
// the object. PDB selectors are not checked: upstream treats an invalid
// selector as matching nothing, and so does every implementation.
func (c *Cluster) Validate() error {
	nodes := make(map[string]bool, len(c.Nodes))
	for i, n := range c.Nodes {
		if n == nil {
			return fmt.Errorf("node #%d is nil", i)
		}
		if _, err := register("node", i, &n.ObjectMeta, nodes); err != nil {
			return err
		}
		if err := checkResourceList("node "+n.Name+" allocatable", n.Status.Allocatable); err != nil {
			return err
		}
	}
	// Each pod's own checks and requests first, on every core (a tenth of
	// a second at 20000 pods on one); then, in order, what relates pods to
	// each other and to nodes. The first error in that order is returned,
	// as if the checks ran pod by pod.
	own := podChecks(c.Pods)
	pods := make(map[string]bool, len(c.Pods))
	uids := make(map[types.UID]string, len(c.Pods))
	perNode := make(map[string]v1.ResourceList)
	for i, p := range c.Pods {
		if p == nil {
			return fmt.Errorf("pod #%d is nil", i)
		}
		key, err := register("pod", i, &p.ObjectMeta, pods)
		if err != nil {
			return err
		}
		if p.UID == "" {
			return fmt.Errorf("pod %s has no uid", key)
		}
		if other, ok := uids[p.UID]; ok {
			return fmt.Errorf("pod %s has the uid %q of pod %s", key, p.UID, other)
		}
		uids[p.UID] = key
		if err := own[i].err; err != nil {
			return err
		}
		switch {
		case IsBound(p):
			if !nodes[p.Spec.NodeName] {
				return fmt.Errorf("pod %s is bound to unknown node %q", key, p.Spec.NodeName)
			}
			sum := perNode[p.Spec.NodeName]
			if sum == nil {
				sum = v1.ResourceList{}
				perNode[p.Spec.NodeName] = sum
			}
			if err := addInto(sum, own[i].reqs, p); err != nil {
				return fmt.Errorf("node %s: %w", p.Spec.NodeName, err)
			}
		case IsNominated(p):
			if !nodes[p.Status.NominatedNodeName] {
				return fmt.Errorf("pod %s is nominated to unknown node %q", key, p.Status.NominatedNodeName)
			}
		}
	}
	pdbs := make(map[string]bool, len(c.PDBs))
	for i, pdb := range c.PDBs {
		if pdb == nil {
			return fmt.Errorf("poddisruptionbudget #%d is nil", i)
		}
		if _, err := register("poddisruptionbudget", i, &pdb.ObjectMeta, pdbs); err != nil {
			return err
		}
	}
	groups := make(map[string]bool, len(c.PodGroups))
	for i, pg := range c.PodGroups {
		if pg == nil {
			return fmt.Errorf("podgroup #%d is nil", i)
		}
		if _, err := register("podgroup", i, &pg.ObjectMeta, groups); err != nil {
			return err
		}
		if err := ValidatePodGroupObject(pg); err != nil {
			return err
		}
	}
	if err := c.validateVolumeAndDeviceNames(); err != nil {
		return err
	}
	composites := make(map[string]bool, len(c.CompositePodGroups))
	for i, cpg := range c.CompositePodGroups {
		if cpg == nil {
			return fmt.Errorf("compositepodgroup #%d is nil", i)
		}
		if _, err := register("compositepodgroup", i, &cpg.ObjectMeta, composites); err != nil {
			return err
		}
		if err := ValidateCompositePodGroupObject(cpg); err != nil {
			return err
		}
	}
	return nil
}

// validateVolumeAndDeviceNames refuses a nil, unnamed or repeated
// object of the storage and resource.k8s.io kinds, as the API server
// holds one object of a kind by name (in its namespace); a second one
// would otherwise silently shadow the first.
func (c *Cluster) validateVolumeAndDeviceNames() error {
	for _, k := range []struct {
		kind string
		n    int
		meta func(i int) *metav1.ObjectMeta
	}{
		{"persistentvolumeclaim", len(c.PVCs), func(i int) *metav1.ObjectMeta { return objectMeta(c.PVCs[i]) }},
		{"persistentvolume", len(c.PVs), func(i int) *metav1.ObjectMeta { return objectMeta(c.PVs[i]) }},
		{"storageclass", len(c.StorageClasses), func(i int) *metav1.ObjectMeta { return objectMeta(c.StorageClasses[i]) }},
		{"csinode", len(c.CSINodes), func(i int) *metav1.ObjectMeta { return objectMeta(c.CSINodes[i]) }},
		{"csidriver", len(c.CSIDrivers), func(i int) *metav1.ObjectMeta { return objectMeta(c.CSIDrivers[i]) }},
		{"volumeattachment", len(c.VolumeAttachments), func(i int) *metav1.ObjectMeta { return objectMeta(c.VolumeAttachments[i]) }},
		{"csistoragecapacity", len(c.CSIStorageCapacities), func(i int) *metav1.ObjectMeta { return objectMeta(c.CSIStorageCapacities[i]) }},
		{"resourceclaim", len(c.ResourceClaims), func(i int) *metav1.ObjectMeta { return objectMeta(c.ResourceClaims[i]) }},
		{"resourceclaimtemplate", len(c.ResourceClaimTemplates), func(i int) *metav1.ObjectMeta { return objectMeta(c.ResourceClaimTemplates[i]) }},
		{"resourceslice", len(c.ResourceSlices), func(i int) *metav1.ObjectMeta { return objectMeta(c.ResourceSlices[i]) }},
		{"deviceclass", len(c.DeviceClasses), func(i int) *metav1.ObjectMeta { return objectMeta(c.DeviceClasses[i]) }},
		{"devicetaintrule", len(c.DeviceTaintRules), func(i int) *metav1.ObjectMeta { return objectMeta(c.DeviceTaintRules[i]) }},
	} {
		seen := make(map[string]bool, k.n)
		for i := range k.n {
			m := k.meta(i)
			if m == nil {
				return fmt.Errorf("%s #%d is nil", k.kind, i)
			}
			if _, err := register(k.kind, i, m, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// clusterScoped are the kinds register names without namespace.
var clusterScoped = map[string]bool{
	"node": true, "persistentvolume": true, "storageclass": true, "csinode": true, "csidriver": true,
	"volumeattachment": true, "resourceslice": true, "deviceclass": true, "devicetaintrule": true,
}

// objectMeta is o's metadata, nil for a nil o.
func objectMeta[T any, P interface {
	*T
	metav1.ObjectMetaAccessor
}](o P) *metav1.ObjectMeta {
	if o == nil {
		return nil
	}
	return o.GetObjectMeta().(*metav1.ObjectMeta)
}

// PodGroupName is the PodGroup p belongs to (spec.schedulingGroup.
// podGroupName, in p's namespace), as v1.37 reads it; ok is false for a
// pod in no group.
func PodGroupName(p *v1.Pod) (name string, ok bool) {
	if name, _ := schedulingGroup(p); name != nil {
		return *name, true
	}
	return "", false
}

// checkSchedulingGroup refuses a spec.schedulingGroup upstream cannot
// read: without a podGroupName (the API server requires one; upstream
// dereferences it) or an empty one.
func checkSchedulingGroup(p *v1.Pod) error {
	name, set := schedulingGroup(p)
	if !set {
		return nil
	}
	if name == nil || *name == "" {
		return fmt.Errorf("pod %s: spec.schedulingGroup has no podGroupName", Key(p.Namespace, p.Name))
	}
	return nil
}

// register records object #i of kind in seen by its key (namespace/name,
// or the quoted name of a cluster-scoped object) and fails on an empty or
// repeated name.
func register(kind string, i int, m *metav1.ObjectMeta, seen map[string]bool) (string, error) {
	if m.Name == "" {
		return "", fmt.Errorf("%s #%d has no name", kind, i)
	}
	key, shown := Key(m.Namespace, m.Name), Key(m.Namespace, m.Name)
	if clusterScoped[kind] {
		key, shown = m.Name, fmt.Sprintf("%q", m.Name)
	}
	if seen[key] {
		return "", fmt.Errorf("%s %s appears twice", kind, shown)
	}
	seen[key] = true
	return key, nil
}

// PodsByNode groups c's pods by node, each list in c.Pods order: bound
// pods by Spec.NodeName, and pods nominated to a node (not bound) by
// Status.NominatedNodeName.
func PodsByNode(c *Cluster) (bound, nominated map[string][]*v1.Pod) {
	bound, nominated = map[string][]*v1.Pod{}, map[string][]*v1.Pod{}
	for _, p := range c.Pods {
		switch {
		case IsBound(p):
			bound[p.Spec.NodeName] = append(bound[p.Spec.NodeName], p)
		case IsNominated(p):
			nominated[p.Status.NominatedNodeName] = append(nominated[p.Status.NominatedNodeName], p)
		}
	}
	return bound, nominated
}

// ValidatePod checks one pod's quantities and host ports.
func ValidatePod(p *v1.Pod) error {
	_, err := validatePod(p)
	return err
}

// podCheck is one pod's ValidatePod outcome and its effective requests.
type podCheck struct {
	reqs v1.ResourceList
	err  error
}

// podChecks runs validatePod on every non-nil pod, on every core when
// there are many.
func podChecks(ps []*v1.Pod) []podCheck {
	out := make([]podCheck, len(ps))
	check := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if ps[i] != nil {
				out[i].reqs, out[i].err = validatePod(ps[i])
			}
		}
	}
	workers := runtime.GOMAXPROCS(0)
	if len(ps) < 2048 || workers < 2 {
		check(0, len(ps))
		return out
	}
	var wg sync.WaitGroup
	chunk := (len(ps) + workers - 1) / workers
	for lo := 0; lo < len(ps); lo += chunk {
		wg.Go(func() { check(lo, min(lo+chunk, len(ps))) })
	}
	wg.Wait()
	return out
}

// validatePod is ValidatePod, returning the pod's effective requests.
func validatePod(p *v1.Pod) (v1.ResourceList, error) {
	key := func() string { return Key(p.Namespace, p.Name) }
	for _, cs := range [][]v1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, ctr := range cs {
			what := func() string { return fmt.Sprintf("pod %s container %q", key(), ctr.Name) }
			if err := checkResources(what, " requests", ctr.Resources.Requests); err != nil {
				return nil, err
			}
			if err := checkResources(what, " limits", ctr.Resources.Limits); err != nil {
				return nil, err
			}
			for _, port := range ctr.Ports {
				if port.HostPort < 0 || port.HostPort > 65535 {
					return nil, fmt.Errorf("%s: host port %d out of range 0..65535", what(), port.HostPort)
				}
			}
		}
	}
	if err := checkSchedulingGroup(p); err != nil {
		return nil, err
	}
	pod := func() string { return "pod " + key() }
	if err := checkResources(pod, " overhead", p.Spec.Overhead); err != nil {
		return nil, err
	}
	if p.Spec.Resources != nil {
		if err := checkResources(pod, " pod-level requests", p.Spec.Resources.Requests); err != nil {
			return nil, err
		}
	}
	reqs := resourcehelper.PodRequests(podinfo.Unaliased(p), resourcehelper.PodResourcesOptions{})
	for name, q := range reqs {
		if v, ok := scaled(name, q); !ok || v > MaxQuantity || v < 0 {
			return nil, fmt.Errorf("pod %s: total %s request %s is too large (at most %d %s)", key(), name, q.String(), MaxQuantity, unit(name))
		}
	}
	return reqs, nil
}

// maxMilli and maxUnits are MaxQuantity as millicores and as units.
var maxMilli, maxUnits = *resource.NewMilliQuantity(MaxQuantity, resource.DecimalSI), *resource.NewQuantity(MaxQuantity, resource.DecimalSI)

func scaled(name v1.ResourceName, q resource.Quantity) (int64, bool) {
	if name == v1.ResourceCPU {
		if q.Cmp(maxMilli) > 0 {
			return 0, false
		}
		return q.MilliValue(), true
	}
	if q.Cmp(maxUnits) > 0 {
		return 0, false
	}
	return q.Value(), true
}

func checkResourceList(what string, rl v1.ResourceList) error {
	return checkResources(func() string { return what }, "", rl)
}

// checkResources is checkResourceList naming the list what()+suffix,
// built only for an error.
func checkResources(what func() string, suffix string, rl v1.ResourceList) error {
	for name, q := range rl {
		if q.Sign() < 0 {
			return fmt.Errorf("%s%s: %s is negative (%s)", what(), suffix, name, q.String())
		}
		if _, ok := scaled(name, q); !ok {
			return fmt.Errorf("%s%s: %s is too large (%s; at most %d %s)", what(), suffix, name, q.String(), MaxQuantity, unit(name))
		}
	}
	return nil
}

func unit(name v1.ResourceName) string {
	if name == v1.ResourceCPU {
		return "millicores"
	}
	return "units"
}

// addInto adds reqs, p's effective requests, to sum in place, failing if
// a total leaves the range of MaxQuantity.
func addInto(sum, reqs v1.ResourceList, p *v1.Pod) error {
	for name, q := range reqs {
		t := sum[name]
		t.Add(q)
		if v, ok := scaled(name, t); !ok || v > MaxQuantity || v < 0 {
			return fmt.Errorf("pod %s: total %s request %s is too large (at most %d %s)", Key(p.Namespace, p.Name), name, t.String(), MaxQuantity, unit(name))
		}
		sum[name] = t
	}
	return nil
}

// ValidatePreemptor checks that p can be the preemptor on c: a valid pod
// with a uid that is not itself in the cluster.
func (c *Cluster) ValidatePreemptor(p *v1.Pod) error {
	if p == nil {
		return fmt.Errorf("no preemptor pod")
	}
	key := Key(p.Namespace, p.Name)
	if p.UID == "" {
		return fmt.Errorf("preemptor %s has no uid", key)
	}
	for _, q := range c.Pods {
		if q.Namespace == p.Namespace && q.Name == p.Name {
			return fmt.Errorf("preemptor %s is also in the cluster (on node %q)", key, q.Spec.NodeName)
		}
		if q.UID == p.UID {
			return fmt.Errorf("preemptor %s has the uid %q of pod %s", key, p.UID, Key(q.Namespace, q.Name))
		}
	}
	return ValidatePod(p)
}
