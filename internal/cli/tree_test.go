package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/releases"
)

// currentTree copies k8s.io/kubernetes at the current release from the
// module cache into a directory of t named name: a kubernetes tree, as
// upstream@DIR takes it.
func currentTree(t *testing.T, name string) string {
	t.Helper()
	if os.Getenv(releases.TreeSuiteEnv) == "" {
		t.Skipf("set %s=1: it copies k8s.io/kubernetes %s from the module cache, builds it as upstream@DIR (minutes the first time) and fuzzes it", releases.TreeSuiteEnv, preempt.CurrentRelease)
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("go env: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "k8s.io", "kubernetes@"+preempt.CurrentRelease)
	dst := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
	return dst
}

// plant applies a one-line edit to file (relative to tree): old becomes
// new, once.
func plant(t *testing.T, tree, file, old, new string) {
	t.Helper()
	p := filepath.Join(tree, filepath.FromSlash(file))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(b), old) != 1 {
		t.Fatalf("%s holds %q %d times, want once", file, old, strings.Count(string(b), old))
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A copy of the current release's tree, unchanged, decides as the release
// on a minute of drawn problems (exit 0); the same with two criteria of
// pickOneNodeForPreemption swapped (fewest PDB violations and lowest
// highest priority) is caught (exit 1) with a problem of a few nodes,
// written as files on which decide and upgrade show the difference.
func TestUpgradeFindsAPlantedChange(t *testing.T) {
	// The trees' modules and binaries (some 100 MB each, under names
	// that hash the trees' temporary paths) go with the test.
	t.Setenv(releases.CacheEnv, t.TempDir())
	unchanged := currentTree(t, "kubernetes")
	stdout, stderr, code := runCLI(t, "upgrade", "-from", preempt.CurrentRelease, "-to", unchanged, "-fuzztime", "60s")
	if code != ExitOK || !strings.Contains(stdout, "every decision the same or explained") {
		t.Fatalf("unchanged tree: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("unchanged: %s", strings.TrimSpace(stdout))

	planted := currentTree(t, "planted")
	plant(t, planted, "pkg/scheduler/framework/preemption/preemption.go",
		"\t\t\tminNumPDBViolatingScoreFunc,\n\t\t\t// A node with a minimum highest priority victim is preferable.\n\t\t\tminHighestPriorityScoreFunc,",
		"\t\t\tminHighestPriorityScoreFunc,\n\t\t\t// A node with a minimum highest priority victim is preferable.\n\t\t\tminNumPDBViolatingScoreFunc,")
	out := filepath.Join(t.TempDir(), "found")
	stdout, stderr, code = runCLI(t, "upgrade", "-from", preempt.CurrentRelease, "-to", planted, "-fuzztime", "60s", "-out", out, "-o", "json")
	var res struct {
		UpgradeJSON
		Tried   int
		Dir     string
		Command []string
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != ExitDiffer {
		t.Fatalf("planted tree: exit %d (%v)\n%s\n%s", code, err, stdout, stderr)
	}
	if !res.DecisionChanged || res.Explained || res.Dir != out {
		t.Errorf("planted tree: %+v", res)
	}
	// The problem as files: at most a few nodes, and decide and upgrade
	// on them show the difference.
	b, err := os.ReadFile(filepath.Join(out, "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	nodes := strings.Count(string(b), "\n  kind: Node\n")
	if nodes == 0 || nodes > 5 {
		t.Errorf("the problem found has %d nodes, want 1 to 5", nodes)
	}
	args := res.Command[2:] // compare upgrade ...
	_, _, code = runCLI(t, append(append([]string{"upgrade"}, args...), "-from", preempt.CurrentRelease, "-to", planted)...)
	if code != ExitDiffer {
		t.Errorf("upgrade on the files: exit %d, want %d", code, ExitDiffer)
	}
	decideArgs := []string{"decide", "-impl", "upstream," + "upstream@" + planted, "-o", "text"}
	for i := 0; i < len(args); i++ {
		switch {
		case strings.Contains(args[i], "="): // -async=false
			decideArgs = append(decideArgs, args[i])
		case args[i] == "-from" || args[i] == "-to":
			i++
		case i+1 < len(args):
			decideArgs = append(decideArgs, args[i], args[i+1])
			i++
		}
	}
	stdout, stderr, code = runCLI(t, decideArgs...)
	if code != ExitDiffer || !strings.Contains(stdout, "DISAGREE") {
		t.Errorf("decide on the files: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("planted: %d problems drawn, the smallest failing %d nodes; %s vs %s", res.Tried, nodes, summary(res.Decisions[0]), summary(res.Decisions[1]))
}

// slowdownPlant is a sort made quadratic in a copy of the current
// release's DryRunPreemption: a bubble sort of the potential nodes by
// their listed position, which never changes their order (so no decision
// changes) and costs n²/2 comparisons of two map lookups each.
const slowdownPlant = `	nodeStatuses := framework.NewDefaultNodeToStatus()

	pos := make(map[string]int, len(potentialNodes))
	for i, n := range potentialNodes {
		pos[n.Node().Name] = i
	}
	for i := range potentialNodes {
		for j := 0; j+1 < len(potentialNodes)-i; j++ {
			if pos[potentialNodes[j].Node().Name] > pos[potentialNodes[j+1].Node().Name] {
				potentialNodes[j], potentialNodes[j+1] = potentialNodes[j+1], potentialNodes[j]
			}
		}
	}
`

// compare bench runs a copy of the current release's tree and the same
// with a sort made quadratic (slowdownPlant) as children, interleaved, and
// compare gate, the first as base and the second as head, fails on the
// second's sec/op; with the two swapped (a speed-up) it passes.
func TestGateCatchesAPlantedSlowdown(t *testing.T) {
	t.Setenv(releases.CacheEnv, t.TempDir())
	base := currentTree(t, "kubernetes")
	slow := currentTree(t, "slowed")
	plant(t, slow, "pkg/scheduler/framework/preemption/preemption.go",
		"\tnodeStatuses := framework.NewDefaultNodeToStatus()\n", slowdownPlant)
	raw := filepath.Join(t.TempDir(), "trees.txt")
	stdout, stderr, code := runCLI(t, "bench", "-nodes", "2000", "-count", "6", "-impl", "upstream@"+base+",upstream@"+slow, "-raw", raw)
	if code != ExitOK {
		t.Fatalf("bench: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("bench:\n%s", stdout)
	stdout, stderr, code = runCLI(t, "gate", "-base", raw, "-head", raw, "-base-impl", "upstream@kubernetes", "-head-impl", "upstream@slowed")
	if code != ExitDiffer || !regexp.MustCompile(`(?m)^regressions:\n  Decide/shape=basic/nodes=2000/impl=\* sec/op: `).MatchString(stdout) {
		t.Fatalf("gate, the slowed tree as head: exit %d, want %d with a sec/op regression\n%s\n%s", code, ExitDiffer, stdout, stderr)
	}
	t.Logf("gate:\n%s", stdout)
	stdout, stderr, code = runCLI(t, "gate", "-base", raw, "-head", raw, "-base-impl", "upstream@slowed", "-head-impl", "upstream@kubernetes")
	if strings.Contains(stdout, "sec/op: ") {
		t.Errorf("gate, the slowed tree as base: a sec/op regression (exit %d)\n%s\n%s", code, stdout, stderr)
	}
}
