package preempt

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/preemptbench/preemptbench/internal/draext"
)

// Limited is implemented by an implementation that models only part of
// kube-scheduler's default profile. Unmodelled returns the first use, in c
// or by the preemptor pod, of a feature the implementation does not model
// and that could change the decision, or nil. When it is not nil the
// implementation's answer is not upstream's, and callers (the harness, the
// command) refuse rather than answer.
type Limited interface {
	Unmodelled(c *Cluster, pod *v1.Pod) *Unmodelled
}

// Unmodelled names a feature an implementation does not model and the
// object that uses it.
type Unmodelled struct {
	Feature string // "inter-pod affinity", "topology spread", ...
	Object  string // "pod default/p"
	Detail  string // what the object does with it
}

func (u *Unmodelled) Error() string {
	return fmt.Sprintf("%s is not modelled: %s %s", u.Feature, u.Object, u.Detail)
}

// SixFilterGaps is Unmodelled for an implementation whose filters are
// NodeName, NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts and
// NodeResourcesFit: it reports what the rest of the default profile's
// filters (InterPodAffinity, PodTopologySpread, the volume filters and
// DynamicResources) would look at. Preferred affinity terms and
// ScheduleAnyway spread constraints only score, so they are not reported.
func SixFilterGaps(c *Cluster, pod *v1.Pod) *Unmodelled {
	if u := affinityGaps(c, pod); u != nil {
		return u
	}
	return nonAffinityGaps(c, pod)
}

// affinityGaps reports what InterPodAffinity would look at: the
// preemptor's required pod affinity or anti-affinity, or an existing pod's
// required anti-affinity that matches it.
func affinityGaps(c *Cluster, pod *v1.Pod) *Unmodelled {
	who := "pod " + Key(pod.Namespace, pod.Name)
	if a := pod.Spec.Affinity; a != nil {
		if a.PodAffinity != nil && len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
			return &Unmodelled{"inter-pod affinity", who, "has required pod affinity"}
		}
		if a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
			return &Unmodelled{"inter-pod affinity", who, "has required pod anti-affinity"}
		}
	}
	for _, p := range c.Pods {
		if term, ok := antiAffinityAgainst(p, pod); ok {
			return &Unmodelled{"inter-pod affinity", "pod " + Key(p.Namespace, p.Name),
				fmt.Sprintf("has required pod anti-affinity (topology key %q) whose selector matches the preemptor", term.TopologyKey)}
		}
	}
	return nil
}

// nonAffinityGaps reports what PodTopologySpread, the volume filters and
// DynamicResources would look at.
func nonAffinityGaps(c *Cluster, pod *v1.Pod) *Unmodelled {
	who := "pod " + Key(pod.Namespace, pod.Name)
	for _, tsc := range pod.Spec.TopologySpreadConstraints {
		if tsc.WhenUnsatisfiable == v1.DoNotSchedule {
			return &Unmodelled{"topology spread", who, fmt.Sprintf("has a DoNotSchedule topology spread constraint on %q", tsc.TopologyKey)}
		}
	}
	return VolumeAndClaimGaps(c, pod)
}

// VolumeAndClaimGaps reports what the volume filters and DynamicResources
// would look at.
func VolumeAndClaimGaps(c *Cluster, pod *v1.Pod) *Unmodelled {
	if u := VolumeGaps(pod); u != nil {
		return u
	}
	return ClaimGaps(c, pod)
}

// VolumeGaps reports a volume of pod the volume filters (VolumeRestrictions,
// NodeVolumeLimits, VolumeBinding, VolumeZone) would look at.
func VolumeGaps(pod *v1.Pod) *Unmodelled {
	for _, vol := range pod.Spec.Volumes {
		switch {
		case vol.EmptyDir != nil, vol.HostPath != nil, vol.ConfigMap != nil, vol.Secret != nil,
			vol.DownwardAPI != nil, vol.Projected != nil:
		default:
			return &Unmodelled{"volumes", "pod " + Key(pod.Namespace, pod.Name), fmt.Sprintf("has volume %q, which the volume filters (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone) check", vol.Name)}
		}
	}
	return nil
}

