package conformance

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/preemptbench/preemptbench/internal/draext"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// TestGangVolumesGeneratorCovers: GenGangVolumes' draws give members each
// kind of competition (a ReadWriteOncePod claim two members use, CSI
// volumes on nodes with an attach limit, WaitForFirstConsumer claims the
// local volumes may bind, GPU claims, the claim the members share, a
// claim allocated with binding conditions, extended resources a
// DeviceClass backs asked by two members, a pod's claim for its extended
// resources holding devices), and
// for each kind some draws whose whole pod-group cycle (the reference's)
// decides otherwise than with the members' volumes and claims taken
// away: the members' storage matters to the decision, not only to the
// refusals.
func TestGangVolumesGeneratorCovers(t *testing.T) {
	drawn, changed := map[string]int{}, map[string]int{}
	gen := GenGangVolumes(8)
	for i := range 400 {
		in := gen.Example(i)
		if refusedGangMember(in) {
			drawn["refused by the reference"]++
			continue
		}
		kinds := competition(in)
		if !slices.ContainsFunc(in.Gang.Pods, func(p *v1.Pod) bool { return preempt.VolumeAndClaimGaps(in.Cluster, p) != nil }) {
			drawn["members without volumes or claims"]++
		}
		with, ok := cycleOf(t, in)
		if !ok {
			drawn["no cycle"]++
			continue
		}
		without, _ := cycleOf(t, stripMembers(in))
		differs := !cmp.Equal(with, without)
		for _, k := range kinds {
			drawn[k]++
			if differs {
				changed[k]++
			}
		}
		drawn["decision: "+string(with.Status)]++
	}
	t.Logf("drawn: %v", drawn)
	t.Logf("decision changed by the members' storage: %v", changed)
	for _, k := range []string{"RWOP claim of two members", "CSI volume under an attach limit", "WaitForFirstConsumer local claim", "GPU claim", "claim shared by members",
		"claim with binding conditions", "extended resources a class backs, two members", "a pod's extended-resource claim holding devices"} {
		if changed[k] == 0 {
			t.Errorf("no draw with %q whose decision its members' storage changes (%d drawn)", k, drawn[k])
		}
	}
	for _, s := range []string{"decision: Success", "decision: Unschedulable", "decision: Schedulable", "members without volumes or claims"} {
		if drawn[s] == 0 {
			t.Errorf("no draw reached %q", s)
		}
	}
}

