package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"
)

const testNow = "2026-01-01T01:00:00Z"

func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// The cluster in testdata/small, worked by hand:
//   - node-c (1 cpu) can never hold the 1500m preemptor: UnschedulableAndUnresolvable.
//   - node-a: 3 cpu, a1 (prio 1, 1000m) + a2 (prio 5, 1000m) + a3 (prio 20, 500m);
//     removing a1 and a2 frees 2500m; a2 is reprieved first (1500m free still
//     fits), a1 is not: victims [a1], no PDB involved.
//   - node-b: 2 cpu, b1 (app=b, PDB allows 0) and b2; both must go; b1 is
//     PDB-violating: victims [b1 b2] (b1 started earlier), 1 violation.
//   - candidates: node-a (non-violating) then node-b (violating); node-a wins
//     on PDB violations; q (prio 1, nominated to node-a) loses its nomination.
func TestDecideSmallClusterGolden(t *testing.T) {
	stdout, stderr, code := runCLI(t, "decide", "-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml", "-now", testNow)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	want, err := os.ReadFile("testdata/small/want.json")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), stdout); diff != "" {
		t.Errorf("decide output (-want +got):\n%s", diff)
	}
	var got DecisionJSON
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.NominatedNode != "node-a" || len(got.Victims) != 1 || got.Victims[0].Name != "a1" {
		t.Errorf("decision = %+v, want node-a with victim a1", got)
	}
}

func TestDecideJSONKeys(t *testing.T) {
	stdout, _, code := runCLI(t, "decide", "-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml", "-now", testNow)
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	want := []string{"candidates", "clearedNominations", "feasibleNodes", "implementation", "message", "nominatedNode", "numPDBViolations", "numPodGroupDisruptions", "status", "victims"}
	if diff := cmp.Diff(want, sortedCopy(keys)); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const okNode = `
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
`

const okPod = `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  priority: 10
  containers: [{name: c, image: pause, resources: {requests: {cpu: 2}}}]
`

func list(items string) string { return "apiVersion: v1\nkind: List\nitems:" + items }

func TestDecideOutcomes(t *testing.T) {
	dir := t.TempDir()
	cluster := writeFile(t, dir, "c.yaml", list(okNode))
	for _, tc := range []struct {
		name, pod  string
		wantStatus string
		wantMsg    string
		feasible   []string
	}{
		{
			name:       "request above every node's allocatable",
			pod:        okPod,
			wantStatus: "Unschedulable",
			wantMsg:    "0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
		},
		{
			name:       "fits already",
			pod:        strings.Replace(okPod, "cpu: 2", "cpu: 100m", 1),
			wantStatus: "Schedulable",
			feasible:   []string{"n1"},
		},
		{
			name:       "preemptionPolicy Never",
			pod:        strings.Replace(okPod, "priority: 10", "priority: 10\n  preemptionPolicy: Never", 1),
			wantStatus: "Unschedulable",
			wantMsg:    "not eligible due to preemptionPolicy=Never.",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := writeFile(t, dir, "p.yaml", tc.pod)
			stdout, stderr, code := runCLI(t, "decide", "-cluster", cluster, "-pod", pod, "-now", testNow)
			if code != ExitOK {
				t.Fatalf("exit %d, stderr %s", code, stderr)
			}
			var got DecisionJSON
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatal(err)
			}
			if got.Status != tcStatus(tc.wantStatus) || got.Message != tc.wantMsg {
				t.Errorf("status %q message %q, want %q %q", got.Status, got.Message, tc.wantStatus, tc.wantMsg)
			}
			if diff := cmp.Diff(append([]string{}, tc.feasible...), got.FeasibleNodes); diff != "" {
				t.Errorf("feasibleNodes (-want +got):\n%s", diff)
			}
		})
	}
}

func tcStatus(s string) preempt.Code { return preempt.Code(s) }

