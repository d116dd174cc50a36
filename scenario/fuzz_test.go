package scenario

import (
	"strings"
	"testing"
	"time"
)

// FuzzLoadCluster: any bytes give a cluster or an error, never a panic,
// and a cluster the contract accepts (LoadCluster validates it). Memory
// is bounded by the input limit (a small one here) and by YAML's own
// alias limits.
func FuzzLoadCluster(f *testing.F) {
	for _, seed := range []string{
		nodeDoc + "---\n" + podA + "---\n" + podB,
		"apiVersion: v1\nkind: List\nitems:\n" + indent(nodeDoc) + indent(podA),
		nodeDoc + "--- # c\n" + podA + "...\n" + podB,
		`[{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}]`,
		`{"apiVersion": "v1", "kind": "NodeList", "items": [{"metadata": {"name": "n"}}]}` + "\n" + `{"kind": "Pod"}`,
		"apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: p, namespace: d}\nspec: {minAvailable: 1, selector: {matchLabels: {a: b}}}\n",
		"a: &a [*a, *a]\n",
		"%YAML 1.2\n---\n" + nodeDoc,
		"apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: default, uid: a}\nspec: {NODENAME: n1, nodeName: n1, nodeName: n2}\n",
		"{\"Items\": []}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		defer func() {
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("%d bytes took %v", len(data), d)
			}
		}()
		c, _, err := LoadClusterWith("fuzz.yaml", data, Options{MaxBytes: 1 << 20})
		if err != nil {
			if strings.Contains(err.Error(), "Go struct") || strings.Contains(err.Error(), "typeMeta") {
				t.Fatalf("message names a Go type: %v", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("loaded an invalid cluster: %v", err)
		}
		_, _, _ = LoadClusterWith("fuzz.yaml", data, Options{Strict: true, MaxBytes: 1 << 20})
	})
}

// FuzzLoadPod: any bytes give one pod or an error, never a panic.
func FuzzLoadPod(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, uid: p}\nspec: {priority: 10, containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}\n"))
	f.Add([]byte(podA))
	f.Add([]byte(`{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, _, err := LoadPodWith("pod.yaml", data, Options{MaxBytes: 1 << 20})
		if err == nil && p == nil {
			t.Fatal("no pod and no error")
		}
	})
}