// DRAFilterTimeout bounds DynamicResources' allocation on one node, as
// v1.37.2's default configuration does (DRASchedulerFilterTimeout on by
// default, DynamicResourcesArgs.filterTimeout defaulted to
// DynamicResourcesFilterTimeoutDefault): an allocation that takes longer
// is an Error for the node (DRAFilterTimeoutReason), in the filter phase
// and in the dry run, each node on its own. Upstream reads the clock: an
// allocation near the bound may go either way, one far from it cannot.
// Tests lower it.
var DRAFilterTimeout = configv1.DynamicResourcesFilterTimeoutDefault

// DRAFilterTimeoutReason is the Filter status's reason on node when its
// allocation ran out of DRAFilterTimeout, as RunFilterPlugins wraps it.
func DRAFilterTimeoutReason(node string) string {
	return fmt.Sprintf("running %q filter plugin: node %s: timed out trying to allocate devices", "DynamicResources", node)
}

// DeviceClassExtendedResourcePrefix prefixes the extended resource every
// DeviceClass backs implicitly (v1.37's resource.k8s.io/v1
// ResourceDeviceClassPrefix): a pod asking "<prefix><class>" asks for a
// device of that class.
const DeviceClassExtendedResourcePrefix = "deviceclass.resource.kubernetes.io/"

// ClaimGaps reports what DynamicResources would look at: the pod's
// resource claims, or an extended resource it asks for that a DeviceClass
// of c backs (DeviceClassResourceGaps).
func ClaimGaps(c *Cluster, pod *v1.Pod) *Unmodelled {
	if len(pod.Spec.ResourceClaims) > 0 {
		return &Unmodelled{"dynamic resource allocation", "pod " + Key(pod.Namespace, pod.Name), "has resource claims"}
	}
	return DeviceClassResourceGaps(c, pod)
}

// DeviceClassResourceGaps reports an extended resource pod asks for that
// a DeviceClass of c backs (spec.extendedResourceName, or the class's
// implicit name): where no node advertises it, NodeResourcesFit leaves it
// to DynamicResources (DRAExtendedResource, GA in v1.37), which allocates
// a claim it makes for the pod.
func DeviceClassResourceGaps(c *Cluster, pod *v1.Pod) *Unmodelled {
	who := "pod " + Key(pod.Namespace, pod.Name)
	backed := map[v1.ResourceName]string{}
	for _, dc := range c.DeviceClasses {
		if dc.Spec.ExtendedResourceName != nil {
			backed[v1.ResourceName(*dc.Spec.ExtendedResourceName)] = dc.Name
		}
	}
	asks := func(rl v1.ResourceList) string {
		for name := range rl {
			if class, ok := backed[name]; ok {
				return fmt.Sprintf("asks for extended resource %s, which DeviceClass %s backs", name, class)
			}
			if strings.HasPrefix(string(name), DeviceClassExtendedResourcePrefix) {
				return fmt.Sprintf("asks for extended resource %s, a DeviceClass's", name)
			}
		}
		return ""
	}
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, ctr := range cs {
			for _, rl := range []v1.ResourceList{ctr.Resources.Requests, ctr.Resources.Limits} {
				if d := asks(rl); d != "" {
					return &Unmodelled{"dynamic resource allocation", who, d}
				}
			}
		}
	}
	if r := pod.Spec.Resources; r != nil {
		for _, rl := range []v1.ResourceList{r.Requests, r.Limits} {
			if d := asks(rl); d != "" {
				return &Unmodelled{"dynamic resource allocation", who, d}
			}
		}
	}
	return nil
}