// A feature an implementation does not model is refused, never answered;
// preferred terms and ScheduleAnyway constraints only score, and are not.
func TestDecideRefusesUnmodelledFeatures(t *testing.T) {
	dir := t.TempDir()
	antiAffinity := func(kind string) string {
		return `  affinity:
    podAntiAffinity:
      ` + kind + `:
`
	}
	for _, tc := range []struct {
		name, clusterExtra, podExtra, impl, want string
	}{
		{name: "resource claims", podExtra: `  resourceClaims:
  - {name: gpu, resourceClaimName: gpu-claim}
`, impl: "optimized", want: `optimized: dynamic resource allocation is not modelled: pod default/p has claim "gpu", and the cluster holds no ResourceClaim gpu-claim: DynamicResources' PreEnqueue keeps the pod out of the scheduling queue`},
		// DRA-backed extended resources are modelled; the implicit name
		// of a class that loses its explicit name to another is not (the
		// scheduler's cache maps it or not by informer order).
		{name: "an extended resource whose class depends on informer order", clusterExtra: `- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: a}
  spec: {extendedResourceName: example.com/gpu}
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: b}
  spec: {extendedResourceName: example.com/gpu}
`, podExtra: `  initContainers: [{name: i, image: pause, resources: {requests: {deviceclass.resource.kubernetes.io/b: "1"}, limits: {deviceclass.resource.kubernetes.io/b: "1"}}}]
`, want: "reference: dynamic resource allocation is not modelled: pod default/p asks for extended resource deviceclass.resource.kubernetes.io/b: DeviceClass b names extended resource example.com/gpu, as DeviceClass a does, which wins it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster := writeFile(t, dir, "c.yaml", list(okNode+tc.clusterExtra))
			pod := writeFile(t, dir, "p.yaml", strings.Replace(okPod, "metadata: {", "metadata: {labels: {app: x}, ", 1)+tc.podExtra)
			impl := tc.impl
			if impl == "" {
				impl = "reference"
			}
			stdout, stderr, code := runCLI(t, "decide", "-cluster", cluster, "-pod", pod, "-impl", impl, "-now", testNow)
			if code != ExitBadInput || stdout != "" {
				t.Fatalf("exit %d, stdout %q, want 2 and nothing", code, stdout)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q lacks %q", stderr, tc.want)
			}
		})
	}
	// Scoring-only terms change no filter: no refusal.
	cluster := writeFile(t, dir, "c.yaml", list(okNode))
	pod := writeFile(t, dir, "p.yaml", okPod+`  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}
`+antiAffinity("preferredDuringSchedulingIgnoredDuringExecution")+`      - {weight: 1, podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: x}}}}
`)
	if _, stderr, code := runCLI(t, "decide", "-cluster", cluster, "-pod", pod, "-now", testNow); code != ExitOK {
		t.Errorf("scoring-only terms: exit %d: %s", code, stderr)
	}
}

