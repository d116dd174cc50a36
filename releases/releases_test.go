package releases_test

import (
	"context"
	"errors"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/loader"
	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/preempttest"

	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/releases"

	"github.com/preemptbench/preemptbench/upstream"
)

// builtReleases are the earlier releases' implementations, each built
// once for the package's tests (the first build of a clean machine
// compiles that k8s.io/kubernetes: some minutes; later ones find the
// binary in the cache) and its child started.
var builtReleases = func() map[string]func() (*releases.Impl, error) {
	m := map[string]func() (*releases.Impl, error){}
	for _, r := range registry.Releases() {
		m[r.Version] = sync.OnceValues(func() (*releases.Impl, error) {
			impl, ok, err := registry.LookupRelease(r.Name(), 0, os.Stderr)
			if err != nil || !ok {
				return nil, errors.Join(err, os.ErrNotExist)
			}
			ri := impl.(*releases.Impl)
			_, err = ri.Client()
			return ri, err
		})
	}
	return m
}()

// releaseAt is upstream@version, an earlier release, built once.
func releaseAt(t testing.TB, version string) *releases.Impl {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build the release with")
	}
	build, ok := builtReleases[version]
	if !ok {
		t.Fatalf("no release %s in the registry", version)
	}
	start := time.Now()
	impl, err := build()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Logf("built %s in %v", impl.Name(), d.Round(time.Second))
	}
	return impl
}

// release is upstream@v1.36.3, for the tests of one earlier release.
func release(t testing.TB) *releases.Impl {
	t.Helper()
	return releaseAt(t, "v1.36.3")
}

// The registry knows upstream@ every release of preempt.Releases, oldest
// first, the last being upstream.Version (the in-process upstream), and
// nothing else of the form.
func TestRegistry(t *testing.T) {
	names := registry.ReleaseNames()
	var want []string
	for _, r := range preempt.Releases {
		want = append(want, "upstream@"+r)
	}
	if !slices.Equal(names, want) || names[0] != "upstream@v1.35.4" || names[len(names)-1] != "upstream@"+upstream.Version {
		t.Errorf("ReleaseNames() = %v", names)
	}
	if impl, ok, err := registry.LookupRelease("upstream@"+upstream.Version, 0, nil); err != nil || !ok || impl.Name() != "upstream" {
		t.Errorf("upstream@%s: %v %v, want the in-process upstream", upstream.Version, impl, ok)
	}
	for _, name := range []string{"upstream@v1.30.0", "upstream", "reference"} {
		if _, ok, _ := registry.LookupRelease(name, 0, nil); ok {
			t.Errorf("LookupRelease(%q) found one", name)
		}
	}
	for _, r := range registry.Releases() {
		dir, err := r.Dir()
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(dir) != r.Version {
			t.Errorf("%s: module %s", r.Name(), dir)
		}
		// scripts/ci.sh vets and tests the module with the tags its
		// go.mod names: the registry's.
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		var tags string
		for _, line := range strings.Split(string(mod), "\n") {
			if v, ok := strings.CutPrefix(line, "// build-tags: "); ok {
				tags = strings.TrimSpace(v)
			}
		}
		if tags != strings.Join(r.Tags, ",") {
			t.Errorf("%s: go.mod says build-tags %q, the registry %q", r.Name(), tags, r.Tags)
		}
	}
}

// sources is r.Sources(), and the set of them.
func sources(t *testing.T, r releases.Release) ([]string, map[string]bool) {
	t.Helper()
	files, err := r.Sources()
	if err != nil {
		t.Fatal(err)
	}
	has := map[string]bool{}
	for _, f := range files {
		has[f] = true
	}
	return files, has
}