// cycleOf is the reference's whole pod-group cycle on in, false when no
// cycle runs.
func cycleOf(t *testing.T, in Input) (preempt.PodGroupDecision, bool) {
	t.Helper()
	ev, err := reference.Impl{}.NewEvaluator(in.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	cs := harness.NewClient(in.Cluster, nil)
	for _, p := range in.Gang.Pods {
		_ = cs.Tracker().Add(p.DeepCopy())
	}
	d, err := harness.DecidePodGroup(context.Background(), reference.Impl{}, ev.(preempt.PodGroupPreempter), in.Cluster, in.Gang, cs)
	return d, err == nil
}

// stripMembers is in with its gang's members' volumes, claims and
// requests of extended resources a DeviceClass backs taken away.
func stripMembers(in Input) Input {
	out := cloneInput(in)
	r := draext.NewResolver(out.Cluster.DeviceClasses)
	for _, p := range out.Gang.Pods {
		p.Spec.Volumes, p.Spec.ResourceClaims = nil, nil
		for i := range p.Spec.Containers {
			p.Spec.Containers[i].Resources.Claims = nil
			for name := range p.Spec.Containers[i].Resources.Requests {
				if r.Class(name) != nil {
					delete(p.Spec.Containers[i].Resources.Requests, name)
				}
			}
		}
	}
	return out
}

// competition names what in's members compete for.
func competition(in Input) []string {
	pvcs := map[string]*v1.PersistentVolumeClaim{}
	for _, c := range in.Cluster.PVCs {
		pvcs[c.Name] = c
	}
	limited := false
	for _, n := range in.Cluster.CSINodes {
		for _, d := range n.Spec.Drivers {
			limited = limited || d.Allocatable != nil && d.Allocatable.Count != nil
		}
	}
	uses := map[string]int{}
	var out []string
	add := func(k string) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	for _, p := range in.Gang.Pods {
		for _, vol := range p.Spec.Volumes {
			if vol.PersistentVolumeClaim == nil {
				continue
			}
			c := pvcs[vol.PersistentVolumeClaim.ClaimName]
			if c == nil {
				continue
			}
			if slices.Contains(c.Spec.AccessModes, v1.ReadWriteOncePod) {
				if uses["pvc/"+c.Name]++; uses["pvc/"+c.Name] == 2 {
					add("RWOP claim of two members")
				}
			}
			if c.Spec.VolumeName != "" && limited && *c.Spec.StorageClassName == "wffc-csi" {
				add("CSI volume under an attach limit")
			}
			if c.Spec.VolumeName == "" && *c.Spec.StorageClassName == "wffc-local" {
				add("WaitForFirstConsumer local claim")
			}
		}
		for _, rc := range p.Spec.ResourceClaims {
			add("GPU claim")
			if *rc.ResourceClaimName == "gang-shared" {
				if uses["gang-shared"]++; uses["gang-shared"] == 2 {
					add("claim shared by members")
				}
			}
			if claimHasBindingConditions(in.Cluster, p.Namespace, *rc.ResourceClaimName) {
				add("claim with binding conditions")
			}
		}
		if draext.NewResolver(in.Cluster.DeviceClasses).Backed(draext.PodRequests(p)) {
			if uses["extended"]++; uses["extended"] == 2 {
				add("extended resources a class backs, two members")
			}
		}
	}
	if uses["extended"] > 0 && slices.ContainsFunc(in.Cluster.ResourceClaims, func(rc *resourcev1.ResourceClaim) bool {
		return rc.Annotations[resourcev1.ExtendedResourceClaimAnnotation] == "true"
	}) {
		add("a pod's extended-resource claim holding devices")
	}
	return out
}

// claimHasBindingConditions: claim namespace/name of c is allocated with
// a device that has binding conditions.
func claimHasBindingConditions(c *preempt.Cluster, namespace, name string) bool {
	for _, rc := range c.ResourceClaims {
		if rc.Namespace != namespace || rc.Name != name || rc.Status.Allocation == nil {
			continue
		}
		for _, r := range rc.Status.Allocation.Devices.Results {
			if len(r.BindingConditions) > 0 {
				return true
			}
		}
	}
	return false
}

// TestGangVolumesOptimizedRefusesAsReference: on GenGangVolumes' draws,
// optimized refuses a gang for a member (UnmodelledPodGroup, its
// gangMemberGaps) exactly when and as the reference does, and neither
// refuses a member for extended resources a DeviceClass backs or for a
// claim allocated with binding conditions, which both model in a gang
// (drawn: the counts logged). A refusal of optimized's alone
// (compositeCycle) is left out.
func TestGangVolumesOptimizedRefusesAsReference(t *testing.T) {
	refused, drawn := map[string]int{}, map[string]int{}
	gen := GenGangVolumes(8)
	for i := range 400 {
		in := gen.Example(i)
		mine, _ := in.Gang.OfDefaultScheduler()
		kept, _ := mine.WithoutDeleting()
		for _, k := range competition(in) {
			drawn[k]++
		}
		ref := (reference.Impl{}).UnmodelledPodGroup(in.Cluster, kept)
		opt := (optimized.Impl{}).UnmodelledPodGroup(in.Cluster, kept)
		if opt != nil && strings.Contains(opt.Feature, "CompositePodGroup") {
			continue
		}
		if diff := cmp.Diff(ref, opt); diff != "" {
			t.Errorf("example %d: refusals differ (-reference +optimized):\n%s", i, diff)
		}
		if ref != nil {
			refused[ref.Detail]++
			if strings.Contains(ref.Detail, "binding conditions") || strings.Contains(ref.Detail, "which DeviceClass") || strings.Contains(ref.Detail, "a DeviceClass's") {
				t.Errorf("example %d: the reference refuses a member modelled in a gang: %v", i, ref)
			}
		}
	}
	t.Logf("drawn: %v", drawn)
	t.Logf("refused: %v", refused)
	for _, k := range []string{"claim with binding conditions", "extended resources a class backs, two members"} {
		if drawn[k] == 0 {
			t.Errorf("no draw with %q", k)
		}
	}
}