func TestDecideBadInput(t *testing.T) {
	dir := t.TempDir()
	goodCluster := writeFile(t, dir, "good.yaml", list(okNode))
	goodPod := writeFile(t, dir, "pod.yaml", okPod)
	podOn := func(node, name, extra string) string {
		return `
- apiVersion: v1
  kind: Pod
  metadata: {name: ` + name + `, namespace: default}
  spec:
    nodeName: ` + node + `
    priority: 0
    containers: [{name: c, image: pause` + extra + `}]
`
	}
	for _, tc := range []struct {
		name    string
		cluster string // file content; "" means goodCluster
		pod     string // file content; "" means goodPod
		args    []string
		want    string
	}{
		{name: "missing flags", args: []string{}, want: "-cluster and -pod (or -pod-group) are required"},
		{name: "unreadable cluster file", args: []string{"-cluster", filepath.Join(dir, "nope.yaml"), "-pod", goodPod}, want: "nope.yaml: no such file or directory"},
		{name: "empty file", cluster: "\n", want: "empty file"},
		{name: "malformed YAML", cluster: "items: [\n  - {", want: "malformed YAML"},
		{name: "malformed JSON", cluster: `{"kind": "List", "items": [`, want: "malformed"},
		{name: "known kind, unknown version", cluster: list(okNode + `
- apiVersion: v2
  kind: Pod
  metadata: {name: p9, namespace: default}
`), want: `pod default/p9: unsupported apiVersion "v2" for kind Pod`},
		{name: "object without kind", cluster: list(okNode + `
- apiVersion: v1
  metadata: {name: what}
`), want: `object "what" has no kind`},
		{name: "duplicate node", cluster: list(okNode + okNode), want: `node "n1" appears twice`},
		{name: "duplicate pod", cluster: list(okNode + podOn("n1", "p1", "") + podOn("n1", "p1", "")), want: "pod default/p1 appears twice"},
		{name: "invalid quantity", cluster: list(okNode + podOn("n1", "p1", `, resources: {requests: {cpu: 12xyz}}`)), want: "pod default/p1: quantities must match the regular expression"},
		{name: "negative quantity", cluster: list(okNode + podOn("n1", "p1", `, resources: {requests: {memory: -1Gi}}`)), want: `pod default/p1 container "c" requests: memory is negative (-1Gi)`},
		{name: "overflow-sized quantity", cluster: list(okNode + podOn("n1", "p1", `, resources: {requests: {memory: 8E}}`)), want: `pod default/p1 container "c" requests: memory is too large (8E`},
		{name: "overflow-sized allocatable", cluster: list(`
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status: {allocatable: {cpu: "100P"}}
`), want: "node n1 allocatable: cpu is too large (100P"},
		{name: "priority above int32", cluster: list(okNode + `
- apiVersion: v1
  kind: Pod
  metadata: {name: big, namespace: default}
  spec: {nodeName: n1, priority: 2147483648, containers: [{name: c, image: pause}]}
`), want: "pod default/big: field spec.priority: 2147483648 is out of range (a 32-bit int)"},
		{name: "host port out of range", cluster: list(okNode + podOn("n1", "p1", `, ports: [{containerPort: 80, hostPort: 70000}]`)), want: `pod default/p1 container "c": host port 70000 out of range`},
		{name: "invalid PDB selector", cluster: list(okNode + `
- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata: {name: bad, namespace: default}
  spec: {selector: {matchExpressions: [{key: app, operator: Bogus, values: [x]}]}}
`), want: `poddisruptionbudget default/bad: invalid selector: "Bogus" is not a valid label selector operator`},
		{name: "invalid node affinity", pod: okPod + `  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: Gt, values: [a, b]}]}]
`, want: "pod default/p: invalid required node affinity"},
		{name: "pod file with two pods", pod: list(`
- {apiVersion: v1, kind: Pod, metadata: {name: a}}
- {apiVersion: v1, kind: Pod, metadata: {name: b}}
`), want: "want exactly one Pod, found 2 objects"},
		{name: "pod file holds a node", pod: "apiVersion: v1\nkind: Node\nmetadata: {name: node-x}\n", want: "want a Pod, found a Node"},
		{name: "preemptor already bound", pod: strings.Replace(okPod, "spec:\n", "spec:\n  nodeName: n1\n", 1), want: `pod default/p is already bound to node "n1"`},
		{name: "preemptor's name bound in the cluster", cluster: list(okNode + podOn("n1", "p", "")), want: `preemptor default/p is also in the cluster (on node "n1")`},
		{name: "negative offset", args: []string{"-offset", "-1"}, want: "-offset -1 out of range"},
		{name: "bad -now", args: []string{"-now", "yesterday"}, want: `-now: parsing time "yesterday"`},
		{name: "bad -o", args: []string{"-o", "xml"}, want: `-o must be json or text, not "xml"`},
		{name: "unknown implementation", args: []string{"-impl", "fastest"}, want: `unknown implementation "fastest"`},
		{name: "percentage above 100", args: []string{"-min-candidate-nodes-percentage", "101"}, want: "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"},
		{name: "both candidate settings zero", args: []string{"-min-candidate-nodes-percentage", "0", "-min-candidate-nodes-absolute", "0"}, want: "cannot be zero at the same time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster, pod := goodCluster, goodPod
			if tc.cluster != "" {
				cluster = writeFile(t, t.TempDir(), "cluster.yaml", tc.cluster)
			}
			if tc.pod != "" {
				pod = writeFile(t, t.TempDir(), "pod.yaml", tc.pod)
			}
			args := append([]string{"decide", "-cluster", cluster, "-pod", pod, "-now", testNow}, tc.args...)
			if tc.name == "missing flags" || tc.name == "unreadable cluster file" {
				args = append([]string{"decide"}, tc.args...)
			}
			stdout, stderr, code := runCLI(t, args...)
			if code != ExitBadInput {
				t.Errorf("exit code %d, want %d (stdout %q)", code, ExitBadInput, stdout)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q does not contain %q", stderr, tc.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing on bad input", stdout)
			}
		})
	}
}

