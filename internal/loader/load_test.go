package loader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	k8sv1 "k8s.io/kubernetes/pkg/apis/core/v1"
)

// Typed lists as kubectl and client-go print them: items without kind or
// apiVersion, which they take from the list.
func TestLoadTypedListsWithKindlessItems(t *testing.T) {
	data := `apiVersion: v1
kind: NodeList
items:
- metadata: {name: a}
  status: {allocatable: {cpu: "2"}}
---
apiVersion: v1
kind: PodList
items:
- metadata: {name: p, namespace: ns}
  spec: {nodeName: a, containers: [{name: c, image: i}]}
`
	c, notes, err := LoadCluster("typed.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 1 || len(c.Pods) != 1 || c.Pods[0].Namespace != "ns" {
		t.Fatalf("got %d nodes, %d pods", len(c.Nodes), len(c.Pods))
	}
	if len(notes) != 0 {
		t.Errorf("notes %q, want none", notes)
	}
	// A plain List's items must carry their kind.
	_, _, err = LoadCluster("list.yaml", []byte("apiVersion: v1\nkind: List\nitems:\n- metadata: {name: what}\n"))
	if err == nil || !strings.Contains(err.Error(), `list.yaml: item 0: object "what" has no kind`) {
		t.Errorf("plain List with a kind-less item: %v", err)
	}
}

// A JSON array of lists, and a stream of JSON values, are read whole.
func TestLoadJSONArraysAndStreams(t *testing.T) {
	nodes := `{"kind":"NodeList","apiVersion":"v1","items":[{"metadata":{"name":"a"}}]}`
	pods := `{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"p"},"spec":{"nodeName":"a","containers":[{"name":"c","image":"i"}]}}]}`
	for name, data := range map[string]string{"array": "[" + nodes + "," + pods + "]", "stream": nodes + "\n" + pods + "\n"} {
		c, _, err := LoadCluster(name+".json", []byte(data))
		if err != nil || len(c.Nodes) != 1 || len(c.Pods) != 1 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The two published forms that are not the API's are refused with a
// message saying what the file is.
func TestLoadRefusesNonAPIForms(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"internal.json", `{"selfLink": "/api/v1/nodes", "Items": [{"name": "a"}]}`,
			`internal.json: not in a versioned API form: no kind or apiVersion, and "Items" capitalised, as in the internal form kubectl 1.8 printed`},
		{"stream.json", `{"kind":"NodeList","apiVersion":"v1","items":[]}` + "\n==== START logs for container c of pod kube-system/p ====\nhello\n",
			"stream.json: not a kubectl dump: 1 JSON documents, then text that is not JSON at line 2"},
	} {
		_, _, err := LoadCluster(tc.name, []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// policy/v1beta1 PDBs are served as policy/v1 by the API server: a
// non-empty selector is kept, an empty one (matching nothing in v1beta1)
// still matches nothing.
func TestLoadConvertsV1beta1PDBs(t *testing.T) {
	data := `apiVersion: v1
kind: List
items:
- apiVersion: policy/v1beta1
  kind: PodDisruptionBudget
  metadata: {name: some, namespace: ns}
  spec: {minAvailable: 1, selector: {matchLabels: {app: x}}}
  status: {disruptionsAllowed: 0}
- apiVersion: policy/v1beta1
  kind: PodDisruptionBudget
  metadata: {name: none, namespace: ns}
  spec: {minAvailable: 1, selector: {}}
`
	c, _, err := LoadCluster("pdb.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.PDBs) != 2 {
		t.Fatalf("%d PDBs", len(c.PDBs))
	}
	pod := labels.Set{"app": "x"}
	for i, want := range []bool{true, false} {
		sel, err := metav1.LabelSelectorAsSelector(c.PDBs[i].Spec.Selector)
		if err != nil {
			t.Fatal(err)
		}
		if got := sel.Matches(pod); got != want {
			t.Errorf("PDB %s matches app=x: %v, want %v (selector %v)", c.PDBs[i].Name, got, want, c.PDBs[i].Spec.Selector)
		}
	}
}

// The API server's defaulting: a container with limits only requests its
// limits; a node with capacity only has it allocatable.
func TestLoadDefaultsAsTheAPIServer(t *testing.T) {
	data := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: a}
  status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: p}
  spec:
    nodeName: a
    containers: [{name: c, image: i, resources: {limits: {cpu: 1500m}}}]
`
	c, _, err := LoadCluster("d.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Nodes[0].Status.Allocatable[v1.ResourceCPU]; got.Cmp(resource.MustParse("4")) != 0 {
		t.Errorf("node allocatable cpu %v, want its capacity 4", got.String())
	}
	if got := c.Pods[0].Spec.Containers[0].Resources.Requests[v1.ResourceCPU]; got.Cmp(resource.MustParse("1500m")) != 0 {
		t.Errorf("container requests cpu %v, want its limit 1500m", got.String())
	}
}

// What kube-scheduler never sees is left out, each with a note; other
// kinds are skipped.
func TestLoadLeavesOutWhatTheSchedulerNeverSees(t *testing.T) {
	data := `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: a}}
