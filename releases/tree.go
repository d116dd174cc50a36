package releases

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// A Tree is a kubernetes source tree given as an implementation,
// upstream@DIR: a git checkout (its staging modules under
// staging/src/k8s.io/) or an unpacked module directory (as the module
// cache holds k8s.io/kubernetes@VERSION). It is built, as an earlier
// release is, into a child served over the wire, from a module generated
// in the cache directory: the module of its base release (the main
// module's for the current release, releases/VERSION's for an earlier
// one) with k8s.io/kubernetes replaced by DIR, and every staging module DIR
// holds by its directory there. The base release is the nearest one of
// the project's releases at or below the tree's version: its build tags
// select the adapter's seams, and its behaviour switches are the tree's.
type Tree struct {
	// Given is DIR as the user wrote it: the implementation's name is
	// "upstream@" + Given.
	Given string
	// Dir is DIR, absolute and clean.
	Dir string
	// Version is the tree's version and Found how it was found ("the
	// module directory's name", "git describe", ...).
	Version, Found string
}

// treeRef tells whether what follows "upstream@" names a directory rather
// than a release: it holds a path separator or starts with "." or "~".
func TreeRef(s string) bool {
	return strings.ContainsRune(s, '/') || strings.ContainsRune(s, filepath.Separator) ||
		strings.HasPrefix(s, ".") || strings.HasPrefix(s, "~")
}

// moduleDirVersion reads the version from an unpacked module directory's
// name, kubernetes@v1.37.2.
var moduleDirVersion = regexp.MustCompile(`^kubernetes@(v[0-9]+\.[0-9]+\.[0-9]+\S*)$`)

// binaryVersion reads component-base's DefaultKubeBinaryVersion, "1.37".
var binaryVersion = regexp.MustCompile(`(?m)^\s*DefaultKubeBinaryVersion\s*=\s*"([0-9]+\.[0-9]+)"`)

// changelog names the changelog of a minor release, CHANGELOG-1.37.md.
var changelog = regexp.MustCompile(`^CHANGELOG-([0-9]+\.[0-9]+)\.md$`)