// The hash covers the module's sources and the main module's packages it
// imports (upstream, the adapter, with every file whatever its build tags;
// preempt, wire and theirs), and nothing else.
func TestSources(t *testing.T) {
	r := registry.Releases()[0]
	files, has := sources(t, r)
	dir := "releases/" + r.Version + "/"
	for _, want := range []string{"go.mod", dir + "go.mod", dir + "go.sum", dir + "main.go",
		"upstream/upstream.go", "upstream/seams.go", "upstream/seams_v1_36.go", "upstream/serve/serve.go",
		"preempt/contract.go", "wire/client.go", "wire/server.go"} {
		if !has[want] {
			t.Errorf("Sources() lacks %s", want)
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "reference/") || strings.HasPrefix(f, "internal/cli/") || strings.HasPrefix(f, "upstream/testdata/") {
			t.Errorf("Sources() has %s", f)
		}
	}
	if h, err := r.Hash(); err != nil || len(h) != 16 {
		t.Errorf("Hash() = %q, %v", h, err)
	}
}

// releaseModules yields each release of the registry and its module's
// directory, for a test that asks the go command about it (skipped
// without one).
func releaseModules(t *testing.T) iter.Seq2[releases.Release, string] {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to ask")
	}
	return func(yield func(releases.Release, string) bool) {
		for _, r := range registry.Releases() {
			dir, err := r.Dir()
			if err != nil {
				t.Fatal(err)
			}
			if !yield(r, dir) {
				return
			}
		}
	}
}

// Every Go file the release's build compiles from the main module (go
// list -deps with the release's tags, in its module) is in Sources: an
// edit of any of them builds the child again.
func TestSourcesCoverTheBuild(t *testing.T) {
	for r, dir := range releaseModules(t) {
		_, has := sources(t, r)
		cmd := exec.Command("go", "list", "-deps", "-tags", strings.Join(r.Tags, ","), "-f", "{{.ImportPath}} {{.Dir}} {{join .GoFiles \",\"}}", ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: go list -deps: %v", r.Name(), err)
		}
		root := filepath.Dir(filepath.Dir(dir))
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || !strings.HasPrefix(f[0], releases.Module+"/") {
				continue
			}
			n++
			if len(f) < 3 {
				continue
			}
			for _, name := range strings.Split(f[2], ",") {
				rel, err := filepath.Rel(root, filepath.Join(f[1], name))
				if err != nil {
					t.Fatal(err)
				}
				if !has[filepath.ToSlash(rel)] {
					t.Errorf("%s compiles %s, which its Sources (its cache key) leave out", r.Name(), filepath.ToSlash(rel))
				}
			}
		}
		if n < 4 {
			t.Errorf("%s: %d packages of this repository in its build, want upstream, preempt, wire and more", r.Name(), n)
		}
	}
}