// What kube-scheduler never sees is left out with a note, not refused:
// pods of nodes the dump does not hold, completed pods, kinds the filters
// do not read.
func TestDecideLeavesOutWhatTheSchedulerNeverSees(t *testing.T) {
	dir := t.TempDir()
	extra := `
- apiVersion: v1
  kind: Pod
  metadata: {name: gone, namespace: default}
  spec: {nodeName: ghost, containers: [{name: c, image: pause}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: waiting, namespace: default}
  spec: {containers: [{name: c, image: pause}]}
  status: {nominatedNodeName: ghost}
- apiVersion: v1
  kind: Pod
  metadata: {name: job, namespace: default}
  spec: {nodeName: n1, priority: 0, containers: [{name: c, image: pause, resources: {requests: {cpu: 3}}}]}
  status: {phase: Succeeded}
- apiVersion: v1
  kind: Service
  metadata: {name: svc, namespace: default}
`
	bigNode := strings.Replace(okNode, `cpu: "1"`, `cpu: "4"`, 1)
	cluster := writeFile(t, dir, "c.yaml", list(bigNode+extra))
	pod := writeFile(t, dir, "p.yaml", okPod)
	stdout, stderr, code := runCLI(t, "decide", "-cluster", cluster, "-pod", pod, "-now", testNow)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"note: left out 1 pods in phase Succeeded or Failed, which kube-scheduler's informer never lists: default/job",
		"note: left out 2 pods of nodes the dump does not hold, which kube-scheduler's snapshot never holds: default/gone (bound to ghost), default/waiting (nominated to ghost)",
		"note: skipped 1 objects of kinds the filters do not read: 1 v1 Service",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	// The completed pod's 3 cpu are free: the preemptor fits.
	if !strings.Contains(stdout, `"status": "Schedulable"`) {
		t.Errorf("stdout %s: want Schedulable (the Succeeded pod frees its cpu)", stdout)
	}
}

// component-helpers v0.36.3's PodRequests adds a pod's overhead into its
// pod-level requests in place. Called on a shared pod, that once made the
// reference evict on an exact fit and -impl all report one implementation
// contaminating the next. What remains is upstream's own arithmetic:
// PodInfo.CalculateResource calls PodRequests twice for "big" (no container
// request), so kube-scheduler counts its 64Mi overhead twice: 1536Mi +
// 1536Mi + 2*64Mi leave 896Mi of the 4Gi (docs/divergences.md). Every
// implementation must give that answer, and no input may change.
func TestDecidePodLevelRequestsWithOverhead(t *testing.T) {
	dir := t.TempDir()
	clusterYAML := list(`
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status: {allocatable: {cpu: "4", memory: 4Gi, pods: "10"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: small, namespace: default}
  spec: {nodeName: n1, priority: 0, containers: [{name: c, image: pause, resources: {requests: {memory: 1536Mi}}}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: big, namespace: default}
  spec:
    nodeName: n1
    priority: 0
    resources: {requests: {memory: 1.5Gi}}
    overhead: {memory: 64Mi}
    containers: [{name: c, image: pause}]
`)
	cluster := writeFile(t, dir, "c.yaml", clusterYAML)
	for _, tc := range []struct {
		mem  string
		want preempt.Code
	}{
		{"512Mi", preempt.Schedulable},
		{"896Mi", preempt.Schedulable}, // the exact fit, as upstream counts
		{"897Mi", preempt.Success},
		{"960Mi", preempt.Success}, // the exact fit were the overhead counted once
	} {
		pod := writeFile(t, dir, "p.yaml", strings.Replace(okPod, "requests: {cpu: 2}", "requests: {cpu: 1, memory: "+tc.mem+"}", 1))
		stdout, stderr, code := runCLI(t, "decide", "-cluster", cluster, "-pod", pod, "-impl", "all", "-now", testNow)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", tc.mem, code, stderr)
		}
		var outs []DecisionJSON
		if err := json.Unmarshal([]byte(stdout), &outs); err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			if o.Status != tc.want {
				t.Errorf("%s: %s says %s (%v), want %s", tc.mem, o.Implementation, o.Status, o.Victims, tc.want)
			}
		}
	}
}

