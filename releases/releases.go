package releases

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Module is the main module's path.
const Module = "github.com/preemptbench/preemptbench"

// SourceEnv names the environment variable that gives the checkout of this
// repository holding releases/ when the command does not run from the one
// it was built from.
const SourceEnv = "PREEMPTBENCH_SOURCE"

// CacheEnv names the environment variable that gives the directory the
// binaries are built into, instead of preemptbench/ in the user's cache
// directory (os.UserCacheDir).
const CacheEnv = "PREEMPTBENCH_CACHE"

// A Release is an upstream release served by the module releases/Version.
type Release struct {
	// Version is the k8s.io/kubernetes release, "v1.36.3".
	Version string
	// Tags are the build tags the module is built with, and UnknownGates
	// the current release's feature gates this release lacks: the
	// release's row of preempt.ReleaseTable, which says more.
	Tags         []string
	UnknownGates []string
	// Tree, when set, is a kubernetes source tree built in place of the
	// release's k8s.io/kubernetes: upstream@DIR, whose base release (the
	// nearest at or below its version) the rest of Release describes.
	Tree *Tree
}

// Name is the implementation's name, "upstream@" + Version, or
// "upstream@" + DIR for a tree.
func (r Release) Name() string {
	if r.Tree != nil {
		return "upstream@" + r.Tree.Given
	}
	return "upstream@" + r.Version
}

// named prefixes err with r's name. The exported methods' errors name the
// release; the unexported ones' do not, for Impl, whose errors are named
// by its caller as every implementation's are.
func (r Release) named(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", r.Name(), err)
}

// Dir is the module's directory, releases/Version under the source root.
func (r Release) Dir() (string, error) {
	dir, err := r.dir()
	return dir, r.named(err)
}

func (r Release) dir() (string, error) {
	root, err := SourceRoot()
	if err != nil {
		return "", err
	}
	if r.Tree != nil {
		cache, err := CacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache directory for its module: %w", err)
		}
		dir := r.Tree.moduleDir(cache)
		if err := r.Tree.writeModule(dir, root, r); err != nil {
			return "", fmt.Errorf("writing its module in %s: %w", dir, err)
		}
		return dir, nil
	}
	dir := filepath.Join(root, "releases", r.Version)
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("no module at %s: %w", dir, err)
	}
	return dir, nil
}

// SourceRoot is the checkout of this repository the releases are built
// from: $PREEMPTBENCH_SOURCE, else the tree this package was compiled
// from, else the first directory holding the main module's go.mod from
// the working directory up.
func SourceRoot() (string, error) {
	if dir := os.Getenv(SourceEnv); dir != "" {
		if !isMainModule(dir) {
			return "", fmt.Errorf("$%s=%s holds no go.mod of module %s", SourceEnv, dir, Module)
		}
		return dir, nil
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		if dir := filepath.Dir(filepath.Dir(file)); isMainModule(dir) {
			return dir, nil
		}
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if isMainModule(dir) {
				return dir, nil
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return "", fmt.Errorf("the sources of this repository (%s) are not found: run from a checkout, or set $%s to one", Module, SourceEnv)
}

// isMainModule tells whether dir/go.mod is the main module's.
func isMainModule(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			p, err := strconv.Unquote(f[1])
			if err != nil {
				p = f[1]
			}
			return p == Module
		}
	}
	return false
}

// CacheDir is the directory the binaries are built into.
func CacheDir() (string, error) {
	if dir := os.Getenv(CacheEnv); dir != "" {
		return dir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "preemptbench"), nil
}

// Sources are the files a release's binary is built from, relative to the
// source root, sorted: the module's go.mod, go.sum and Go files (tests
// left out), the main module's go.mod, and the Go files of every package
// of the main module that the release imports, directly or not (read from
// their import lines, whatever the build tags: a superset).
func (r Release) Sources() ([]string, error) {
	_, files, err := r.sources()
	return files, r.named(err)
}