// The cache key (Hash) changes with an edit of a file of the main module
// that the release compiles (here a package its main imports, as
// releases/v1.36.3 imports upstream/serve), and not with an edit of a test
// or of a package it does not import. The checkout is a stand-in
// ($PREEMPTBENCH_SOURCE).
func TestHashFollowsTheMainModule(t *testing.T) {
	write := standInCheckout(t)
	write("adapter/adapter.go", "package adapter\n\nimport _ \""+releases.Module+"/adapter/dep\"\n\nconst Version = \"v0.0.1\"\n")
	write("adapter/adapter_test.go", "package adapter\n")
	write("adapter/dep/dep.go", "package dep\n")
	write("other/other.go", "package other\n")
	write("releases/v0.0.1/go.mod", "module "+releases.Module+"/releases/v0.0.1\n\ngo 1.22\n")
	write("releases/v0.0.1/main.go", "package main\n\nimport \""+releases.Module+"/adapter\"\n\nfunc main() { println(adapter.Version) }\n")
	r := releases.Release{Version: "v0.0.1"}
	hash := func() string {
		t.Helper()
		h, err := r.Hash()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	base := hash()
	for _, tt := range []struct {
		file, content string
		changes       bool
	}{
		{"other/other.go", "package other // edited\n", false},
		{"adapter/adapter_test.go", "package adapter // edited\n", false},
		{"adapter/dep/dep.go", "package dep // edited\n", true},
		{"adapter/seams_v0.go", "//go:build never\n\npackage adapter\n", true},
	} {
		write(tt.file, tt.content)
		h := hash()
		if changed := h != base; changed != tt.changes {
			t.Errorf("edit of %s: key changed %t, want %t", tt.file, changed, tt.changes)
		}
		base = h
	}
}

// stagingVersion matches a staging module's version, v0.X.Y.
var stagingVersion = regexp.MustCompile(`^v0\.[1-9][0-9]*\.[0-9]+$`)

// Each release module pins k8s.io/kubernetes at its release and every
// staging module it replaces at the matching v0 version (MVS would lift
// them to the main module's), and uses this checkout (../..).
func TestModulesPinTheirRelease(t *testing.T) {
	for r, dir := range releaseModules(t) {
		cmd := exec.Command("go", "list", "-m", "-e", "-f", "{{.Path}} {{.Version}} {{with .Replace}}{{.Path}}@{{.Version}}{{end}}", "all")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: go list -m all: %v", r.Name(), err)
		}
		staging := "v0" + r.Version[2:]
		kubernetes, n := false, 0
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) < 2:
			case f[0] == releases.Module:
				if len(f) != 3 || f[2] != "../..@" {
					t.Errorf("%s: %s is %v, want replaced by ../..", r.Name(), f[0], f[1:])
				}
			case f[0] == "k8s.io/kubernetes":
				kubernetes = true
				if len(f) != 3 || f[2] != "k8s.io/kubernetes@"+r.Version {
					t.Errorf("%s: k8s.io/kubernetes is %v, want replaced by %s", r.Name(), f[1:], r.Version)
				}
			case len(f) == 3 && strings.HasPrefix(f[0], "k8s.io/"):
				n++
				if f[2] != f[0]+"@"+staging {
					t.Errorf("%s: %s is replaced by %s, want %s", r.Name(), f[0], f[2], staging)
				}
			case strings.HasPrefix(f[0], "k8s.io/") && stagingVersion.MatchString(f[1]) && !unneeded(t, dir, f[0]):
				// A staging module (v0.X.Y; klog, utils and kube-openapi
				// are not versioned so) left to MVS. One the release does
				// not have (v1.35 has no k8s.io/streaming: only the main
				// module's requirements name it) is in the graph, needed
				// by no package of the build.
				t.Errorf("%s: staging module %s at %s, not replaced", r.Name(), f[0], f[1])
			}
		}
		// go.mod replaces the staging modules v1.36.3's go.mod lists; the
		// build's graph holds some 30 of them.
		if !kubernetes || n < 25 {
			t.Errorf("%s: k8s.io/kubernetes found %t, %d staging modules replaced", r.Name(), kubernetes, n)
		}
	}
}

// unneeded reports whether the module of the release module in dir needs
// no package of module mod (go mod why -m).
func unneeded(t *testing.T, dir, mod string) bool {
	t.Helper()
	cmd := exec.Command("go", "mod", "why", "-m", mod)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod why -m %s: %v", mod, err)
	}
	return strings.Contains(string(out), "does not need module "+mod)
}

// The child validates feature gates against its release's gate (package
// upstream's init gives preempt the process's, v1.36.3's kube-scheduler
// gate), not the current release's table: a gate only the current
// release has is an error from the child itself (asked directly, past
// releases.Impl's refusal of its UnknownGates).
func TestChildValidatesItsGates(t *testing.T) {
	impl := release(t)
	cl, err := impl.Client()
	if err != nil {
		t.Fatal(err)
	}
	if len(impl.Release().UnknownGates) == 0 {
		t.Fatal("no gate the release lacks")
	}
	s, err := synth.Build("basic", 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	gate := impl.Release().UnknownGates[0]
	cfg := preempt.DefaultConfig()
	cfg.FeatureGates = map[string]bool{gate: true}
	res, err := harness.Decide(context.Background(), cl, s.Cluster, s.Pod, cfg, 0, synth.Base())
	if err != nil && !strings.Contains(err.Error(), gate) {
		t.Errorf("%s=true through the child: %v, want an error naming the gate", gate, err)
	}
	if err == nil && (res.Decision.Status != preempt.Error || !strings.Contains(res.Decision.Message, gate) || strings.Contains(res.Decision.Message, "panicked")) {
		t.Errorf("%s=true through the child: %s %q, want an Error naming the gate (not a panic)", gate, res.Decision.Status, res.Decision.Message)
	}
	// The child is still whole: the next call answers (a panic holding
	// the gates' lock made it hang).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if res, err := harness.Decide(ctx, cl, s.Cluster, s.Pod, preempt.DefaultConfig(), 0, synth.Base()); err != nil || res.Decision.Status == preempt.Error {
		t.Errorf("default gates through the child, next: %v %q", err, res.Decision.Message)
	}
}