// The upstream adapter runs the whole default profile, the reference
// InterPodAffinity too: inter-pod affinity and topology spread decide there,
// with the PreFilter state updated as the dry run removes victims. With
// -impl all, an implementation that does not model a feature refuses, with
// a note, and the others answer, all alike.
func TestDecideUpstreamDefaultProfile(t *testing.T) {
	dir := t.TempDir()
	node := func(name, zone string) string {
		return `
- apiVersion: v1
  kind: Node
  metadata: {name: ` + name + `, labels: {kubernetes.io/hostname: ` + name + `, zone: ` + zone + `}}
  status: {allocatable: {cpu: "4", memory: 4Gi, pods: "10"}}`
	}
	pod := func(name, node string, prio int, labels, extra string) string {
		return `
- apiVersion: v1
  kind: Pod
  metadata: {name: ` + name + `, namespace: default, labels: {` + labels + `}}
  spec:
    nodeName: ` + node + `
    priority: ` + fmt.Sprint(prio) + `
    containers: [{name: c, image: pause, resources: {requests: {cpu: 100m}}}]` + extra
	}
	antiX := `
    affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: db}}}]}}`
	antiY := strings.Replace(antiX, "app: db", "app: web", 1)
	preemptor := func(extra string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, labels: {app: web}}\nspec:\n  priority: 10\n  containers: [{name: c, image: pause, resources: {requests: {cpu: 100m}}}]\n" + extra
	}
	for _, tc := range []struct {
		name, cluster, pod string
		status             preempt.Code
		node, message      string
		victims            []string
		answer             []string // the implementations that model it
	}{
		{name: "preemptor's anti-affinity resolved by evicting the matching pod",
			cluster: list(node("n1", "a") + pod("guard", "n1", 0, "app: db", "")),
			pod:     preemptor("  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: db}}}]}}\n"),
			status:  preempt.Success, node: "n1", victims: []string{"guard"}, answer: []string{"reference", "upstream", "optimized"}},
		{name: "an existing higher-priority pod's anti-affinity cannot be preempted",
			cluster: list(node("n1", "a") + pod("guard", "n1", 100, "app: db", antiY) + pod("filler", "n1", 0, "app: misc", "")),
			pod:     preemptor(""),
			status:  preempt.Unschedulable, message: "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules.", answer: []string{"reference", "upstream", "optimized"}},
		{name: "an existing lower-priority pod's anti-affinity is preempted",
			cluster: list(node("n1", "a") + pod("guard", "n1", 0, "app: db", antiY)),
			pod:     preemptor(""),
			status:  preempt.Success, node: "n1", victims: []string{"guard"}, answer: []string{"reference", "upstream", "optimized"}},
		{name: "zonal spread: one pod of the crowded zone goes",
			cluster: list(node("n1", "a") + node("n2", "b") + pod("y1", "n1", 5, "app: web", "") +
				strings.Replace(pod("blocker", "n1", 100, "app: misc", ""), "cpu: 100m", "cpu: 3850m", 1) +
				pod("y2", "n2", 0, "app: web", "") + pod("y3", "n2", 0, "app: web", "")),
			pod:    preemptor("  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}\n"),
			status: preempt.Success, node: "n2", victims: []string{"y3"}, answer: []string{"reference", "upstream", "optimized"}}, // y2 is reprieved first (more important by name), then y3 cannot be
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster := writeFile(t, dir, "c.yaml", tc.cluster)
			podFile := writeFile(t, dir, "p.yaml", tc.pod)
			stdout, stderr, code := runCLI(t, "decide", "-cluster", cluster, "-pod", podFile, "-impl", "all", "-now", testNow)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var outs []DecisionJSON
			if err := json.Unmarshal([]byte(stdout), &outs); err != nil {
				t.Fatal(err)
			}
			var answered []string
			for _, o := range outs {
				answered = append(answered, o.Implementation)
			}
			if !slices.Equal(answered, tc.answer) {
				t.Errorf("answered: %v, want %v (stderr %s)", answered, tc.answer, stderr)
			}
			for _, o := range outs {
				var victims []string
				for _, v := range o.Victims {
					victims = append(victims, v.Name)
				}
				wantMsg := tc.message
				if wantMsg == "" && tc.status == "Success" {
					wantMsg = successMessage(tc.node, len(tc.victims))
				}
				if o.Status != tc.status || o.NominatedNode != tc.node || o.Message != wantMsg || !slices.Equal(victims, tc.victims) {
					t.Errorf("%s: got %s %q on %q, victims %v; want %s %q on %q, victims %v", o.Implementation, o.Status, o.Message, o.NominatedNode, victims, tc.status, wantMsg, tc.node, tc.victims)
				}
			}
		})
	}
}