// DRACycleGaps is the one rule every implementation that answers pods
// with resource claims (reference, optimized, and the upstream adapter
// where it feeds its DRA manager) applies: it refuses a pod for which
// kube-scheduler v1.37.2 runs no scheduling cycle, or whose cycle
// DynamicResources' own PostFilter could act on (kube-scheduler runs it
// before DefaultPreemption, the default profile putting DynamicResources
// first; no implementation here runs it):
//
//   - DynamicResources' PreEnqueue (foreachPodResourceClaim) keeps the pod
//     out of the scheduling queue: a claim neither by name nor from a
//     template; a claim from a template that status.resourceClaimStatuses
//     does not name yet; a claim the cluster does not hold; a claim being
//     deleted; a claim from a template not controlled by the pod.
//   - PostFilter (deallocateOrDeletePodClaims) deallocates a claim of the
//     pod allocated and reserved for no other pod, when the allocation is
//     unavailable on some node, and deletes a claim made for the pod's
//     extended resources (status.extendedResourceClaimStatus).
//
// A template's status entry naming no claim (the claim deliberately not
// made) is refused too, as "not made yet", though upstream skips it.
func DRACycleGaps(c *Cluster, pod *v1.Pod) *Unmodelled {
	who := "pod " + Key(pod.Namespace, pod.Name)
	refuse := func(detail string) *Unmodelled {
		return &Unmodelled{Feature: "dynamic resource allocation", Object: who, Detail: detail}
	}
	if pod.Status.ExtendedResourceClaimStatus != nil {
		return refuse("has a claim for its extended resources (status.extendedResourceClaimStatus), which DynamicResources' own PostFilter deletes before DefaultPreemption runs")
	}
	claims := map[string]*resourcev1.ResourceClaim{}
	for _, rc := range c.ResourceClaims {
		claims[Key(rc.Namespace, rc.Name)] = rc
	}
	for _, pc := range pod.Spec.ResourceClaims {
		name, fromTemplate := "", false
		switch {
		case pc.ResourceClaimName != nil:
			name = *pc.ResourceClaimName
		case pc.ResourceClaimTemplateName != nil:
			fromTemplate = true
			listed := false
			for _, st := range pod.Status.ResourceClaimStatuses {
				if st.Name == pc.Name {
					listed = true
					if st.ResourceClaimName != nil {
						name = *st.ResourceClaimName
					}
					break
				}
			}
			if listed && name == "" {
				// resourceclaim.Name: the entry names no claim, none
				// was needed; PreEnqueue and PreFilter skip it.
				continue
			}
		default:
			return refuse(fmt.Sprintf("has claim %q with neither resourceClaimName nor resourceClaimTemplateName: DynamicResources' PreEnqueue keeps the pod out of the scheduling queue, and no scheduling cycle runs", pc.Name))
		}
		rc := claims[Key(pod.Namespace, name)]
		switch {
		case name == "":
			return refuse(fmt.Sprintf("has claim %q from a template, and status.resourceClaimStatuses names no ResourceClaim made for it yet: DynamicResources' PreEnqueue keeps the pod out of the scheduling queue until one is, and no scheduling cycle runs", pc.Name))
		case rc == nil:
			return refuse(fmt.Sprintf("has claim %q, and the cluster holds no ResourceClaim %s: DynamicResources' PreEnqueue keeps the pod out of the scheduling queue until it exists, and no scheduling cycle runs", pc.Name, name))
		case rc.DeletionTimestamp != nil:
			return refuse(fmt.Sprintf("has claim %q, and ResourceClaim %s is being deleted: DynamicResources' PreEnqueue keeps the pod out of the scheduling queue, and no scheduling cycle runs", pc.Name, name))
		case fromTemplate && !metav1.IsControlledBy(rc, pod):
			return refuse(fmt.Sprintf("has claim %q from a template, and ResourceClaim %s was not made for it (the pod is not its controller): DynamicResources' PreEnqueue keeps the pod out of the scheduling queue, and no scheduling cycle runs", pc.Name, name))
		case rc.Status.Allocation == nil:
			continue
		}
		if r := rc.Status.ReservedFor; len(r) == 0 || (len(r) == 1 && r[0].UID == pod.UID) {
			return refuse(fmt.Sprintf("has ResourceClaim %s allocated and reserved for no other pod, which DynamicResources' own PostFilter deallocates before DefaultPreemption runs", name))
		}
	}
	return nil
}

