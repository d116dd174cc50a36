package loader

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"
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
	toJSON := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	toYAML := func(v any) string {
		b, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
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