// load does not validate the cluster again once the preemptor's pending
// copy is dropped: LoadPathsWith validated it, and a valid cluster
// without some of its pods is valid.
func TestWithoutPodKeepsClusterValid(t *testing.T) {
	for _, shape := range synth.Shapes() {
		s := synth.MustBuild(shape, 4, 1)
		c := *s.Cluster
		c.Pods = append(append([]*v1.Pod(nil), c.Pods...), s.Pod.DeepCopy()) // a pending copy
		if err := c.Validate(); err != nil {
			t.Fatalf("%s: %v", shape, err)
		}
		out := withoutPod(&c, s.Pod)
		if len(out.Pods) != len(s.Cluster.Pods) {
			t.Errorf("%s: %d pods left, want %d", shape, len(out.Pods), len(s.Cluster.Pods))
		}
		if err := out.Validate(); err != nil {
			t.Errorf("%s: %v", shape, err)
		}
	}
}

// decide raises the collector's target while it loads, and puts it back.
func TestDecideRestoresGCPercent(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC set")
	}
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	if _, _, code := runCLI(t, "decide", "-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml", "-now", testNow); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d after decide, want 100", got)
	}
}

// A -fail rule that no API call meets is said, naming the calls made.
func TestDecideUnmatchedFault(t *testing.T) {
	_, stderr, code := runCLI(t, "decide", "-impl", "reference", "-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml", "-now", testNow, "-fail", "delete:default/nobody")
	if code != ExitOK || !strings.Contains(stderr, "compare decide: note: -fail delete:default/nobody matched no API call of reference's decision (its calls: ") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// successMessage is Evaluator.Preempt's Success message from v1.37 (without
// DefaultPreemption's "preemption: " prefix), which the Decision carries.
func successMessage(node string, victims int) string {
	return fmt.Sprintf("found a potential placement for pod on node %s, preempting %d victims", node, victims)
}

// Releases of upstream that disagree point to compare upgrade, which names
// the switches explaining the difference; implementations that are not
// two releases do not.
func TestDecideAcrossReleasesPointsToUpgrade(t *testing.T) {
	for _, c := range []struct {
		names    []string
		from, to string
	}{
		{[]string{"reference", "optimized", "upstream"}, "", ""},
		{[]string{"upstream", "upstream@" + preempt.CurrentRelease}, "", ""},
		{[]string{"upstream@/src/kubernetes", "upstream"}, "", ""},
		{[]string{"upstream", "upstream@v1.36.3", "reference", "upstream@v1.35.4"}, "v1.35.4", preempt.CurrentRelease},
	} {
		from, to, ok := releaseSpan(c.names)
		if from != c.from || to != c.to || ok != (c.from != "") {
			t.Errorf("releaseSpan(%q) = %s, %s, %v; want %s, %s", c.names, from, to, ok, c.from, c.to)
		}
	}
	_, stderr, code := runCLI(t, "decide", "-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml", "-now", testNow,
		"-impl", "upstream@v1.36.3,upstream")
	want := "upstream@v1.36.3 and upstream DISAGREE (exit 1); they are releases v1.36.3 to " + preempt.CurrentRelease +
		", whose differences `compare upgrade -from v1.36.3 -to " + preempt.CurrentRelease + "` explains"
	if code != ExitDiffer || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, want %d and %q in\n%s", code, ExitDiffer, want, stderr)
	}
}

