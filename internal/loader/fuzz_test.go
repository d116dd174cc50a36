package loader

import (
	"bytes"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/preemptbench/preemptbench/internal/synth"
	"k8s.io/apimachinery/pkg/api/equality"
)

// FuzzLoadCluster: any bytes give a cluster or an error, never a panic;
// the same cluster and notes each time; a cluster the contract accepts
// (LoadCluster validates it); messages without Go types; every document
// boundary go-yaml sees split. Memory is bounded by the input limit (a
// small one here), go-yaml's bound on aliased nodes, and the loader's on
// what aliases expand a document to (aliasExpansion).
func FuzzLoadCluster(f *testing.F) {
	addSeeds(f, loadSeeds)
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		defer func() {
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("%d bytes took %v", len(data), d)
			}
		}()
		opts := Options{MaxBytes: 1 << 20}
		c, notes, err := LoadClusterWith("fuzz.yaml", data, opts)
		c2, notes2, err2 := LoadClusterWith("fuzz.yaml", data, opts)
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) || !reflect.DeepEqual(notes, notes2) || !equality.Semantic.DeepEqual(c, c2) {
			t.Fatalf("two loads differ: %v, %q; %v, %q", err, notes, err2, notes2)
		}
		checkSplit(t, data)
		if err != nil {
			if namesGoType(err.Error(), data) {
				t.Fatalf("message names a Go type: %v", err)
			}
			return
		}
		for _, n := range notes {
			if namesGoType(n, data) {
				t.Fatalf("note names a Go type: %s", n)
			}
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("loaded an invalid cluster: %v", err)
		}
		opts.Strict = true
		if _, _, err := LoadClusterWith("fuzz.yaml", data, opts); err != nil && namesGoType(err.Error(), data) {
			t.Fatalf("strict: message names a Go type: %v", err)
		}
	})
}

// loadSeeds are inputs of every form the loader reads or refuses.
func loadSeeds(tb fataler) [][]byte {
	var seeds [][]byte
	for _, seed := range []string{
		nodeDoc + "---\n" + podA + "---\n" + podB,
		"apiVersion: v1\nkind: List\nitems:\n" + indent(nodeDoc) + indent(podA),
		nodeDoc + "--- # c\n" + podA + "...\n" + podB,
		nodeDoc + "... # end\n" + podA + "...\t\n---\n" + podB,
		`[{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}]`,
		`{"apiVersion": "v1", "kind": "NodeList", "items": [{"metadata": {"name": "n"}}]}` + "\n" + `{"kind": "Pod"}`,
		`{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}` + "\n---\n" + `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}`,
		`{"apiVersion": "v1", "kind": "List", "items": [], "ITEMS": [], "items": []}`,
		"apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: p, namespace: d}\nspec: {minAvailable: 1, selector: {matchLabels: {a: b}}}\n",
		"a: &a [*a, *a]\n",
		"l: &l {app: web}\napiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: *l}\n",
		"apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {<<: {a: b}, c: d, c: e, 1: x, \"1\": y}}\n",
		"%YAML 1.2\n---\n" + nodeDoc,
		"apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: default, uid: a}\nspec: {NODENAME: n1, nodeName: n1, nodeName: n2}\n",
		"apiVersion: v1\nkind: Node\nmetadata: {name: n1, creationTimestamp: yesterday}\nstatus: {allocatable: {cpu: 1 core}}\n",
		"{\"Items\": []}",
		utf16le(nodeDoc + "---\n" + podA),
		nodeDoc + "\u2028---\u2028" + podA,
	} {
		seeds = append(seeds, []byte(seed))
	}
	for _, doc := range yamlCorpus {
		seeds = append(seeds, []byte(doc))
	}
	for _, shape := range synth.Shapes() {
		list, err := synth.ListYAML(synth.MustBuild(shape, 2, 1).Cluster)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, list)
	}
	// The command's own example, when this tree holds it.
	if data, err := os.ReadFile("../cli/testdata/small/cluster.yaml"); err == nil {
		seeds = append(seeds, data)
	}
	return seeds
}

// checkSplit fails when go-yaml finds two documents in one the splitter
// made (but where the loader refuses them: U+2028, U+2029).
func checkSplit(t *testing.T, data []byte) {
	data = normalizeText(data)
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		return
	}
	pieces, err := splitYAML(data)
	if err != nil {
		return
	}
	for i, p := range pieces {
		if bytes.Contains(p.data, []byte("\u2028")) || bytes.Contains(p.data, []byte("\u2029")) {
			continue
		}
		if n, err := countYAMLDocuments(p.data); err == nil && n > 1 {
			t.Fatalf("document %d (from line %d) holds %d documents for go-yaml: %q", i+1, p.line, n, p.data)
		}
	}
}

// FuzzLoadPod: any bytes give one pod or an error, never a panic, and no
// message names a Go type.
func FuzzLoadPod(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, uid: p}\nspec: {priority: 10, containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}\n"))
	f.Add([]byte(podA))
	f.Add([]byte(`{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}]}`))
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, NAME: d, resources: {requests: {cpu: 1 core}}}], affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In}]}]}}}}\n"))
	if data, err := os.ReadFile("../cli/testdata/small/pod.yaml"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, notes, err := LoadPodWith("pod.yaml", data, Options{MaxBytes: 1 << 20})
		if err == nil && p == nil {
			t.Fatal("no pod and no error")
		}
		if err != nil && namesGoType(err.Error(), data) {
			t.Fatalf("message names a Go type: %v", err)
		}
		for _, n := range notes {
			if namesGoType(n, data) {
				t.Fatalf("note names a Go type: %s", n)
			}
		}
	})
}
