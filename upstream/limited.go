package upstream

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

var _ preempt.Limited = Impl{}

// Unmodelled: the adapter runs every filter of the default profile, and
// DefaultPreemption, the one PostFilter plugin it runs. A pod
// DynamicResources looks at (preempt.ClaimGaps) is answered where this
// release's adapter feeds its DRA manager the cluster's resource.k8s.io
// objects (feedsDRA), except when DynamicResources' own PostFilter, which
// kube-scheduler runs before DefaultPreemption (v1.37.2's default
// profile), could act on the pod (draPostFilterGap): that is refused
// rather than answered.
func (Impl) Unmodelled(c *preempt.Cluster, pod *v1.Pod) *preempt.Unmodelled {
	if u := missingDriversGap(c, pod); u != nil {
		return u
	}
	u := preempt.ClaimGaps(c, pod)
	if u == nil {
		return nil
	}
	if !feedsDRA {
		u.Detail += ", and the adapter's DynamicResources at this release is not fed the cluster's ResourceClaims, ResourceSlices and DeviceClasses"
		return u
	}
	return draPostFilterGap(c, pod)
}

// draPostFilterGap refuses a pod no scheduling cycle runs for (a claim
// DynamicResources' PreEnqueue waits for: not made from its template yet,
// missing, being deleted, or made from a template for another owner), and
// one DynamicResources' PostFilter could act on (v1.37.2's
// deallocateOrDeletePodClaims): one of its claims allocated and reserved
// for no other pod (which that PostFilter deallocates when the allocation
// is unavailable), or a claim made for its extended resources (which it
// deletes).
func draPostFilterGap(c *preempt.Cluster, pod *v1.Pod) *preempt.Unmodelled {
	who := "pod " + preempt.Key(pod.Namespace, pod.Name)
	if pod.Status.ExtendedResourceClaimStatus != nil {
		return &preempt.Unmodelled{Feature: "dynamic resource allocation", Object: who,
			Detail: "has a claim for its extended resources (status.extendedResourceClaimStatus), which DynamicResources' own PostFilter, run before DefaultPreemption, deletes"}
	}
	claims := map[string]*resourcev1.ResourceClaim{}
	for _, rc := range c.ResourceClaims {
		claims[preempt.Key(rc.Namespace, rc.Name)] = rc
	}
	for _, pc := range pod.Spec.ResourceClaims {
		// resourceclaim.Name: a claim from a template is the one
		// status.resourceClaimStatuses names, none when the entry names
		// none (no claim was needed), and none yet without an entry.
		name, listed := "", false
		if pc.ResourceClaimName != nil {
			name, listed = *pc.ResourceClaimName, true
		}
		for _, st := range pod.Status.ResourceClaimStatuses {
			if pc.ResourceClaimName == nil && st.Name == pc.Name {
				listed = true
				if st.ResourceClaimName != nil {
					name = *st.ResourceClaimName
				}
			}
		}
		if listed && name == "" {
			continue
		}
		rc := claims[preempt.Key(pod.Namespace, name)]
		switch {
		case name == "":
			return &preempt.Unmodelled{Feature: "dynamic resource allocation", Object: who,
				Detail: fmt.Sprintf("has claim %q from a template, and status.resourceClaimStatuses names no ResourceClaim made for it yet: DynamicResources' PreEnqueue keeps the pod out of the scheduling queue until one is, and no scheduling cycle runs", pc.Name)}
		case rc == nil:
			return &preempt.Unmodelled{Feature: "dynamic resource allocation", Object: who,
				Detail: fmt.Sprintf("has claim %q, and the cluster holds no ResourceClaim %s: DynamicResources' PreEnqueue keeps the pod out of the scheduling queue until it exists, and no scheduling cycle runs", pc.Name, name)}
		case rc.DeletionTimestamp != nil:
			return &preempt.Unmodelled{Feature: "dynamic resource allocation", Object: who,
				Detail: fmt.Sprintf("has claim %q, and ResourceClaim %s is being deleted: DynamicResources' PreEnqueue keeps the pod out of the scheduling queue, and no scheduling cycle runs", pc.Name, name)}
		case pc.ResourceClaimName == nil && !metav1.IsControlledBy(rc, pod):
			return &preempt.Unmodelled{Feature: "dynamic resource allocation", Object: who,
				Detail: fmt.Sprintf("has claim %q from a template, and ResourceClaim %s, which status.resourceClaimStatuses names, is not controlled by the pod: DynamicResources' PreEnqueue keeps the pod out of the scheduling queue, and no scheduling cycle runs", pc.Name, name)}
		case rc.Status.Allocation == nil:
			continue
		}
		if r := rc.Status.ReservedFor; len(r) == 0 || (len(r) == 1 && r[0].UID == pod.UID) {
			return &preempt.Unmodelled{Feature: "dynamic resource allocation", Object: who,
				Detail: fmt.Sprintf("has ResourceClaim %s allocated and reserved for no other pod, which DynamicResources' own PostFilter, run before DefaultPreemption, deallocates", name)}
		}
	}
	return nil
}

var _ preempt.ReleaseFixed = Impl{}

// UpstreamRelease is Version: the adapter runs that release's code and
// refuses a configuration asking for another's behaviour.
func (Impl) UpstreamRelease() string { return Version }

// asyncAPICallsGap: with SchedulerAsyncAPICalls kube-scheduler sends its
// API calls through an API dispatcher (the framework's APICacher), which
// the adapter's framework is built without: it would answer as if the
// gate were off.
func asyncAPICallsGap(cfg preempt.Config) *preempt.Unmodelled {
	if !cfg.FeatureGates["SchedulerAsyncAPICalls"] {
		return nil
	}
	return &preempt.Unmodelled{Feature: "feature gate SchedulerAsyncAPICalls", Object: "the configuration",
		Detail: "sets SchedulerAsyncAPICalls=true, and the adapter's framework has no API dispatcher (kube-scheduler's calls would go through one)"}
}

var (
	_ preempt.GateUseLimited  = Impl{}
	_ preempt.PodGroupLimited = Impl{}
)

// UnmodelledGateUse refuses SchedulerAsyncAPICalls (asyncAPICallsGap).
func (Impl) UnmodelledGateUse(_ *preempt.Cluster, _ *v1.Pod, cfg preempt.Config) *preempt.Unmodelled {
	return asyncAPICallsGap(cfg)
}

// UnmodelledPodGroup refuses SchedulerAsyncAPICalls (asyncAPICallsGap).
func (Impl) UnmodelledPodGroup(_ *preempt.Cluster, req *preempt.PodGroupRequest) *preempt.Unmodelled {
	return asyncAPICallsGap(req.Config)
}
