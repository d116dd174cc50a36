package releases_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/preemptbench/preemptbench/internal/conformance"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// The Volumes property at each earlier release: on problems with storage
// (conformance.GenVolumes, without pod groups and their gates: a release
// before preempt.PodGroupAPISince refuses them), the release's own code (its child) and optimized,
// both asked for that release, give the reference's filter phase and
// decision (conformance.CheckAgainstReference). The log counts the
// problems compared and those on which the reference's outcome (filter
// phase or decision) at the release changes with the volume switches
// (MissingCSIDriver, PortworxMigrated) set to the current release's.
// -rapid.checks sets the problems per release:
//
//	go test ./releases -run 'TestVolumesPropertyAtEarlierReleases' -rapid.checks=300 -v
func TestVolumesPropertyAtEarlierReleases(t *testing.T) {
	ctx := context.Background()
	for _, r := range registry.Releases() {
		t.Run(r.Version, func(t *testing.T) {
			child := releaseAt(t, r.Version)
			counts := map[string]int{}
			rapid.Check(t, func(rt *rapid.T) {
				in := dropGroups(conformance.GenVolumes(conformance.MaxVolumeNodes).Draw(rt, "input"))
				req := *in.Request
				req.Config.FeatureGates = nil // the generator's gates are the pod groups'
				in.Request = &req
				in = conformance.AtRelease(in, child)
				if !conformance.CheckAgainstReference(rt, in, child) {
					err := harness.Refusal(child, in.Cluster, in.Request.Pod)
					if err == nil {
						err = harness.GateRefusal(child, in.Cluster, in.Request.Pod, in.Request.Config)
					}
					counts["refused by the child: "+firstLine(fmt.Sprint(err))]++
					return
				}
				counts["compared"]++
				if conformance.CheckAgainstReference(rt, in, optimized.Impl{}) {
					counts["optimized compared"]++
				}
				// The volume switches set to the current release's: where
				// the decision changes, the child's answer needed them.
				cur := in.Request.Config
				cur.Switches = map[preempt.Switch]bool{preempt.SwitchMissingCSIDriver: true, preempt.SwitchPortworxMigrated: true}
				at, err1 := harness.Decide(ctx, reference.Impl{}, in.Cluster, in.Request.Pod, in.Request.Config, in.Request.Offset, in.Request.Now, in.Faults...)
				now, err2 := harness.Decide(ctx, reference.Impl{}, in.Cluster, in.Request.Pod, cur, in.Request.Offset, in.Request.Now, in.Faults...)
				if err1 == nil && err2 == nil && !cmp.Equal([]any{at.Filter, at.Decision}, []any{now.Filter, now.Decision}) {
					counts["the volume switches change the outcome"]++
				}
			})
			t.Logf("Volumes at %s: %v", r.Version, counts)
			if counts["compared"] == 0 {
				t.Errorf("no problem compared with %s", r.Name())
			}
		})
	}
}
