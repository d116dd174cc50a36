package preempttest_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// outOfTree are the packages a module outside this one imports to run the
// suite on its implementation and measure it (examples/ownimpl imports
// part of them): the contract and the suite first, then the benchmarks,
// the wire, and the reference and optimized implementations with what they
// use.
var outOfTree = []string{
	"github.com/preemptbench/preemptbench/preempt",
	"github.com/preemptbench/preemptbench/preempttest",
	"github.com/preemptbench/preemptbench/bench",
	"github.com/preemptbench/preemptbench/bench/floor",
	"github.com/preemptbench/preemptbench/wire",
	"github.com/preemptbench/preemptbench/reference",
	"github.com/preemptbench/preemptbench/optimized",
	"github.com/preemptbench/preemptbench/postfilter",
}

// goCmd runs the go command (go test puts its own first in PATH) in dir
// with env added, and returns its standard output.
func goCmd(t *testing.T, dir string, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, stderr.Bytes())
	}
	return out
}

// kubernetesPackages is, of `go list -deps -f '{{.ImportPath}} imports...'`
// output, the k8s.io/kubernetes packages, each with the packages importing
// it.
func kubernetesPackages(out []byte) map[string][]string {
	importedBy := map[string][]string{}
	var pkgs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		pkgs = append(pkgs, f[0])
		for _, imp := range f[1:] {
			importedBy[imp] = append(importedBy[imp], f[0])
		}
	}
	found := map[string][]string{}
	for _, p := range pkgs {
		if p == "k8s.io/kubernetes" || strings.HasPrefix(p, "k8s.io/kubernetes/") {
			found[p] = importedBy[p]
		}
	}
	return found
}

const depsFormat = `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`

// TestContractAndSuiteImportNoKubernetes: no package of k8s.io/kubernetes
// is in the dependency list (`go list -deps`, tests left out) of the
// contract, the suite, or anything else an implementation outside this
// module imports to run them, under either release's build tag.
// k8s.io/kubernetes requires its staging modules at v0.0.0, which only
// replace lines resolve: a module importing one of its packages needs
// some 33 of them; one importing these needs none. What these packages
// need of k8s.io/kubernetes is in internal/kube, generated, copied or
// ported, and checked against upstream by the tests there.
func TestContractAndSuiteImportNoKubernetes(t *testing.T) {
	for _, tags := range []string{"", "preemptbench_v1_36"} {
		args := []string{"list", "-deps", "-f", depsFormat}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		out := goCmd(t, ".", nil, append(args, outOfTree...)...)
		if !bytes.Contains(out, []byte("github.com/preemptbench/preemptbench/preempt ")) || !bytes.Contains(out, []byte("k8s.io/api/core/v1")) {
			t.Fatalf("tags %q: go list -deps lists neither preempt nor k8s.io/api/core/v1:\n%s", tags, out)
		}
		for pkg, by := range kubernetesPackages(out) {
			t.Errorf("tags %q: %s is a dependency (imported by %s)", tags, pkg, strings.Join(by, ", "))
		}
	}
}

