package releases_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"

	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/releases"
)

// fakeTree writes a directory that looks like a kubernetes tree to
// OpenTree: its go.mod, and the files given (path: content).
func fakeTree(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	files["go.mod"] = "module k8s.io/kubernetes\n\ngo 1.26.0\n"
	for p, content := range files {
		p = filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A tree's version comes from the module directory's name, git, the
// staging component-base or the newest CHANGELOG, in that order; its base
// release is the newest at or below it.
func TestTreeVersionAndBase(t *testing.T) {
	oldest, current := preempt.Releases[0], preempt.CurrentRelease
	minor := current[:strings.LastIndex(current, ".")] // v1.37
	cases := []struct {
		name, dir     string
		files         map[string]string
		version, base string
		found         string
	}{
		{name: "module directory", dir: "kubernetes@" + oldest, files: map[string]string{}, version: oldest, base: oldest, found: "the module directory's name"},
		{name: "staging", dir: "k", files: map[string]string{
			"staging/src/k8s.io/component-base/version/base.go": "package version\n\nconst (\n\tDefaultKubeBinaryVersion = \"" + minor[1:] + "\"\n)\n",
			"CHANGELOG/CHANGELOG-1.2.md":                        "",
		}, version: minor, base: current, found: "staging component-base's DefaultKubeBinaryVersion"},
		{name: "changelog", dir: "k", files: map[string]string{"CHANGELOG/CHANGELOG-1.9.md": "", "CHANGELOG/CHANGELOG-" + minor[1:] + ".md": ""},
			version: minor, base: current, found: "its newest CHANGELOG"},
		{name: "a later minor", dir: "k", files: map[string]string{"CHANGELOG/CHANGELOG-1.99.md": ""}, version: "v1.99", base: current},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := fakeTree(t, tc.dir, tc.files)
			tr, err := releases.OpenTree(dir)
			if err != nil {
				t.Fatal(err)
			}
			base, err := tr.Base(preempt.Releases)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Version != tc.version || base != tc.base || (tc.found != "" && tr.Found != tc.found) || tr.Dir != dir {
				t.Errorf("version %s (%s), base %s, dir %s; want %s (%s), %s, %s", tr.Version, tr.Found, base, tr.Dir, tc.version, tc.found, tc.base, dir)
			}
		})
	}
	t.Run("git", func(t *testing.T) {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("no git")
		}
		dir := fakeTree(t, "k", map[string]string{"CHANGELOG/CHANGELOG-1.2.md": ""})
		for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"}, {"tag", "v1.99.0-alpha.1"}} {
			if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		tr, err := releases.OpenTree(dir)
		if err != nil {
			t.Fatal(err)
		}
		if base, _ := tr.Base(preempt.Releases); tr.Version != "v1.99.0-alpha.1" || tr.Found != "git describe" || base != current {
			t.Errorf("version %s (%s), base %s; want v1.99.0-alpha.1 (git describe), %s", tr.Version, tr.Found, base, current)
		}
	})
}

