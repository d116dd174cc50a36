package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// explainGolden runs decide -explain on a generated scenario (or the
// cluster and pod of dir) and compares the text with testdata/explain/NAME.
func explainGolden(t *testing.T, name string, scenarioArgs []string, decideArgs ...string) {
	t.Helper()
	dir := t.TempDir()
	if _, stderr, code := runCLI(t, append([]string{"scenario", "-dir", dir}, scenarioArgs...)...); code != ExitOK {
		t.Fatalf("scenario: exit %d: %s", code, stderr)
	}
	args := append([]string{"decide", "-cluster", filepath.Join(dir, "cluster.yaml"), "-pod", filepath.Join(dir, "pod.yaml"), "-now", testNow, "-explain"}, decideArgs...)
	stdout, stderr, code := runCLI(t, append(args, "-o", "text")...)
	if code != ExitOK {
		t.Fatalf("decide: exit %d: %s", code, stderr)
	}
	text := stdout[strings.Index(stdout, "explanation ("):]
	golden := filepath.Join("testdata", "explain", name)
	if *update {
		if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), text); diff != "" {
		t.Errorf("explanation (-want +got):\n%s", diff)
	}

	// The JSON form holds every candidate and every node.
	stdout, stderr, code = runCLI(t, args...)
	if code != ExitOK {
		t.Fatalf("decide: exit %d: %s", code, stderr)
	}
	var d DecisionJSON
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatal(err)
	}
	checkExplanation(t, d)
}

// checkExplanation checks what holds for every explanation: one chosen
// candidate, the decision's; every other eliminated against a candidate;
// every node a candidate or explained once; the window's visits those of
// the dry run.
func checkExplanation(t *testing.T, d DecisionJSON) {
	t.Helper()
	ex := d.Explanation
	if ex == nil {
		t.Fatal("no explanation")
	}
	nodes := map[string]bool{}
	chosen := ""
	for _, c := range ex.Candidates {
		nodes[c.Node] = true
		switch {
		case c.Chosen:
			if chosen != "" {
				t.Errorf("two chosen candidates, %s and %s", chosen, c.Node)
			}
			chosen = c.Node
		case c.EliminatedBy == "" || c.Against == "":
			t.Errorf("candidate %s neither chosen nor eliminated", c.Node)
		}
	}
	if chosen != d.NominatedNode {
		t.Errorf("chosen %q, the decision nominated %q", chosen, d.NominatedNode)
	}
	visited := len(ex.Candidates)
	for _, n := range ex.NotCandidates {
		if nodes[n.Node] {
			t.Errorf("node %s explained twice", n.Node)
		}
		nodes[n.Node] = true
		if n.Stage == "dryRun" {
			visited++
		}
	}
	if ex.Window != nil && ex.Window.Visited != visited {
		t.Errorf("window visited %d, the dry run visited %d", ex.Window.Visited, visited)
	}
}

// 5000 nodes, 500 candidates equal on four criteria: the start time of the
// highest-priority victims decides, and 4500 nodes are never visited.
func TestDecideExplainBasic5000(t *testing.T) {
	explainGolden(t, "basic-5000.txt", []string{"-shape", "basic", "-nodes", "5000"})
}

// Every candidate ties on all five criteria: the final tie decides.
func TestDecideExplainTies(t *testing.T) {
	explainGolden(t, "ties-50.txt", []string{"-shape", "ties", "-nodes", "50"}, "-offset", "7")
}

// PDBs and mixed priorities: the early criteria decide.
func TestDecideExplainPDB(t *testing.T) {
	explainGolden(t, "pdb-20.txt", []string{"-shape", "pdb", "-nodes", "20"})
}

// Upstream breaks the final tie at random: its explanation names its own
// pick as chosen and the rest of the tie as lost to it.
func TestDecideExplainUpstreamTie(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := runCLI(t, "scenario", "-dir", dir, "-shape", "ties", "-nodes", "20"); code != ExitOK {
		t.Fatal(stderr)
	}
	stdout, stderr, code := runCLI(t, "decide", "-cluster", filepath.Join(dir, "cluster.yaml"), "-pod", filepath.Join(dir, "pod.yaml"), "-now", testNow, "-explain", "-impl", "all")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var ds []DecisionJSON
	if err := json.Unmarshal([]byte(stdout), &ds); err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		checkExplanation(t, d)
	}
}