// OpenTree checks that dir is a kubernetes source tree and finds its
// version: from an unpacked module directory's name (kubernetes@VERSION),
// else `git describe --tags` in a git checkout, else the binary version
// of its staging component-base (a minor, v1.38), else its newest
// CHANGELOG-1.N.md (a minor).
func OpenTree(dir string) (Tree, error) {
	t := Tree{Given: dir}
	if strings.HasPrefix(dir, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, dir[2:])
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return t, fmt.Errorf("upstream@%s: %w", t.Given, err)
	}
	t.Dir = abs
	bad := func(format string, a ...any) (Tree, error) {
		return t, fmt.Errorf("upstream@%s: %s", t.Given, fmt.Sprintf(format, a...))
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return bad("%v", err)
	}
	if !fi.IsDir() {
		return bad("%s is not a directory (want a kubernetes source tree)", abs)
	}
	b, err := os.ReadFile(filepath.Join(abs, "go.mod"))
	if err != nil {
		return bad("%s is not a kubernetes source tree: %v", abs, err)
	}
	if p := modfile.ModulePath(b); p != "k8s.io/kubernetes" {
		return bad("%s is not a kubernetes source tree: its go.mod is module %q, want k8s.io/kubernetes", abs, p)
	}
	if m := moduleDirVersion.FindStringSubmatch(filepath.Base(abs)); m != nil && semver.IsValid(m[1]) {
		t.Version, t.Found = m[1], "the module directory's name"
		return t, nil
	}
	if _, err := os.Stat(filepath.Join(abs, ".git")); err == nil {
		cmd := exec.Command("git", "-C", abs, "describe", "--tags", "--match", "v[0-9]*", "--abbrev=0")
		if out, err := cmd.Output(); err == nil {
			if v := strings.TrimSpace(string(out)); semver.IsValid(v) {
				t.Version, t.Found = v, "git describe"
				return t, nil
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(abs, "staging", "src", "k8s.io", "component-base", "version", "base.go")); err == nil {
		if m := binaryVersion.FindSubmatch(b); m != nil {
			t.Version, t.Found = "v"+string(m[1]), "staging component-base's DefaultKubeBinaryVersion"
			return t, nil
		}
	}
	if entries, err := os.ReadDir(filepath.Join(abs, "CHANGELOG")); err == nil {
		best := ""
		for _, e := range entries {
			if m := changelog.FindStringSubmatch(e.Name()); m != nil && (best == "" || semver.Compare("v"+m[1], best) > 0) {
				best = "v" + m[1]
			}
		}
		if best != "" {
			t.Version, t.Found = best, "its newest CHANGELOG"
			return t, nil
		}
	}
	return bad("cannot tell the version of the kubernetes tree at %s: not a module directory kubernetes@VERSION, no git tag, no staging/src/k8s.io/component-base/version/base.go, no CHANGELOG/CHANGELOG-1.N.md", abs)
}

// Base is the release among versions (oldest first) the tree answers as:
// the newest at or below its version (for a minor alone, v1.37, the
// newest of that minor or below).
func (t Tree) Base(versions []string) (string, error) {
	v := t.Version
	if semver.Canonical(v) != v && semver.Prerelease(v) == "" && strings.Count(v, ".") == 1 {
		v += ".999999" // a minor alone: any patch of it
	}
	base := ""
	for _, r := range versions {
		if semver.Compare(r, v) <= 0 {
			base = r
		}
	}
	if base == "" {
		return "", fmt.Errorf("upstream@%s: the tree is %s (%s), older than the oldest release the project follows, %s", t.Given, t.Version, t.Found, versions[0])
	}
	return base, nil
}

// treeModule is the name of the module generated for a tree.
const treeModule = Module + "/releases/tree"

// moduleDir is the directory of the module generated for t: one per tree
// (by its absolute path) in the cache directory.
func (t Tree) moduleDir(cache string) string {
	h := sha256.Sum256([]byte(t.Dir))
	return filepath.Join(cache, "tree-"+hex.EncodeToString(h[:])[:12])
}

// writeModule writes the module of release r (base) built from tree t
// into dir: go.mod (the base's, its module renamed, this repository
// replaced by root, k8s.io/kubernetes by the tree and each staging module
// the tree holds by its directory there), the base's go.sum and a
// main.go of one call to serve.Main.
func (t Tree) writeModule(dir, root string, r Release) error {
	tmplDir := root
	if len(r.Tags) > 0 { // an earlier release: its own module
		tmplDir = filepath.Join(root, "releases", r.Version)
	}
	gomod, err := os.ReadFile(filepath.Join(tmplDir, "go.mod"))
	if err != nil {
		return err
	}
	gosum, err := os.ReadFile(filepath.Join(tmplDir, "go.sum"))
	if err != nil {
		return err
	}
	f, err := modfile.Parse(filepath.Join(tmplDir, "go.mod"), gomod, nil)
	if err != nil {
		return err
	}
	if err := f.AddModuleStmt(treeModule); err != nil {
		return err
	}
	if tmplDir == root {
		// The main module as a dependency of the generated one.
		if err := f.AddRequire(Module, "v0.0.0"); err != nil {
			return err
		}
	}
	if err := f.AddReplace(Module, "", root, ""); err != nil {
		return err
	}
	if err := f.AddReplace("k8s.io/kubernetes", "", t.Dir, ""); err != nil {
		return err
	}
	staging := filepath.Join(t.Dir, "staging", "src", "k8s.io")
	if entries, err := os.ReadDir(staging); err == nil {
		for _, e := range entries {
			modDir := filepath.Join(staging, e.Name())
			if _, err := os.Stat(filepath.Join(modDir, "go.mod")); e.IsDir() && err == nil {
				if err := f.AddReplace("k8s.io/"+e.Name(), "", modDir, ""); err != nil {
					return err
				}
			}
		}
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return err
	}
	header := fmt.Sprintf("// Generated by preemptbench for upstream@%s: the module of %s with\n// k8s.io/kubernetes replaced by the tree %s. Not to be edited:\n// it is written again before each build.\n", t.Given, r.Version, t.Dir)
	main := fmt.Sprintf(`// Command tree is upstream@%s: package upstream built at the
// kubernetes tree %s, with %s's build tags, served over package wire's
// protocol. Generated by preemptbench.
package main

import (
	"os"

	"%s/upstream/serve"
)

func main() { os.Exit(serve.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
`, t.Given, t.Dir, r.Version, Module)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, b := range map[string][]byte{"go.mod": append([]byte(header), out...), "main.go": []byte(main)} {
		if err := writeIfChanged(filepath.Join(dir, name), b); err != nil {
			return err
		}
	}
	// go.sum: the base's, plus what builds of the tree added (a tree whose
	// go.mod asks for other versions).
	if old, err := os.ReadFile(filepath.Join(dir, "go.sum")); err == nil {
		gosum = mergeLines(gosum, old)
	}
	return writeIfChanged(filepath.Join(dir, "go.sum"), gosum)
}

// writeIfChanged writes b to path unless it already holds b (a rewrite
// would change nothing but the file's time).
func writeIfChanged(path string, b []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil
	}
	return writeFileAtomic(path, b)
}

// mergeLines is the sorted union of the lines of a and b.
func mergeLines(a, b []byte) []byte {
	set := map[string]bool{}
	for _, s := range [][]byte{a, b} {
		for _, l := range strings.Split(string(s), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				set[l] = true
			}
		}
	}
	lines := make([]string, 0, len(set))
	for l := range set {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	return []byte(strings.Join(lines, "\n") + "\n")
}

// hashTree writes to h the names, sizes and contents of the tree's files
// a build reads: go.mod, go.sum and the Go files but tests, outside
// vendor/, testdata/, _output/ and hidden or underscore directories.
func (t Tree) hashTree(h io.Writer) error {
	return filepath.WalkDir(t.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != t.Dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if name != "go.mod" && name != "go.sum" && (!strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(t.Dir, path)
		fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(rel), len(b))
		_, err = h.Write(b)
		return err
	})
}

// treeBuildNote says how long hashing a tree took when it is slow, so a
// wait is explained.
func treeBuildNote(progress io.Writer, t Tree, start time.Time) {
	if d := time.Since(start); d > 2*time.Second {
		fmt.Fprintf(progress, "upstream@%s: read the tree's Go sources in %v\n", t.Given, d.Round(100*time.Millisecond))
	}
}

// TreeSuiteEnv, set, runs the tests that build kubernetes trees copied
// from the module cache (minutes the first time: Go compiles
// k8s.io/kubernetes with -trimpath) and fuzz them
// (cli.TestUpgradeFindsAPlantedChange); CI sets it in a step of its own.
const TreeSuiteEnv = "PREEMPTBENCH_TREE_SUITE"