// ExtendedResourceClaimGaps is what an implementation that models
// DynamicResources' claim for extended resources (reference, optimized)
// refuses of it: a claim of the cluster made for pod's extended resources
// in an earlier cycle (findExtendedResourceClaim: annotated, controlled
// by the pod), which DynamicResources' Filter fails and its own PostFilter
// deletes before DefaultPreemption runs; and an extended resource whose
// DeviceClass depends on the order kube-scheduler's informer lists the
// classes in (draext.Resolver.Ambiguous). A pod with
// status.extendedResourceClaimStatus is DRACycleGaps'.
func ExtendedResourceClaimGaps(c *Cluster, pod *v1.Pod) *Unmodelled {
	if len(c.DeviceClasses) == 0 {
		// No class backs a resource or makes one ambiguous; the pod's
		// requests (a deep copy) are not worth reading.
		return nil
	}
	who := "pod " + Key(pod.Namespace, pod.Name)
	r := draext.NewResolver(c.DeviceClasses)
	reqs := draext.PodRequests(pod)
	names := make([]string, 0, len(reqs))
	for name, q := range reqs {
		if !q.IsZero() && draext.IsDRAExtendedResourceName(name) {
			names = append(names, string(name))
		}
	}
	sort.Strings(names)
	for _, name := range names {
		if why := r.Ambiguous(v1.ResourceName(name)); why != "" {
			return &Unmodelled{Feature: "dynamic resource allocation", Object: who, Detail: fmt.Sprintf("asks for extended resource %s: %s", name, why)}
		}
	}
	if !r.Backed(reqs) {
		return nil
	}
	if rc := draext.ExistingClaim(pod, c.ResourceClaims); rc != nil {
		return &Unmodelled{Feature: "dynamic resource allocation", Object: who,
			Detail: fmt.Sprintf("asks for extended resources a DeviceClass backs, and ResourceClaim %s was made for them in an earlier cycle: DynamicResources' Filter fails every node on it, and its own PostFilter deletes it before DefaultPreemption runs", Key(rc.Namespace, rc.Name))}
	}
	return nil
}

// ClaimReleaseGap reports a pod with resource claims, or asking for an
// extended resource a DeviceClass of c backs, under a configuration that
// asks for another release than the current one: an implementation that
// models DynamicResources as CurrentRelease runs it refuses it.
func ClaimReleaseGap(c *Cluster, pod *v1.Pod, cfg Config) *Unmodelled {
	if pod == nil || cfg.Release == "" || cfg.Release == CurrentRelease {
		return nil
	}
	detail := ""
	switch {
	case len(pod.Spec.ResourceClaims) > 0:
		detail = "has resource claims, modelled as " + CurrentRelease + " allocates them"
	case c != nil && draext.NewResolver(c.DeviceClasses).Backed(draext.PodRequests(pod)):
		detail = "asks for an extended resource a DeviceClass backs, modelled as " + CurrentRelease + " allocates it (DRAExtendedResource)"
	default:
		return nil
	}
	return &Unmodelled{Feature: "dynamic resource allocation at release " + cfg.Release, Object: "pod " + Key(pod.Namespace, pod.Name), Detail: detail}
}

// antiAffinityAgainst finds a required anti-affinity term of existing that
// could reject pod: its selector matches pod's labels and its namespaces
// may hold pod (a namespaceSelector is taken to hold every namespace).
func antiAffinityAgainst(existing, pod *v1.Pod) (v1.PodAffinityTerm, bool) {
	a := existing.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil {
		return v1.PodAffinityTerm{}, false
	}
	for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if term.LabelSelector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		inNamespace := term.NamespaceSelector != nil
		if len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
			inNamespace = existing.Namespace == pod.Namespace
		}
		for _, ns := range term.Namespaces {
			inNamespace = inNamespace || ns == pod.Namespace
		}
		if inNamespace {
			return term, true
		}
	}
	return v1.PodAffinityTerm{}, false
}