- {apiVersion: v1, kind: Pod, metadata: {name: done}, spec: {nodeName: a, containers: [{name: c, image: i}]}, status: {phase: Succeeded}}
- {apiVersion: v1, kind: Pod, metadata: {name: failed}, spec: {containers: [{name: c, image: i}]}, status: {phase: Failed}}
- {apiVersion: v1, kind: Pod, metadata: {name: orphan}, spec: {nodeName: gone, containers: [{name: c, image: i}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: hopeful}, spec: {containers: [{name: c, image: i}]}, status: {nominatedNodeName: gone}}
- {apiVersion: v1, kind: Pod, metadata: {name: kept}, spec: {nodeName: a, containers: [{name: c, image: i}]}, status: {phase: Running}}
- {apiVersion: v1, kind: Service, metadata: {name: s}}
- {apiVersion: v1, kind: Event, metadata: {name: e}}
- {apiVersion: v1, kind: Event, metadata: {name: f}}
`
	c, notes, err := LoadCluster("x.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Pods) != 1 || c.Pods[0].Name != "kept" {
		t.Errorf("pods %v, want only kept", c.Pods)
	}
	want := []string{
		"left out 2 pods in phase Succeeded or Failed, which kube-scheduler's informer never lists: default/done, default/failed",
		"left out 2 pods of nodes the dump does not hold, which kube-scheduler's snapshot never holds: default/orphan (bound to gone), default/hopeful (nominated to gone)",
		"skipped 3 objects of kinds the filters do not read: 2 v1 Event, 1 v1 Service",
	}
	if diff := cmp.Diff(want, notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

// A directory (kubectl cluster-info dump --output-directory) and several
// paths are read as one cluster; files that are not JSON or YAML are
// passed over.
func TestLoadPathsDirectoryAndFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("dump/nodes.json", `{"kind":"NodeList","apiVersion":"v1","items":[{"metadata":{"name":"a"}}]}`)
	write("dump/default/pods.json", `{"kind":"PodList","apiVersion":"v1","items":null}`)
	write("dump/kube-system/pods.json", `{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"p","namespace":"kube-system"},"spec":{"nodeName":"a","containers":[{"name":"c","image":"i"}]}}]}`)
	write("dump/kube-system/services.json", `{"kind":"ServiceList","apiVersion":"v1","items":[{"metadata":{"name":"s"}}]}`)
	write("dump/kube-system/p/logs.txt", "not json")
	extra := write("pdb.yaml", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b, namespace: kube-system}\nspec: {selector: {matchLabels: {a: b}}}\n")
	c, _, err := LoadPaths([]string{filepath.Join(dir, "dump"), extra})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 1 || len(c.Pods) != 1 || len(c.PDBs) != 1 {
		t.Errorf("got %d nodes, %d pods, %d pdbs; want 1 each", len(c.Nodes), len(c.Pods), len(c.PDBs))
	}
	if _, _, err := LoadPaths([]string{filepath.Join(dir, "dump/kube-system/p")}); err == nil || !strings.Contains(err.Error(), "no .json, .yaml or .yml file") {
		t.Errorf("directory without dumps: %v", err)
	}
}

// Objects without any kind, as the Insights Operator archives them, take
// it from fields only that kind has.
func TestLoadInfersKindFromFields(t *testing.T) {
	c, notes, err := LoadCluster("n.json", []byte(`{"metadata":{"name":"a"},"status":{"nodeInfo":{"kubeletVersion":"v1.21"}}}`))
	if err != nil || len(c.Nodes) != 1 {
		t.Fatalf("node: %v", err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "objects without kind taken as Node") {
		t.Errorf("notes %q", notes)
	}
	if _, _, err := LoadCluster("x.json", []byte(`{"metadata":{"name":"x"},"spec":{}}`)); err == nil || !strings.Contains(err.Error(), `object "x" has no kind`) {
		t.Errorf("neither: %v", err)
	}
}

// The memo of pull policies gives what the defaults give, the first time
// and from the memo.
func TestPullPolicyMemo(t *testing.T) {
	for _, image := range []string{"nginx", "nginx:latest", "nginx:1.27", "registry:5000/a/b", "registry:5000/a/b:latest",
		"busybox@sha256:" + strings.Repeat("a", 64), "", "UPPER:case", "::"} {
		for range 2 {
			want := v1.Container{Image: image}
			k8sv1.SetDefaults_Container(&want)
			p := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Image: image}}, InitContainers: []v1.Container{{Image: image, ImagePullPolicy: v1.PullNever}}}}
			pullPolicies(p)
			if got := p.Spec.Containers[0].ImagePullPolicy; got != want.ImagePullPolicy {
				t.Errorf("image %q: policy %q, the defaults give %q", image, got, want.ImagePullPolicy)
			}
			if got := p.Spec.InitContainers[0].ImagePullPolicy; got != v1.PullNever {
				t.Errorf("image %q: a set policy became %q", image, got)
			}
		}
	}
}
