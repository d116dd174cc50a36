package loader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	dra "k8s.io/kubernetes/pkg/apis/resource"
	resourcevalidation "k8s.io/kubernetes/pkg/apis/resource/validation"
)

// TestEveryInputPathValidatesAPIObjects: a DeviceClass whose selector
// does not compile is refused naming it and the field, whatever form
// the input takes: YAML documents, a YAML List and a JSON List (both on
// the fast path), a JSON array, a directory, and an API server's
// objects (LoadLive, which -pending reads too).
func TestEveryInputPathValidatesAPIObjects(t *testing.T) {
	node := &v1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status:     v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}},
	}
	class := &resourcev1.DeviceClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"},
		ObjectMeta: metav1.ObjectMeta{Name: "gpu.example.com"},
		Spec:       resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: "device.driver =="}}}},
	}
	const want = `deviceclass gpu.example.com: spec.selectors[0].cel.expression: Invalid value: "device.driver ==": compilation failed`
	toJSON := func(v any) []byte { return mustJSON(t, v) }
	toYAML := func(v any) string { return mustYAML(t, v) }
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{node, class}}
	forms := map[string]string{
		"yaml documents": toYAML(node) + "---\n" + toYAML(class),
		"yaml list":      toYAML(list),
		"json list":      string(toJSON(list)),
		"json array":     string(toJSON([]any{node, class})),
	}
	for name, text := range forms {
		t.Run(name, func(t *testing.T) {
			_, _, err := LoadCluster("in", []byte(text))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("LoadCluster: %v\nwant an error with %q", err, want)
			}
		})
	}
	t.Run("directory", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "nodes.yaml"), []byte(toYAML(node)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "classes.json"), toJSON(class), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := LoadPaths([]string{dir})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "classes.json") {
			t.Errorf("LoadPaths: %v\nwant an error naming classes.json with %q", err, want)
		}
	})
	t.Run("api server", func(t *testing.T) {
		_, _, err := LoadLive(context.Background(), fake.NewClientset(node, class), "server", Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadLive: %v\nwant an error with %q", err, want)
		}
	})
}

// apiObjectsList is a JSON List of a node and n objects of kind: claims
// asking for a GPU with a CEL selector (generated from a template, as a
// workload's are), ResourceSlices of 8 devices, or bound PVCs.
func apiObjectsList(b *testing.B, kind string, n int) []byte {
	items := []any{map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "n1"}, "status": map[string]any{"allocatable": map[string]any{"cpu": "1"}}}}
	for i := range n {
		var o map[string]any
		switch kind {
		case "resourceclaim":
			o = map[string]any{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
				"metadata": map[string]any{"name": fmt.Sprintf("pod-%d-gpu", i), "namespace": "default"},
				"spec": map[string]any{"devices": map[string]any{"requests": []any{map[string]any{"name": "gpu", "exactly": map[string]any{
					"deviceClassName": "gpu.example.com",
					"selectors":       []any{map[string]any{"cel": map[string]any{"expression": `device.attributes["gpu.example.com"].model == "a100" && device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0`}}},
				}}}}}}
		case "resourceslice":
			var devs []any
			for d := range 8 {
				devs = append(devs, map[string]any{"name": fmt.Sprintf("gpu-%d", d), "attributes": map[string]any{"model": map[string]any{"string": "a100"}}, "capacity": map[string]any{"memory": map[string]any{"value": "40Gi"}}})
			}
			o = map[string]any{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
				"metadata": map[string]any{"name": fmt.Sprintf("n%d-gpu", i)},
				"spec":     map[string]any{"driver": "gpu.example.com", "nodeName": fmt.Sprintf("n%d", i), "pool": map[string]any{"name": fmt.Sprintf("n%d", i), "resourceSliceCount": 1}, "devices": devs}}
		case "persistentvolumeclaim":
			o = map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
				"metadata": map[string]any{"name": fmt.Sprintf("data-%d", i), "namespace": "default"},
				"spec":     map[string]any{"accessModes": []any{"ReadWriteOnce"}, "storageClassName": "fast", "volumeName": fmt.Sprintf("pv-%d", i), "resources": map[string]any{"requests": map[string]any{"storage": "10Gi"}}},
				"status":   map[string]any{"phase": "Bound", "accessModes": []any{"ReadWriteOnce"}, "capacity": map[string]any{"storage": "10Gi"}}}
		}
		items = append(items, o)
	}
	data, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkLoadAPIObjects loads Lists of 5000 objects of the kinds
// validateAPI checks; validation=off is the same load less validateAPI's
// cost, measured by timing validateAPI on each object apart.
func BenchmarkLoadAPIObjects(b *testing.B) {
	for _, kind := range []string{"resourceclaim", "resourceslice", "persistentvolumeclaim"} {
		data := apiObjectsList(b, kind, 5000)
		b.Run("kind="+kind+"/n=5000/step=load", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := LoadCluster("list.json", data); err != nil {
					b.Fatal(err)
				}
			}
		})
		c, _, err := LoadCluster("list.json", data)
		if err != nil {
			b.Fatal(err)
		}
		var objs []runtime.Object
		for _, o := range c.ResourceClaims {
			objs = append(objs, o)
		}
		for _, o := range c.ResourceSlices {
			objs = append(objs, o)
		}
		for _, o := range c.PVCs {
			objs = append(objs, o)
		}
		b.Run("kind="+kind+"/n=5000/step=validateAPI", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, o := range objs {
					if err := validateAPI(o); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// TestClaimSpecMemoIsUpstreams: validateAPI of a claim without status,
// the first time (memo filled) and the second (memo read), says what
// upstream's ValidateResourceClaim says of it, invalid metadata, spec or
// both.
func TestClaimSpecMemoIsUpstreams(t *testing.T) {
	spec := func(expr, class string) resourcev1.ResourceClaimSpec {
		return resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "r", Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: class, Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: expr}}},
		}}}}}
	}
	for _, c := range []*resourcev1.ResourceClaim{
		{ObjectMeta: metav1.ObjectMeta{Name: "ok", Namespace: "default"}, Spec: spec("true", "c")},
		{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name", Namespace: "default"}, Spec: spec("true", "c")},
		{ObjectMeta: metav1.ObjectMeta{Name: "ok2", Namespace: "default"}, Spec: spec("device.driver ==", "c")},
		{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name", Namespace: "default", Labels: map[string]string{"-": "x"}}, Spec: spec("device.driver ==", "")},
		{ObjectMeta: metav1.ObjectMeta{Name: "ok3"}, Spec: spec("1", "c")},
	} {
		in := &dra.ResourceClaim{}
		if err := legacyscheme.Scheme.Convert(c, in, nil); err != nil {
			t.Fatal(err)
		}
		want := errors.Join(resourcevalidation.ValidateResourceClaim(in).ToAggregate())
		for pass := range 2 {
			got := errors.Join(validateAPI(c))
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("claim %s, pass %d: validateAPI = %v\nValidateResourceClaim: %v", c.Name, pass, got, want)
			}
		}
	}
}