// What is not a kubernetes tree, or is older than every release, is
// refused with the directory named.
func TestTreeRefusals(t *testing.T) {
	notK8s := t.TempDir()
	os.WriteFile(filepath.Join(notK8s, "go.mod"), []byte("module example.com/x\n"), 0o644)
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct{ dir, want string }{
		{filepath.Join(t.TempDir(), "missing"), "no such file"},
		{file, "is not a directory"},
		{t.TempDir(), "is not a kubernetes source tree"},
		{notK8s, `its go.mod is module "example.com/x", want k8s.io/kubernetes`},
		{fakeTree(t, "k", map[string]string{}), "cannot tell the version"},
	} {
		if _, err := releases.OpenTree(tc.dir); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "upstream@"+tc.dir) {
			t.Errorf("OpenTree(%s): %v, want an error naming it and saying %q", tc.dir, err, tc.want)
		}
	}
	tr, err := releases.OpenTree(fakeTree(t, "kubernetes@v1.1.0", map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Base(preempt.Releases); err == nil || !strings.Contains(err.Error(), "older than the oldest release") {
		t.Errorf("v1.1.0: %v, want older than the oldest release", err)
	}
	// -impl upstream@DIR names the error; a name that is no directory
	// and no release is not a tree.
	if _, ok, err := registry.LookupRelease("upstream@"+notK8s, 0, nil); !ok || err == nil {
		t.Errorf("LookupRelease(upstream@%s): %v %v, want a tree refused", notK8s, ok, err)
	}
	if _, ok, _ := registry.LookupRelease("upstream@v1.1.0", 0, nil); ok {
		t.Errorf("upstream@v1.1.0 is a tree")
	}
}

// The module generated for a tree replaces k8s.io/kubernetes by the tree
// and each staging module the tree holds by its directory, and this
// repository by the checkout; its sources (the cache key) cover the
// tree's Go files, so an edit there builds it again.
func TestTreeModule(t *testing.T) {
	t.Setenv(releases.CacheEnv, t.TempDir())
	dir := fakeTree(t, "k", map[string]string{
		"CHANGELOG/CHANGELOG-" + strings.TrimPrefix(preempt.CurrentRelease[:strings.LastIndex(preempt.CurrentRelease, ".")], "v") + ".md": "",
		"staging/src/k8s.io/api/go.mod":                "module k8s.io/api\n",
		"staging/src/k8s.io/notamodule/x.go":           "package x\n",
		"pkg/scheduler/framework/preemption/p.go":      "package preemption\n",
		"pkg/scheduler/framework/preemption/p_test.go": "package preemption\n",
		"vendor/x/v.go": "package x\n",
	})
	r, err := registry.Tree(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != preempt.CurrentRelease || len(r.Tags) != 0 || r.Name() != "upstream@"+dir {
		t.Fatalf("release %+v named %s", r, r.Name())
	}
	modDir, err := r.Dir()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(modDir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse("go.mod", b, nil)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := releases.SourceRoot()
	replaced := map[string]string{}
	for _, rep := range f.Replace {
		replaced[rep.Old.Path] = rep.New.Path
	}
	for mod, want := range map[string]string{
		"k8s.io/kubernetes": dir,
		"k8s.io/api":        filepath.Join(dir, "staging", "src", "k8s.io", "api"),
		"k8s.io/client-go":  "k8s.io/client-go", // not in the tree: the release's
		releases.Module:     root,
		"k8s.io/notamodule": "",
	} {
		if replaced[mod] != want {
			t.Errorf("go.mod replaces %s by %q, want %q", mod, replaced[mod], want)
		}
	}
	if _, err := os.Stat(filepath.Join(modDir, "main.go")); err != nil {
		t.Error(err)
	}
	h1, err := r.Hash()
	if err != nil {
		t.Fatal(err)
	}
	edit := func(p, content string) string {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := r.Hash()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if h := edit("pkg/scheduler/framework/preemption/p_test.go", "package preemption // a test\n"); h != h1 {
		t.Errorf("a test file changed the hash")
	}
	if h := edit("vendor/x/v.go", "package x // vendored\n"); h != h1 {
		t.Errorf("vendor/ changed the hash")
	}
	if h := edit("pkg/scheduler/framework/preemption/p.go", "package preemption // changed\n"); h == h1 {
		t.Errorf("an edit of the tree's Go code left the hash %s", h)
	}
}

// A tree's change to a function the adapter restates (findCandidates) is
// named, with where it is not run; an unchanged copy of the base's file,
// or a change elsewhere in it, names nothing; a tree without the function
// says so.
func TestRestatedChanges(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to find the release's source with")
	}
	const file = "pkg/scheduler/framework/preemption/preemption.go"
	src, err := os.ReadFile(filepath.Join(releaseSourceDir(t), filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	tree := func(text string) releases.Tree {
		dir := t.TempDir()
		if text != "" {
			p := filepath.Join(dir, filepath.FromSlash(file))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return releases.Tree{Given: dir, Dir: dir}
	}
	const line = "offset, candidatesNum := ev.GetOffsetAndNumCandidates(int32(len(potentialNodes)))"
	if !strings.Contains(string(src), line) {
		t.Fatalf("%s has no %q", file, line)
	}
	for _, c := range []struct {
		name, text, want string
	}{
		{"unchanged", string(src), ""},
		{"a comment and DryRunPreemption changed", strings.Replace(strings.Replace(string(src), "// Get a list of nodes with failed predicates", "// (a comment changed)", 1),
			"nodeStatuses := framework.NewDefaultNodeToStatus()\n", "nodeStatuses := framework.NewDefaultNodeToStatus()\n\t_ = 0\n", 1), ""},
		{"findCandidates changed", strings.Replace(string(src), line, strings.Replace(line, "len(potentialNodes)", "len(potentialNodes)/2", 1), 1),
			"the tree changes Evaluator.findCandidates (" + file + ") where " + preempt.CurrentRelease + " has it"},
		{"no file", "", "the tree has no Evaluator.findCandidates"},
	} {
		got, err := tree(c.text).RestatedChanges(preempt.CurrentRelease)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.want == "" && len(got) != 0 || c.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], c.want)) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// releaseSourceDir is k8s.io/kubernetes at the current release in the
// module cache.
func releaseSourceDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("go env: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "k8s.io", "kubernetes@"+preempt.CurrentRelease)
}