// sources is Sources and the source root. A tree's generated module's
// files, outside the source root, are named by their absolute paths.
func (r Release) sources() (root string, _ []string, _ error) {
	dir, err := r.dir()
	if err != nil {
		return "", nil, err
	}
	if root, err = SourceRoot(); err != nil {
		return "", nil, err
	}
	modPath := Module + "/releases/" + r.Version
	if r.Tree != nil {
		modPath = treeModule
	}
	files := map[string]bool{"go.mod": true}
	var queue []string
	visit := func(path string) error {
		rel, err := filepath.Rel(root, path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = path
		}
		files[filepath.ToSlash(rel)] = true
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if (p == Module || strings.HasPrefix(p, Module+"/")) && p != modPath && !strings.HasPrefix(p, modPath+"/") {
				queue = append(queue, strings.TrimPrefix(strings.TrimPrefix(p, Module), "/"))
			}
		}
		return nil
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if name == "go.mod" || name == "go.sum" || (strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")) {
			return visit(path)
		}
		return nil
	})
	if err != nil {
		return "", nil, fmt.Errorf("reading its module: %w", err)
	}
	seen := map[string]bool{}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		if seen[pkg] {
			continue
		}
		seen[pkg] = true
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(pkg)))
		if err != nil {
			return "", nil, fmt.Errorf("package %s/%s: %w", Module, pkg, err)
		}
		for _, e := range entries {
			name := e.Name()
			if !e.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
				if err := visit(filepath.Join(root, filepath.FromSlash(pkg), name)); err != nil {
					return "", nil, err
				}
			}
		}
	}
	out := make([]string, 0, len(files))
	for f := range files {
		out = append(out, f)
	}
	sort.Strings(out)
	return root, out, nil
}

// Hash is the first 16 hex digits of the SHA-256 of Sources (names and
// contents), and of the build tags.
func (r Release) Hash() (string, error) {
	h, err := r.hash()
	return h, r.named(err)
}