// A release that cannot be built is an error saying why, from
// NewEvaluator, which does not name the release (its caller names the
// implementation, as every other's: cli.TestReleaseErrorNamesTheReleaseOnce);
// Binary's names it.
func TestBuildFailure(t *testing.T) {
	t.Setenv(releases.CacheEnv, t.TempDir())
	t.Setenv("PATH", t.TempDir()) // no go command
	impl := releases.New(registry.Releases()[0], 0, nil)
	_, err := impl.NewEvaluator(&preempt.Cluster{})
	if err == nil || !strings.HasPrefix(err.Error(), "built on first use, it needs the Go toolchain") {
		t.Errorf("NewEvaluator without go: %v", err)
	}
	if _, err := impl.Release().Binary(nil); err == nil || !strings.HasPrefix(err.Error(), impl.Name()+": built on first use, it needs the Go toolchain") {
		t.Errorf("Binary without go: %v", err)
	}
	missing := releases.New(releases.Release{Version: "v1.0.0"}, 0, nil)
	if _, err := missing.NewEvaluator(&preempt.Cluster{}); err == nil || !strings.HasPrefix(err.Error(), "no module at") {
		t.Errorf("NewEvaluator of a release without a module: %v", err)
	}
}

// The release module builds, its binary says its version, and its child
// answers over the protocol with v1.36.3's decision (the Success message
// is v1.37's only).
func TestBuildAndServe(t *testing.T) {
	impl := release(t)
	c, err := impl.Client()
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Name(); got != "upstream@v1.36.3" {
		t.Errorf("the child says it is %q", got)
	}
	bin := impl.Release().Built()
	out, err := exec.Command(bin, "-version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "v1.36.3" {
		t.Errorf("%s -version: %q, %v", bin, out, err)
	}
	s, err := synth.Build("basic", 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := harness.Decide(context.Background(), impl, s.Cluster, s.Pod, preempt.DefaultConfig(), 0, synth.Base())
	if err != nil {
		t.Fatal(err)
	}
	want, err := harness.Decide(context.Background(), upstream.Impl{ListOrderTie: true}, s.Cluster, s.Pod, preempt.DefaultConfig(), 0, synth.Base())
	if err != nil {
		t.Fatal(err)
	}
	if got.Decision.Status != preempt.Success || got.Decision.Message != "" {
		t.Errorf("v1.36.3: %s %q, want a Success without a message", got.Decision.Status, got.Decision.Message)
	}
	if got.Decision.NominatedNode != want.Decision.NominatedNode || len(got.Decision.Victims) != len(want.Decision.Victims) {
		t.Errorf("v1.36.3 nominates %s with %v, %s %s with %v", got.Decision.NominatedNode, got.Decision.Victims, upstream.Version, want.Decision.NominatedNode, want.Decision.Victims)
	}
}

// Volumes at v1.36.3: the adapter's fixes reach every release, built
// once. Its copy for v1.36.3 had neither the CSI manager NodeVolumeLimits
// reads (its child crashed on a CSI volume) nor the CSIDrivers,
// VolumeAttachments and sorted PersistentVolume lister (a
// WaitForFirstConsumer claim found no node); now the release decides the
// cluster of cli's TestDecideUpstreamVolumes as the current one does
// (PVC volume limits, ReadWriteOncePod, binding did not change between
// them).
func TestVolumesAtV1363(t *testing.T) {
	impl := release(t)
	data, err := os.ReadFile(filepath.Join("..", "internal", "cli", "testdata", "volumes", "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := loader.LoadCluster("cluster.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, claim := range []string{"data", "once", "local", "pinned"} {
		p := pod("default", "p", "", 10, "2").Obj()
		p.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
		got, cur := decide(t, impl, c, p), decide(t, upstream.Impl{ListOrderTie: true}, c, p)
		if got.Status != preempt.Success || got.NominatedNode != cur.NominatedNode || victims(got) != victims(cur) {
			t.Errorf("claim %s: v1.36.3 %s on %q, victims %s (%s); %s %s on %q, victims %s",
				claim, got.Status, got.NominatedNode, victims(got), got.Message, upstream.Version, cur.Status, cur.NominatedNode, victims(cur))
		}
	}
}

// The configuration's feature gates reach the release's filter phase
// (preempt.SetFilterConfig gives them to the evaluator, which sends them
// with Filter), set one after the other on one evaluator: n1 full, n2
// empty (1 cpu each), a preemptor whose pod-level requests (2 cpu) exceed
// its container's (100m). With PodLevelResources (on by default in
// v1.36.3) it fits nowhere; with the gate off NodeResourcesFit counts the
// container's 100m: it fits n2. (v1.37.2's gates refuse that setting, in
// which PodLevelResourcesFixDefaulting, a gate v1.36.3 lacks, depends on
// PodLevelResources: harness.Decide would not run it.)
func TestFilterGatesReachTheRelease(t *testing.T) {
	impl := release(t)
	c := &preempt.Cluster{Nodes: []*v1.Node{node("n1", "1").Obj(), node("n2", "1").Obj()}, Pods: []*v1.Pod{pod("default", "full", "n1", 0, "1").Obj()}}
	p := pod("default", "preemptor", "", 10, "100m").
		Resources(v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("1Gi")}}).Obj()
	ev, err := impl.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		gates    map[string]bool
		feasible string
	}{
		{nil, ""},
		{map[string]bool{"PodLevelResources": false, "InPlacePodLevelResourcesVerticalScaling": false}, "n2"},
		{nil, ""},
		{map[string]bool{"PodLevelResources": false, "InPlacePodLevelResourcesVerticalScaling": false}, "n2"},
		{map[string]bool{"PodLevelResources": true}, ""},
	} {
		cfg := preempt.DefaultConfig()
		cfg.FeatureGates = tt.gates
		preempt.SetFilterConfig(ev, cfg)
		fr := ev.Filter(context.Background(), p)
		if got := strings.Join(fr.Feasible, ","); got != tt.feasible {
			t.Errorf("gates %v: feasible %q (%+v), want %q", tt.gates, got, fr.NodeStatuses, tt.feasible)
		}
	}
}

