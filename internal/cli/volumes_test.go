package cli

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/preempt"
)

// compare decide -impl upstream on testdata/volumes, whose CSI nodes,
// driver and VolumeAttachment the loader reads: each pod once panicked the
// adapter (NodeVolumeLimits without a CSI manager) or answered
// "Preemption is not helpful", depending on the run. The wanted answers
// are worked by hand (the adapter's filters are checked against
// kube-scheduler's in upstream's TestVolumesAsKubeScheduler); each pod is
// asked three times.
func TestDecideUpstreamVolumes(t *testing.T) {
	dir := t.TempDir()
	cluster := filepath.Join("testdata", "volumes", "cluster.yaml")
	for _, tc := range []struct {
		claim, node, victim string
		candidates          []string
	}{
		// n1's attach limit is its victim's volume; n3's a
		// VolumeAttachment's, which no preemption frees.
		{claim: "data", node: "n1", victim: "low-n1", candidates: []string{"n1", "n2"}},
		// ReadWriteOncePod, in use by the pod on n2.
		{claim: "once", node: "n2", victim: "low-n2", candidates: []string{"n2"}},
		// Unbound, WaitForFirstConsumer: the only volume is on n2.
		{claim: "local", node: "n2", victim: "low-n2", candidates: []string{"n2"}},
		// Bound to a volume with node affinity to n3.
		{claim: "pinned", node: "n3", victim: "low-n3", candidates: []string{"n3"}},
	} {
		t.Run(tc.claim, func(t *testing.T) {
			pod := writeFile(t, dir, tc.claim+".yaml", okPod+`  volumes: [{name: v, persistentVolumeClaim: {claimName: `+tc.claim+`}}]
`)
			for run := 0; run < 3; run++ {
				stdout, stderr, code := runCLI(t, "decide", "-cluster", cluster, "-pod", pod, "-impl", "upstream", "-now", testNow)
				if code != ExitOK || stderr != "" {
					t.Fatalf("run %d: exit %d, stderr %q", run, code, stderr)
				}
				var got DecisionJSON
				if err := json.Unmarshal([]byte(stdout), &got); err != nil {
					t.Fatal(err)
				}
				var cands []string
				for _, c := range got.Candidates {
					cands = append(cands, c.Node)
				}
				if got.NominatedNode != tc.node || len(got.Victims) != 1 || got.Victims[0].Name != tc.victim {
					t.Errorf("run %d: nominated %q, victims %v, want %s with victim %s", run, got.NominatedNode, got.Victims, tc.node, tc.victim)
				}
				if diff := cmp.Diff(tc.candidates, cands); diff != "" {
					t.Errorf("run %d: candidates (-want +got):\n%s", run, diff)
				}
			}
		})
	}
	// Reference and optimized model the volume filters (issue 32): every
	// implementation gives upstream's decision on each pod (exit 0), and
	// under an earlier release (-release) the decision of that release's
	// own code, its child (the volume filters' changes are switches:
	// MissingCSIDriver, PortworxMigrated).
	for _, claim := range []string{"data", "once", "local", "pinned"} {
		pod := writeFile(t, dir, "all-"+claim+".yaml", okPod+"  volumes: [{name: v, persistentVolumeClaim: {claimName: "+claim+"}}]\n")
		if stdout, stderr, code := runCLI(t, "decide", "-cluster", cluster, "-pod", pod, "-impl", "all", "-now", testNow, "-o", "text"); code != ExitOK {
			t.Errorf("%s: -impl all: exit %d, stdout %.600q, stderr %.300q; want 0 (agreement)", claim, code, stdout, stderr)
		}
		for _, r := range preempt.Releases[:len(preempt.Releases)-1] {
			if stdout, stderr, code := runCLI(t, "decide", "-cluster", cluster, "-pod", pod, "-impl", "upstream@"+r+",reference,optimized", "-release", r, "-now", testNow, "-o", "text"); code != ExitOK {
				t.Errorf("%s -release %s: exit %d, stdout %.600q, stderr %.300q; want 0 (agreement with upstream@%s)", claim, r, code, stdout, stderr, r)
			}
		}
	}
}