// A pod with scheduling gates never reaches a scheduling cycle
// (SchedulingGates' PreEnqueue holds it): decide refuses it, exit 2,
// naming the pod and its gates, with every implementation.
func TestDecideRefusesGatedPod(t *testing.T) {
	pod, err := os.ReadFile("testdata/small/pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	gated := strings.Replace(string(pod), "  priority: 10\n", "  priority: 10\n  schedulingGates: [{name: example.com/quota}, {name: example.com/ready}]\n", 1)
	if gated == string(pod) {
		t.Fatal("testdata/small/pod.yaml changed: the gates were not added")
	}
	path := filepath.Join(t.TempDir(), "gated.yaml")
	if err := os.WriteFile(path, []byte(gated), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, impl := range []string{"reference", "optimized", "upstream", "all"} {
		stdout, stderr, code := runCLI(t, "decide", "-cluster", "testdata/small/cluster.yaml", "-pod", path, "-impl", impl, "-now", testNow)
		if code != ExitBadInput || stdout != "" {
			t.Errorf("-impl %s: exit %d, stdout %q; want exit %d and nothing on stdout", impl, code, stdout, ExitBadInput)
		}
		want := "pod default/preemptor has scheduling gates (example.com/quota, example.com/ready): kube-scheduler's SchedulingGates plugin keeps it out of the scheduling queue"
		if !strings.Contains(stderr, want) {
			t.Errorf("-impl %s: stderr %q, want it to hold %q", impl, stderr, want)
		}
	}
}

// A pod a PreFilter plugin before DynamicResources rejects on every node
// (here VolumeBinding: its claim does not exist) gets kube-scheduler's
// answer, not DefaultPreemption's: DynamicResources' PostFilter, first in
// the chain, fails reading its state ("not found"), an Error that ends
// the chain. Every implementation says so, nothing is preempted, and a
// note says why. (upstream's TestVolumeCases checks the same against
// kube-scheduler's own PostFilter chain.)
func TestDecidePreFilterRejectionEndsAtDynamicResources(t *testing.T) {
	pod, err := os.ReadFile("testdata/small/pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	withClaim := strings.Replace(string(pod), "  priority: 10\n", "  priority: 10\n  volumes: [{name: d, persistentVolumeClaim: {claimName: missing}}]\n", 1)
	path := filepath.Join(t.TempDir(), "claim.yaml")
	if err := os.WriteFile(path, []byte(withClaim), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, "decide", "-cluster", "testdata/small/cluster.yaml", "-pod", path, "-impl", "all", "-now", testNow)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []DecisionJSON
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d decisions, want 3", len(got))
	}
	for _, d := range got {
		if d.Status != preempt.Error || d.Message != "not found" || len(d.Victims) != 0 || d.NominatedNode != "" {
			t.Errorf("%s: %s %q, victims %v, nominated %q; want Error \"not found\", nothing preempted", d.Implementation, d.Status, d.Message, d.Victims, d.NominatedNode)
		}
	}
	if want := `a PreFilter plugin before DynamicResources rejected the pod on every node (persistentvolumeclaim "missing" not found)`; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q, want it to hold %q", stderr, want)
	}
}