// TestOwnimplNeedsNoReplace: examples/ownimpl, a module of its own as an
// implementation outside this repository is, has a go.mod with no replace
// directive (its go.work maps this project to the checkout), its packages
// and their tests import no k8s.io/kubernetes package, its module graph
// holds no module at k8s.io/kubernetes's v0.0.0 and every k8s.io staging
// module at this module's v0.37.2, and its go.mod and go.sum are what
// `go mod tidy` writes.
func TestOwnimplNeedsNoReplace(t *testing.T) {
	dir := filepath.Join("..", "examples", "ownimpl")
	const project = "github.com/preemptbench/preemptbench"

	var mod struct {
		Module  struct{ Path string }
		Require []struct{ Path, Version string }
		Replace []json.RawMessage
	}
	if err := json.Unmarshal(goCmd(t, dir, []string{"GOWORK=off"}, "mod", "edit", "-json"), &mod); err != nil {
		t.Fatal(err)
	}
	if mod.Module.Path != "example.com/ownimpl" {
		t.Fatalf("examples/ownimpl's module is %q", mod.Module.Path)
	}
	if len(mod.Replace) != 0 {
		t.Errorf("examples/ownimpl/go.mod has %d replace directives, want none", len(mod.Replace))
	}
	requires := map[string]string{}
	for _, r := range mod.Require {
		requires[r.Path] = r.Version
	}
	if _, ok := requires[project]; !ok {
		t.Errorf("examples/ownimpl/go.mod does not require %s", project)
	}
	if v, ok := requires["k8s.io/kubernetes"]; ok {
		t.Errorf("examples/ownimpl/go.mod requires k8s.io/kubernetes %s", v)
	}

	// The workspace (go.work) is what builds it here.
	if gowork := strings.TrimSpace(string(goCmd(t, dir, nil, "env", "GOWORK"))); filepath.Base(gowork) != "go.work" || filepath.Base(filepath.Dir(gowork)) != "ownimpl" {
		t.Errorf("examples/ownimpl builds without its go.work (GOWORK=%q)", gowork)
	}

	out := goCmd(t, dir, nil, "list", "-deps", "-test", "-f", depsFormat, "./...")
	if !bytes.Contains(out, []byte(project+"/preempttest ")) {
		t.Fatalf("go list -deps -test in examples/ownimpl does not list preempttest:\n%s", out)
	}
	for pkg, by := range kubernetesPackages(out) {
		t.Errorf("examples/ownimpl: %s is a dependency (imported by %s)", pkg, strings.Join(by, ", "))
	}

	// -e: a module the graph names but no package comes from may have no
	// .info in an offline module cache.
	staging := 0
	for _, line := range strings.Split(strings.TrimSpace(string(goCmd(t, dir, nil, "list", "-m", "-e", "-f", "{{.Path}} {{.Version}} {{with .Replace}}{{.Path}}{{end}}", "all"))), "\n") {
		f := strings.Fields(line)
		path, version, replacedBy := f[0], "", ""
		if len(f) > 1 {
			version = f[1]
		}
		if len(f) > 2 {
			replacedBy = f[2]
		}
		switch {
		case path == project:
			if replacedBy != "../.." {
				t.Errorf("examples/ownimpl: %s is %s, replaced by %q: want go.work's ../..", path, version, replacedBy)
			}
		case replacedBy != "":
			t.Errorf("examples/ownimpl: %s %s is replaced by %s", path, version, replacedBy)
		case version == "v0.0.0":
			t.Errorf("examples/ownimpl: %s at v0.0.0", path)
		case isStaging(path):
			staging++
			if version != "v0.37.2" {
				t.Errorf("examples/ownimpl: %s %s, want v0.37.2", path, version)
			}
		}
	}
	if staging < 5 {
		t.Errorf("examples/ownimpl: %d staging modules in its graph: the listing does not tell", staging)
	}

	// go mod tidy ignores go.work: tidy a copy of go.mod and go.sum
	// (-modfile) with the project's module replaced by the checkout, and
	// compare once the replace is dropped.
	tmp := t.TempDir()
	modfile := filepath.Join(tmp, "go.mod")
	for _, f := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	abs, err := filepath.Abs(filepath.Join(dir, "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	off := []string{"GOWORK=off"}
	goCmd(t, dir, off, "mod", "edit", "-modfile="+modfile, "-replace="+project+"="+abs)
	goCmd(t, dir, off, "mod", "tidy", "-modfile="+modfile)
	goCmd(t, dir, off, "mod", "edit", "-modfile="+modfile, "-dropreplace="+project)
	for _, f := range []string{"go.mod", "go.sum"} {
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(tmp, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("examples/ownimpl/%s is not tidy; go mod tidy (GOWORK=off, %s replaced by the checkout) writes:\n%s", f, project, want)
		}
	}
}

// isStaging reports whether path is one of k8s.io/kubernetes's staging
// modules (versioned v0.x with it), as opposed to k8s.io modules of their
// own (klog, utils, kube-openapi, gengo).
func isStaging(path string) bool {
	rest, ok := strings.CutPrefix(path, "k8s.io/")
	if !ok || path == "k8s.io/kubernetes" {
		return false
	}
	switch strings.Split(rest, "/")[0] {
	case "klog", "utils", "kube-openapi", "gengo":
		return false
	}
	return true
}
