package upstream

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// goListModules is `go list -m -e all` in dir: path, version and
// replacement version ("" for none, or a directory) of each module. (-e: a
// module of the graph no package comes from may have no .info in an
// offline module cache.)
func goListModules(t *testing.T, dir string) [][3]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-e", "-f", "{{.Path}} {{.Version}} {{with .Replace}}{{.Version}}{{end}}", "all")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m all in %s: %v", dir, err)
	}
	var mods [][3]string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m [3]string
		copy(m[:], strings.Fields(line))
		mods = append(mods, m)
	}
	return mods
}

// go.mod pins k8s.io/kubernetes at Version and every staging module at
// StagingVersion (required at it, and replaced with it for the main
// module's own builds). The out-of-tree example's go.mod has no replace
// (its go.work maps this project to the checkout; preempttest's
// TestOwnimplNeedsNoReplace checks the rest): its graph, pruned at this module's go.mod, holds the
// staging modules this module requires, at StagingVersion, and none at
// k8s.io/kubernetes's v0.0.0.
func TestVersionIsTheModules(t *testing.T) {
	staging := map[string]bool{}
	found := false
	for _, m := range goListModules(t, "..") {
		switch {
		case m[0] == "k8s.io/kubernetes":
			found = true
			if m[1] != Version {
				t.Errorf("go.mod pins k8s.io/kubernetes %s, upstream.Version is %s", m[1], Version)
			}
		case m[2] != "" && strings.HasPrefix(m[0], "k8s.io/"):
			staging[m[0]] = true
			if m[2] != StagingVersion() {
				t.Errorf("%s is replaced by %s, want %s (k8s.io/kubernetes %s)", m[0], m[2], StagingVersion(), Version)
			}
		}
	}
	if !found || len(staging) == 0 {
		t.Errorf("k8s.io/kubernetes found %v, %d staging modules replaced", found, len(staging))
	}
	// What go.mod requires, a module depending on this one requires: the
	// replaces do not reach it.
	out, err := exec.Command("go", "mod", "edit", "-json", "../go.mod").Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var gomod struct {
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal(out, &gomod); err != nil {
		t.Fatal(err)
	}
	for _, r := range gomod.Require {
		if staging[r.Path] && r.Version != StagingVersion() {
			t.Errorf("go.mod requires %s %s, want %s: a module depending on this one does not see the replace", r.Path, r.Version, StagingVersion())
		}
	}
	n := 0
	for _, m := range goListModules(t, "../examples/ownimpl") {
		if m[1] == "v0.0.0" && m[0] != "github.com/preemptbench/preemptbench" { // replaced by ../..
			t.Errorf("examples/ownimpl: %s at v0.0.0", m[0])
		}
		if m[2] != "" && m[0] != "github.com/preemptbench/preemptbench" {
			t.Errorf("examples/ownimpl: %s is replaced (by %s): it needs no replace but go.work's of the project", m[0], m[2])
		}
		if staging[m[0]] {
			n++
			if m[1] != StagingVersion() {
				t.Errorf("examples/ownimpl: %s %s, want %s", m[0], m[1], StagingVersion())
			}
		}
		if m[0] == "k8s.io/kubernetes" && m[1] != Version {
			t.Errorf("examples/ownimpl: k8s.io/kubernetes %s, want %s", m[1], Version)
		}
	}
	if n == 0 {
		t.Error("examples/ownimpl: no staging module in its graph")
	}
}