// now is the decisions' clock, 2026-01-02T03:04:05Z.
var now = testobj.Epoch.AddDate(0, 0, 1).Add(3*time.Hour + 4*time.Minute + 5*time.Second)

// node is a node of cpu, 32Gi and 110 pods.
func node(name, cpu string) *testobj.NodeWrapper {
	return testobj.MakeNode().Name(name).Allocatable(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: "32Gi", v1.ResourcePods: "110"})
}

// pod is a pod of uid uid-<name> with one container c requesting cpu and
// 1Gi, bound to nodeName ("" for none).
func pod(namespace, name, nodeName string, prio int32, cpu string) *testobj.PodWrapper {
	return testobj.MakePod().Namespace(namespace).Name(name).UID("uid-" + name).Node(nodeName).Priority(prio).Container("c").CPU(cpu).Memory("1Gi")
}

func decide(t *testing.T, impl preempt.Implementation, c *preempt.Cluster, p *v1.Pod) preempt.Decision {
	t.Helper()
	r, err := harness.Decide(context.Background(), impl, c, p, preempt.DefaultConfig(), 0, now)
	if err != nil {
		t.Fatal(err)
	}
	if r.Decision.Status == preempt.Error {
		t.Fatalf("%s: %s", impl.Name(), r.Decision.Message)
	}
	return r.Decision
}

func victims(d preempt.Decision) string {
	var s []string
	for _, v := range d.Victims {
		s = append(s, preempt.Key(v.Namespace, v.Name))
	}
	return strings.Join(s, ",")
}

