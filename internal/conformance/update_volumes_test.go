package conformance

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/upstream"
)

// Found by TestVolumesUpdate (upstream, 571st check): the adapter's
// Update built its scheduler cache from the cluster's pods and let the
// cache's pending PVC reference counts (every initial pod's) land on a
// snapshot that already counted them, so a ReadWriteOncePod claim whose
// only holder an Update removed stayed in use ("node(s) unavailable due
// to PersistentVolumeClaim with ReadWriteOncePod access mode already
// in-use by another pod"), where a new evaluator of the same cluster
// finds it free. The holder, low-n1, is removed; the preemptor uses the
// claim.
func TestUpdateFreesAReadWriteOncePodClaim(t *testing.T) {
	build := func() Input {
		c := vbCluster()
		c.PVCs = []*v1.PersistentVolumeClaim{vbClaim("rwop", "csi", "pv-rwop", "", v1.ReadWriteOncePod)}
		c.PVs = []*v1.PersistentVolume{vbVolume("pv-rwop", "csi", "rwop", "", "", v1.ReadWriteOncePod)}
		c.Pods[0].Spec.Volumes = []v1.Volume{vbClaimVolume("data", "rwop")}
		return Input{Cluster: c, Request: &preempt.Request{Pod: vbPod(vbClaimVolume("data", "rwop"))(), Config: preempt.DefaultConfig(), Now: now}}
	}
	for _, impl := range []preempt.Implementation{harness.Deterministic(upstream.Impl{}), optimized.Impl{}} {
		t.Run(impl.Name(), func(t *testing.T) {
			in := build()
			if in.Cluster.Pods[0].Name != "low-n1" {
				t.Fatalf("pod 0 is %s", in.Cluster.Pods[0].Name)
			}
			if got := CheckUpdate(t, in, ChangeSpec{Remove: []int{0}, Bind: -1}, impl); got != Compared {
				t.Fatalf("outcome %v, want compared", got)
			}
		})
	}
}