func (r Release) hash() (string, error) {
	root, files, err := r.sources()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "tags %q\n", r.Tags)
	for _, f := range files {
		path := filepath.FromSlash(f)
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	if r.Tree != nil {
		fmt.Fprintf(h, "tree %s\n", r.Tree.Dir)
		if err := r.Tree.hashTree(h); err != nil {
			return "", fmt.Errorf("reading the tree %s: %w", r.Tree.Dir, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// binaryPath is the binary of r built from sources of the hash.
func (r Release) binaryPath(cache, hash string) string {
	bin := filepath.Join(cache, r.binaryPrefix()+hash)
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	return bin
}

// binaryPrefix is the name of every binary of r, before the hash: a
// tree's names its directory by a hash of its path.
func (r Release) binaryPrefix() string {
	if r.Tree != nil {
		return "upstream-" + filepath.Base(r.Tree.moduleDir("")) + "-"
	}
	return "upstream-" + r.Version + "-"
}

// buildMu serialises the builds of this process (another process may
// build the same binary at once: each writes its own file and renames it).
var buildMu sync.Mutex

// Binary is the path of r's binary built from the current sources,
// building it first if the cache does not hold it, or holds it changed
// since it was built: the SHA-256 of the file is written beside it
// (NAME.sha256) when it is built, and checked before every use. progress
// (nil: none) gets notes while it builds.
func (r Release) Binary(progress io.Writer) (string, error) {
	bin, err := r.binary(progress)
	return bin, r.named(err)
}

func (r Release) binary(progress io.Writer) (string, error) {
	if progress == nil {
		progress = io.Discard
	}
	dir, err := r.dir()
	if err != nil {
		return "", err
	}
	start := time.Now()
	hash, err := r.hash()
	if err != nil {
		return "", err
	}
	if r.Tree != nil {
		treeBuildNote(progress, *r.Tree, start)
	}
	cache, err := CacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for its binary: %w", err)
	}
	bin := r.binaryPath(cache, hash)
	buildMu.Lock()
	defer buildMu.Unlock()
	r.prune(cache, "", time.Now())
	if intact(bin) {
		return bin, nil
	}
	if _, err := os.Lstat(bin); err == nil {
		// Truncated, overwritten, or built before its SHA-256 was kept:
		// it would fail every run (exec format error, a crash), so it is
		// built again.
		fmt.Fprintf(progress, "%s: the cached binary %s is not the one built (its SHA-256 is not the one in %s): building it again\n", r.Name(), bin, filepath.Base(sumPath(bin)))
		os.Remove(bin)
		os.Remove(sumPath(bin))
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("built on first use, it needs the Go toolchain (go on $PATH): %w", err)
	}
	tmp := fmt.Sprintf("%s.tmp-%d", bin, os.Getpid())
	args := []string{"build", "-buildvcs=false"}
	if r.Tree != nil {
		// -trimpath: the build cache keys a package of the tree by its
		// module's path and version, not its directory, so that copies
		// of a tree (worktrees, a tree and the same with one change)
		// share what they compile alike. -mod=mod: a tree may require
		// other versions than its base release, whose sums go.sum lacks.
		args = append(args, "-trimpath", "-mod=mod")
	}
	if len(r.Tags) > 0 {
		args = append(args, "-tags", strings.Join(r.Tags, ","))
	}
	args = append(args, "-o", tmp, ".")
	cmd := exec.Command(goCmd, args...)
	cmd.Dir = dir
	// The module is built as it is: no workspace of the caller's.
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	what := "k8s.io/kubernetes " + r.Version
	if r.Tree != nil {
		what = "the kubernetes tree " + r.Tree.Dir
	}
	fmt.Fprintf(progress, "building %s (first use): go %s in %s (a few minutes the first time, while Go compiles %s) …\n",
		r.Name(), strings.Join(args, " "), dir, what)
	start = time.Now()
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("starting go build: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-tick.C:
			fmt.Fprintf(progress, "building %s … (%v)\n", r.Name(), time.Since(start).Round(time.Second))
		}
	}
	if err != nil {
		os.Remove(tmp)
		msg := strings.TrimSpace(out.String())
		if len(msg) > 4000 {
			msg = "…" + msg[len(msg)-4000:]
		}
		return "", fmt.Errorf("go build in %s failed (%v):\n%s", dir, err, msg)
	}
	// The SHA-256 first, then the binary: a binary beside another's sum
	// is built again, never run.
	sum, err := fileSum(tmp)
	if err == nil {
		err = writeFileAtomic(sumPath(bin), []byte(sum+"\n"))
	}
	if err == nil {
		err = os.Rename(tmp, bin)
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	fmt.Fprintf(progress, "built %s in %v: %s\n", r.Name(), time.Since(start).Round(time.Second), bin)
	r.prune(cache, bin, time.Now())
	return bin, nil
}

// staleTmp is the age past which a build's temporary file is left over
// from a build that was killed: go build writes its output at the end of
// the link and the file is renamed within a second.
const staleTmp = time.Hour

// prune removes r's files in cache that no use needs: its temporary
// files (NAME.tmp-PID, whole binaries of 50 MB and more) older than
// staleTmp, which a build killed between its link and its rename leaves
// (a younger one may be another process's build in flight), and, when
// keep is not "", its binaries built from other sources than keep's.
func (r Release) prune(cache, keep string, now time.Time) {
	entries, err := os.ReadDir(cache)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), r.binaryPrefix()) {
			continue
		}
		p := filepath.Join(cache, e.Name())
		if strings.Contains(e.Name(), ".tmp-") {
			if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) > staleTmp {
				os.Remove(p)
			}
		} else if keep != "" && p != keep && p != sumPath(keep) {
			os.Remove(p)
		}
	}
}

// sumPath is the file beside bin holding the SHA-256 of bin as it was
// built (hex, a line).
func sumPath(bin string) string { return bin + ".sha256" }

// fileSum is the SHA-256 of the file at path, in hex.
func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// intact reports whether bin is a regular file whose SHA-256 is the one
// written beside it when it was built.
func intact(bin string) bool {
	if fi, err := os.Lstat(bin); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	want, err := os.ReadFile(sumPath(bin))
	if err != nil {
		return false
	}
	got, err := fileSum(bin)
	return err == nil && got == strings.TrimSpace(string(want))
}

// writeFileAtomic writes b to path through a temporary file renamed over
// it, so that a reader sees the old content or the new, whole.
func writeFileAtomic(path string, b []byte) error {
	tmp := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Built is the path of r's binary for the current sources if the cache
// holds it intact (see Binary), "" if not.
func (r Release) Built() string {
	hash, err := r.hash()
	if err != nil {
		return ""
	}
	cache, err := CacheDir()
	if err != nil {
		return ""
	}
	bin := r.binaryPath(cache, hash)
	if !intact(bin) {
		return ""
	}
	return bin
}