// Issue 18's namespaceSelector case (PR #138198), on upstream's own code
// at both releases: one node, a priority-0 pod app=a in namespace other
// (the cluster has no Namespace object), a preemptor with required
// anti-affinity to app=a under namespaceSelector team NotIn [x]. v1.36.3
// kept the selector of the incoming pod's term, which matched every
// namespace without a Namespace object: it preempts other/a. v1.37.2
// resolves the selector against the Namespace objects: the pod fits.
func TestNamespaceSelectorChange(t *testing.T) {
	impl := release(t)
	c := &preempt.Cluster{
		Nodes: []*v1.Node{node("n1", "4").Hostname().Obj()},
		Pods:  []*v1.Pod{pod("other", "a", "n1", 0, "1").Label("app", "a").Obj()},
	}
	p := pod("default", "preemptor", "", 10, "1").RequiredPodAntiAffinityTerm(v1.PodAffinityTerm{
		LabelSelector:     testobj.MakeLabelSelector().Label("app", "a").Obj(),
		NamespaceSelector: testobj.MakeLabelSelector().NotIn("team", []string{"x"}).Obj(),
		TopologyKey:       "kubernetes.io/hostname",
	}).Obj()
	old := decide(t, impl, c, p)
	cur := decide(t, upstream.Impl{}, c, p)
	t.Logf("v1.36.3: %s on %q, victims %s; %s: %s", old.Status, old.NominatedNode, victims(old), upstream.Version, cur.Status)
	if old.Status != preempt.Success || old.NominatedNode != "n1" || victims(old) != "other/a" {
		t.Errorf("v1.36.3: %s on %q, victims %s; want other/a preempted on n1", old.Status, old.NominatedNode, victims(old))
	}
	if cur.Status != preempt.Schedulable {
		t.Errorf("%s: %s, want Schedulable", upstream.Version, cur.Status)
	}
	if ref := decide(t, reference.Impl{}, c, p); ref.Status != cur.Status {
		t.Errorf("the reference: %s, %s: %s", ref.Status, upstream.Version, cur.Status)
	}
}

// Overlapping PodDisruptionBudgets (upstream's FilterVictimsWithPDBViolation):
// docs/upstream-findings.md's cluster. Two full nodes of 2 cpu; PDB a
// (app=a) allows no disruption, PDB b (team=x) one. On n1, p1 is app=a and
// team=x, p2 team=x; on n2, r1 is app=a, r2 unlabelled; n1's pods started
// later. v1.36.3 lowers every budget a victim matches: p1 and p2 both
// violate (2 violations on n1, 1 on n2), so n2. v1.37.2 stops at the first
// budget taken below zero (in the contract's order, a then b): p1 stops at
// a, and p2 finds b's disruption left, 1 violation on each node, and the
// later start time picks n1.
func TestOverlappingPDBsChange(t *testing.T) {
	impl := release(t)
	c := &preempt.Cluster{
		Nodes: []*v1.Node{node("n1", "2").Obj(), node("n2", "2").Obj()},
		Pods: []*v1.Pod{
			pod("default", "p1", "n1", 0, "1").Label("app", "a").Label("team", "x").StartTime(now.Add(-50 * time.Minute)).Obj(),
			pod("default", "p2", "n1", 0, "1").Label("team", "x").StartTime(now.Add(-50 * time.Minute)).Obj(),
			pod("default", "r1", "n2", 0, "1").Label("app", "a").StartTime(now.Add(-60 * time.Minute)).Obj(),
			pod("default", "r2", "n2", 0, "1").StartTime(now.Add(-60 * time.Minute)).Obj(),
		},
		PDBs: []*policyv1.PodDisruptionBudget{
			testobj.MakePDB().Namespace("default").Name("a").MatchLabel("app", "a").DisruptionsAllowed(0).Obj(),
			testobj.MakePDB().Namespace("default").Name("b").MatchLabel("team", "x").DisruptionsAllowed(1).Obj(),
		},
	}
	p := pod("default", "preemptor", "", 10, "2").Obj()
	old := decide(t, impl, c, p)
	cur := decide(t, upstream.Impl{}, c, p)
	violations := func(d preempt.Decision) map[string]int {
		m := map[string]int{}
		for _, cand := range d.Candidates {
			m[cand.Node] = cand.NumPDBViolations
		}
		return m
	}
	t.Logf("v1.36.3: %s on %s, victims %s, candidates' violations %v", old.Status, old.NominatedNode, victims(old), violations(old))
	t.Logf("%s: %s on %s, victims %s, candidates' violations %v", upstream.Version, cur.Status, cur.NominatedNode, victims(cur), violations(cur))
	if old.NominatedNode != "n2" || old.NumPDBViolations != 1 || victims(old) != "default/r1,default/r2" {
		t.Errorf("v1.36.3: %s on %q with %d violation(s), victims %s; want n2 with 1, r1 and r2", old.Status, old.NominatedNode, old.NumPDBViolations, victims(old))
	}
	if v := violations(old); v["n1"] != 2 || v["n2"] != 1 {
		t.Errorf("v1.36.3 counts violations %v, want n1:2 n2:1", v)
	}
	if cur.NominatedNode != "n1" || cur.NumPDBViolations != 1 {
		t.Errorf("%s: %s on %q with %d violation(s); want n1 with 1", upstream.Version, cur.Status, cur.NominatedNode, cur.NumPDBViolations)
	}
	if v := violations(cur); v["n1"] != 1 || v["n2"] != 1 {
		t.Errorf("%s counts violations %v, want n1:1 n2:1", upstream.Version, v)
	}
}

