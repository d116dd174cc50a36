package conformance

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/preemptbench/preemptbench/preempt"
)

// GenGangVolumes draws gang problems (GenGang's draws first, unchanged)
// whose cluster has storage (VolumeSpec), devices (ClaimSpec) or both,
// and whose pods and gang members have volumes and resource claims: the
// members compete for them (a ReadWriteOncePod claim two members use, a
// node's CSI attach limit, the local volumes WaitForFirstConsumer claims
// bind to, GPUs, one claim the members share) as the pod-group cycle
// meets them (reference/gang_reserve.go). A member may draw none, so a
// few gangs have no volume or claim at all.
func GenGangVolumes(maxNodes int) *rapid.Generator[Input] {
	return rapid.Custom(func(t *rapid.T) Input {
		s := genGangSpec(t, maxNodes)
		mode := rapid.IntRange(0, 2).Draw(t, "gangStorage") // 0 volumes, 1 claims, 2 both
		if mode != 1 {
			s.Volumes = genVolumes(t, &s)
			// Claim c0, which the members' first volume sets name, more
			// often ReadWriteOncePod or WaitForFirstConsumer on local
			// volumes: the kinds members compete for.
			switch rapid.IntRange(0, 3).Draw(t, "firstClaim") {
			case 0:
				s.Volumes.Claims[0] = slices.Index(claimKinds, claimRWOP)
			case 1:
				s.Volumes.Claims[0] = slices.Index(claimKinds, claimWFFCLocal)
			}
			// A third of the gangs give every member the first's volumes
			// (its claims then shared by all).
			same := rapid.IntRange(0, 2).Draw(t, "membersSameVolumes") == 0
			for i := range s.Gang.Members {
				// Index 4 is no volume, 5 to 8 claims (shared among
				// members modulo the claims), the rest inline volumes.
				set := rapid.IntRange(4, len(volumeSets)-1).Draw(t, "memberVolumes")
				if same && i > 0 {
					set = s.Volumes.Members[0]
				}
				s.Volumes.Members = append(s.Volumes.Members, set)
			}
		}
		if mode != 0 {
			s.Claims = genClaims(t, &s)
			for range s.Gang.Members {
				var kinds []int
				fewest := 0
				if mode == 1 {
					fewest = 1 // with claims alone, every member has one
				}
				for range rapid.IntRange(fewest, 2).Draw(t, "memberClaims") {
					kinds = append(kinds, rapid.IntRange(0, len(memberClaimKinds)-1).Draw(t, "memberClaim"))
				}
				s.Claims.Members = append(s.Claims.Members, kinds)
			}
		}
		if mode != 0 || rapid.IntRange(0, 2).Draw(t, "devicesWithVolumes") == 0 {
			// Extended resources a DeviceClass backs: the members may ask
			// for them (DynamicResources makes each a claim, which
			// Reserve allocates in flight), and the held claims may be
			// their holders' claims for them.
			if s.Claims == nil {
				s.Claims = genClaims(t, &s)
			}
			s.Claims.HeldExtended = rapid.IntRange(0, 3).Draw(t, "heldExtended") == 0
			for range s.Gang.Members {
				s.Claims.MemberExtended = append(s.Claims.MemberExtended, rapid.IntRange(0, len(memberExtendedKinds)-1).Draw(t, "memberExtended"))
			}
		}
		return gangInput(s)
	})
}

// claimGangShared is a member's claim kind: the claim "gang-shared", one
// GPU, unallocated, used by every member that draws it (the first to be
// placed allocates it, the others find it allocated on that node).
const claimGangShared = claimAdminAccess + 1

// memberClaimKinds are the kinds of a member's claims: the preemptor's,
// and the claim the members share.
var memberClaimKinds = append(slices.Clone(preemptorClaimKinds), claimGangShared, claimGangShared)

// memberExtendedKinds are what a member asks of the extended resources a
// DeviceClass may back: nothing; one or two devices of class gpu by its
// implicit name; one ExtendedResource, which class gpu backs when
// ClaimSpec.Extended says so and some nodes may advertise (a device
// plugin's).
var memberExtendedKinds = []struct {
	name  v1.ResourceName
	count int64
}{
	{}, {}, {"deviceclass.resource.kubernetes.io/gpu", 1}, {"deviceclass.resource.kubernetes.io/gpu", 2}, {ExtendedResource, 1},
}

// buildMembers gives the gang's members their volumes (Members).
func (v *VolumeSpec) buildMembers(members []*v1.Pod) {
	for i, p := range members {
		if i < len(v.Members) {
			p.Spec.Volumes = append(p.Spec.Volumes, volumesOf(v.Members[i], len(v.Claims))...)
		}
	}
}

// buildMembers adds the gang's members' claims to c and gives the members
// their claims (Members): claims "m<i>-c<j>" of their own, the held claims
// of c's pods in the members' namespace, "gang-shared".
func (cs *ClaimSpec) buildMembers(c *preempt.Cluster, members []*v1.Pod) {
	for i, p := range members {
		if i >= len(cs.MemberExtended) {
			break
		}
		if k := memberExtendedKinds[at(cs.MemberExtended[i], len(memberExtendedKinds))]; k.count > 0 {
			ctr := &p.Spec.Containers[0]
			if ctr.Resources.Requests == nil {
				ctr.Resources.Requests = v1.ResourceList{}
			}
			ctr.Resources.Requests[k.name] = *resource.NewQuantity(k.count, resource.DecimalSI)
		}
	}
	shared := false
	for i, p := range members {
		if i >= len(cs.Members) {
			continue
		}
		var shareable []string
		for _, rc := range c.ResourceClaims {
			if rc.Namespace == p.Namespace && strings.HasPrefix(rc.Name, "held-") {
				shareable = append(shareable, rc.Name)
			}
		}
		used := map[string]bool{}
		for j, kind := range cs.Members[i] {
			podClaim := fmt.Sprintf("c%d", j)
			k := memberClaimKinds[at(kind, len(memberClaimKinds))]
			if k != claimGangShared {
				addClaim(c, p, podClaim, fmt.Sprintf("m%d-c%d", i, j), k, shareable, i+j, used)
				continue
			}
			if used["gang-shared"] {
				continue
			}
			used["gang-shared"] = true
			if !shared {
				shared = true
				addClaim(c, p, podClaim, "gang-shared", claimOneGPU, nil, 0, nil)
				continue
			}
			usesClaim(p, podClaim, "gang-shared")
		}
	}
}
