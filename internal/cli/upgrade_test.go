package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/conformance"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
)

// writeProblem writes c and p as a dump and a pod file, as kubectl would
// give them, and returns their paths.
func writeProblem(t *testing.T, c *preempt.Cluster, p *v1.Pod) (string, string) {
	t.Helper()
	dir := t.TempDir()
	cb, err := synth.ListYAML(c)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := synth.PodYAML(p)
	if err != nil {
		t.Fatal(err)
	}
	cf, pf := filepath.Join(dir, "cluster.yaml"), filepath.Join(dir, "pod.yaml")
	if err := os.WriteFile(cf, cb, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pf, pb, 0o644); err != nil {
		t.Fatal(err)
	}
	return cf, pf
}

func runUpgradeJSON(t *testing.T, c *preempt.Cluster, p *v1.Pod) (UpgradeJSON, int) {
	t.Helper()
	return runUpgradeFrom(t, "v1.36.3", c, p)
}

func runUpgradeFrom(t *testing.T, from string, c *preempt.Cluster, p *v1.Pod) (UpgradeJSON, int) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build upstream@" + from + " with")
	}
	cf, pf := writeProblem(t, c, p)
	stdout, stderr, code := runCLI(t, "upgrade", "-cluster", cf, "-pod", pf, "-from", from, "-to", preempt.CurrentRelease, "-now", "2026-01-01T01:00:00Z", "-o", "json")
	var res UpgradeJSON
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, stdout, stderr)
	}
	return res, code
}

func causes(res UpgradeJSON) string {
	var out []string
	for _, c := range res.Causes {
		out = append(out, string(c.Switch)+":"+c.Explains)
	}
	return strings.Join(out, ",")
}

// Overlapping PodDisruptionBudgets (docs/upstream-findings.md's cluster):
// v1.36.3 picks n2, v1.37.2 n1; upgrade names the PDB rule, and the new
// Success message.
func TestUpgradeNamesThePDBRule(t *testing.T) {
	c, p := conformance.OverlappingPDBs(testobj.Epoch.Add(time.Hour))
	res, code := runUpgradeJSON(t, c, p)
	if code != ExitDiffer || !res.DecisionChanged || !res.Explained {
		t.Fatalf("exit %d, %+v", code, res)
	}
	if res.Decisions[0].NominatedNode != "n2" || res.Decisions[1].NominatedNode != "n1" {
		t.Errorf("nodes %q then %q, want n2 then n1", res.Decisions[0].NominatedNode, res.Decisions[1].NominatedNode)
	}
	if got, want := causes(res), "PDBStopAtFirstViolation:decision,SuccessMessage:message"; got != want {
		t.Errorf("causes %s, want %s", got, want)
	}
}

// The namespace-less dump of issue 18: v1.36.3 preempts other/a; v1.37.2
// schedules the pod without preemption.
func TestUpgradeNamesTheNamespaceSelectorFix(t *testing.T) {
	c, p := conformance.NamespaceLess(testobj.Epoch.Add(time.Hour))
	res, code := runUpgradeJSON(t, c, p)
	if code != ExitDiffer || !res.DecisionChanged || !res.Explained {
		t.Fatalf("exit %d, %+v", code, res)
	}
	if res.Decisions[0].Status != preempt.Success || res.Decisions[1].Status != preempt.Schedulable {
		t.Errorf("%s then %s, want Success then Schedulable", res.Decisions[0].Status, res.Decisions[1].Status)
	}
	if got, want := causes(res), "NamespaceSelectorResolved:decision"; got != want {
		t.Errorf("causes %s, want %s", got, want)
	}
}

// Across two releases, v1.35.4 to the current: the switches of both hops
// explain it. v1.35.4 counts the resized pod's pod-level spec and
// schedules the preemptor; v1.37.2 counts its actuated 2 cpu and
// preempts, with v1.37's Success message.
func TestUpgradeAcrossTwoReleases(t *testing.T) {
	c, p := conformance.PodLevelResized(testobj.Epoch.Add(time.Hour))
	res, code := runUpgradeFrom(t, "v1.35.4", c, p)
	if code != ExitDiffer || !res.DecisionChanged || !res.Explained {
		t.Fatalf("exit %d, %+v", code, res)
	}
	if res.Decisions[0].Status != preempt.Schedulable || res.Decisions[1].Status != preempt.Success {
		t.Errorf("%s then %s, want Schedulable then Success", res.Decisions[0].Status, res.Decisions[1].Status)
	}
	if got, want := causes(res), "SuccessMessage:message,PodLevelResizeRequests:decision"; got != want {
		t.Errorf("causes %s, want %s", got, want)
	}
	// A preemptor needing a node-declared feature: v1.35.4 preempts,
	// v1.36.3 and later find no node.
	c, p = conformance.NodeDeclared(testobj.Epoch.Add(time.Hour))
	res, code = runUpgradeFrom(t, "v1.35.4", c, p)
	if code != ExitDiffer || !res.Explained || res.Decisions[0].Status != preempt.Success || res.Decisions[1].Status != preempt.Unschedulable {
		t.Fatalf("exit %d, %+v", code, res)
	}
	if got, want := causes(res), "NodeDeclaredFeatures:decision"; got != want {
		t.Errorf("causes %s, want %s", got, want)
	}
}

// The same decision: exit 0, nothing named.
func TestUpgradeSameDecision(t *testing.T) {
	stdout, stderr, code := runCLI(t, "upgrade", "-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml", "-now", "2026-01-01T00:00:00Z")
	// small's decision keeps its node and victims; only the message is new.
	if code != ExitOK || !strings.Contains(stdout, "the same decision, a different message") || !strings.Contains(stdout, "cause (message): SuccessMessage") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	_, stderr, code = runCLI(t, "upgrade", "-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml", "-from", preempt.CurrentRelease, "-to", "v1.36.3")
	if code != ExitBadInput || !strings.Contains(stderr, "must be an earlier release") {
		t.Errorf("backwards: exit %d, %s", code, stderr)
	}
	_, stderr, code = runCLI(t, "upgrade", "-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml", "-to", "v1.38.0")
	if code != ExitBadInput || !strings.Contains(stderr, `unknown release "v1.38.0"`) {
		t.Errorf("unknown release: exit %d, %s", code, stderr)
	}
}