// children are the pids of the running children of this process that run
// bin.
func children(bin string) map[int]bool {
	out := map[int]bool{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == bin {
			out[pid] = true
		}
	}
	return out
}

// The release's child killed, or stopped, between two calls: the call is
// an Error decision naming what happened within the timeout, and the next
// decision starts a new child.
func TestChildKilledOrHanging(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the child in /proc")
	}
	release(t)
	s, err := synth.Build("basic", 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		signal syscall.Signal
		want   []string // one of
	}{
		// The request finds the pipe closed, or the answer never comes.
		{syscall.SIGKILL, []string{"exited (signal: killed)", "broken pipe"}},
		{syscall.SIGSTOP, []string{"did not answer within 2s (awaiting the answer to request 2, Preempt on evaluator 1); killed"}},
	} {
		t.Run(tt.signal.String(), func(t *testing.T) {
			impl := releases.New(registry.Releases()[0], 2*time.Second, nil)
			defer impl.Close()
			bin := impl.Release().Built()
			before := children(bin)
			ev, err := impl.NewEvaluator(s.Cluster)
			if err != nil {
				t.Fatal(err)
			}
			pid := 0
			for p := range children(bin) {
				if !before[p] {
					pid = p
				}
			}
			if pid == 0 {
				t.Fatalf("no new child runs %s", bin)
			}
			if err := syscall.Kill(pid, tt.signal); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			req := &preempt.Request{Pod: s.Pod, Config: preempt.DefaultConfig(), Now: synth.Base(), Filter: map[string]preempt.Code{}}
			for _, n := range s.Cluster.Nodes {
				req.Filter[n.Name] = preempt.Unschedulable
			}
			d := harness.Preempt(context.Background(), ev, s.Cluster, req)
			said := false
			for _, w := range tt.want {
				said = said || strings.Contains(d.Message, w)
			}
			if d.Status != preempt.Error || !said || !strings.Contains(d.Message, "upstream-"+impl.Release().Version+"-") {
				t.Errorf("decision %s %q, want an Error naming the binary and saying one of %q", d.Status, d.Message, tt.want)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %v", took)
			}
			r, err := harness.Decide(context.Background(), impl, s.Cluster, s.Pod, preempt.DefaultConfig(), 0, synth.Base())
			if err != nil || r.Decision.Status != preempt.Success {
				t.Errorf("the next decision: %v %q %v", r.Decision.Status, r.Decision.Message, err)
			}
		})
	}
}

// SuiteEnv, set, runs the conformance suite against upstream@v1.36.3
// (TestSuiteAgainstV1363). The suite's expectations are v1.37.2's, which
// the reference models: the tables and properties that fail there fail
// because the releases differ (issue 20 lists them), so the test is not
// run by default, nor in CI.
const SuiteEnv = "PREEMPTBENCH_RELEASE_SUITE"

func TestSuiteAgainstV1363(t *testing.T) {
	if os.Getenv(SuiteEnv) == "" {
		t.Skipf("set %s=1 to run the suite (%s's expectations) against upstream@v1.36.3", SuiteEnv, upstream.Version)
	}
	preempttest.Run(t, release(t))
}
