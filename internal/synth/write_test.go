package synth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/preemptbench/preemptbench/preempt"
)

// listYAMLWhole is ListYAML as it was: the whole List marshalled at once.
// Every file written must stay byte for byte what it wrote (tests and
// golden files depend on them).
func listYAMLWhole(c *preempt.Cluster) ([]byte, error) {
	var items []runtime.RawExtension
	add := func(apiVersion, kind string, obj any) error {
		raw, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		m["apiVersion"], m["kind"] = apiVersion, kind
		raw, err = json.Marshal(m)
		if err != nil {
			return err
		}
		items = append(items, runtime.RawExtension{Raw: raw})
		return nil
	}
	for _, n := range c.Nodes {
		if err := add("v1", "Node", n); err != nil {
			return nil, err
		}
	}
	for _, p := range c.Pods {
		if err := add("v1", "Pod", p); err != nil {
			return nil, err
		}
	}
	for _, pdb := range c.PDBs {
		if err := add("policy/v1", "PodDisruptionBudget", pdb); err != nil {
			return nil, err
		}
	}
	for _, pg := range c.PodGroups {
		if err := add("scheduling.k8s.io/v1beta1", "PodGroup", pg); err != nil {
			return nil, err
		}
	}
	for _, pvc := range c.PVCs {
		if err := add("v1", "PersistentVolumeClaim", pvc); err != nil {
			return nil, err
		}
	}
	for _, pv := range c.PVs {
		if err := add("v1", "PersistentVolume", pv); err != nil {
			return nil, err
		}
	}
	return yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
}

// Issue 21: WriteCluster writes as it builds, and what it writes is, byte
// for byte, what ListYAML wrote of the whole cluster, for every shape.
func TestWriteClusterIsListYAML(t *testing.T) {
	for _, shape := range Shapes() {
		for _, nodes := range []int{0, 1, 7, 60} {
			for _, seed := range []uint64{1, 42} {
				s := MustBuild(shape, nodes, seed)
				want := checkListYAML(t, s.Cluster, fmt.Sprintf("%s/%d/%d", shape, nodes, seed))
				var buf bytes.Buffer
				ws, err := WriteCluster(&buf, shape, nodes, seed)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(want, buf.Bytes()) {
					t.Fatalf("%s/%d/%d: WriteCluster differs from the whole List:\n%s", shape, nodes, seed, cmp.Diff(string(want), buf.String()))
				}
				if !equality.Semantic.DeepEqual(s.Pod, ws.Pod) || !s.Now.Equal(ws.Now) || ws.Cluster != nil ||
					!equality.Semantic.DeepEqual(s.FeatureGates, ws.FeatureGates) || s.MeasurePods != ws.MeasurePods {
					t.Errorf("%s/%d/%d: WriteCluster's scenario differs from Build's", shape, nodes, seed)
				}
			}
		}
	}
}

// A long string is folded by the YAML writer at a column that depends on
// where it stands: an item is rendered where it stands in the List.
func TestListYAMLLongStrings(t *testing.T) {
	s := MustBuild("pdb", 3, 1)
	long := strings.Repeat("a long label value with spaces ", 8)
	s.Cluster.Nodes[1].Labels["note"] = long
	s.Cluster.Pods[2].Labels["note"] = long
	checkListYAML(t, s.Cluster, "long strings")
}

type failingWriter struct{ after int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.after -= len(p); w.after < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriteClusterErrors(t *testing.T) {
	if _, err := WriteCluster(&failingWriter{after: 1 << 20}, "basic", 500, 1); err == nil || err.Error() != "disk full" {
		t.Errorf("a failing writer: %v", err)
	}
	for _, tc := range []struct {
		shape string
		nodes int
	}{{"round", 3}, {"basic", -1}, {"basic", MaxNodes + 1}} {
		var buf bytes.Buffer
		_, err := WriteCluster(&buf, tc.shape, tc.nodes, 1)
		if err == nil || buf.Len() != 0 || fmt.Sprint(err) != fmt.Sprint(Check(tc.shape, tc.nodes)) {
			t.Errorf("WriteCluster(%s, %d): %v, %d bytes written", tc.shape, tc.nodes, err, buf.Len())
		}
	}
}

// checkListYAML fails t unless ListYAML writes c byte for byte as the
// whole List marshalled at once, which it returns.
func checkListYAML(t *testing.T, c *preempt.Cluster, what string) []byte {
	t.Helper()
	want, err := listYAMLWhole(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ListYAML(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("%s: ListYAML differs from the whole List:\n%s", what, cmp.Diff(string(want), string(got)))
	}
	return want
}
