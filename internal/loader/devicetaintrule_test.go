package loader

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/preemptbench/preemptbench/preempt"
)

// TestEveryInputPathReadsDeviceTaintRules: a DeviceTaintRule is read,
// not skipped, whatever form the input takes (YAML documents, a List, a
// typed DeviceTaintRuleList, a JSON List and array, a directory, an API
// server's objects), and one kube-apiserver would refuse (an effect
// DeviceTaint does not have) is refused on each, naming it and the field.
func TestEveryInputPathReadsDeviceTaintRules(t *testing.T) {
	node := &v1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status:     v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}},
	}
	rule := func(effect resourcev1.DeviceTaintEffect) *resourcev1.DeviceTaintRule {
		return &resourcev1.DeviceTaintRule{
			TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceTaintRule"},
			ObjectMeta: metav1.ObjectMeta{Name: "broken"},
			Spec: resourcev1.DeviceTaintRuleSpec{
				DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr("gpu.example.com"), Pool: ptr("n1")},
				Taint:          resourcev1.DeviceTaint{Key: "example.com/broken", Effect: effect},
			},
		}
	}
	const invalid = `devicetaintrule broken: spec.taint.effect: Unsupported value: "PreferNoSchedule"`
	toJSON := func(v any) []byte { return mustJSON(t, v) }
	toYAML := func(v any) string { return mustYAML(t, v) }
	check := func(t *testing.T, c *preempt.Cluster, notes []string, err error, effect resourcev1.DeviceTaintEffect) {
		t.Helper()
		if effect != resourcev1.DeviceTaintEffectNoSchedule {
			if err == nil || !strings.Contains(err.Error(), invalid) {
				t.Errorf("err = %v, want it to hold %q", err, invalid)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range notes {
			if strings.Contains(n, "skipped") {
				t.Errorf("note %q: nothing should be skipped", n)
			}
		}
		if len(c.DeviceTaintRules) != 1 || c.DeviceTaintRules[0].Name != "broken" || c.DeviceTaintRules[0].Spec.Taint.Effect != effect {
			t.Errorf("read DeviceTaintRules %v, want the rule", c.DeviceTaintRules)
		}
	}
	for _, effect := range []resourcev1.DeviceTaintEffect{resourcev1.DeviceTaintEffectNoSchedule, "PreferNoSchedule"} {
		r := rule(effect)
		bare := r.DeepCopy()
		bare.TypeMeta = metav1.TypeMeta{}
		list := map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{node, r}}
		forms := map[string]string{
			"yaml documents": toYAML(node) + "---\n" + toYAML(r),
			"yaml list":      toYAML(list),
			"json list":      string(toJSON(list)),
			"json array":     string(toJSON([]any{node, r})),
			"typed list": toYAML(node) + "---\n" + toYAML(map[string]any{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRuleList",
				"items": []any{bare}}),
		}
		for name, text := range forms {
			t.Run(string(effect)+"/"+name, func(t *testing.T) {
				c, notes, err := LoadCluster("in", []byte(text))
				check(t, c, notes, err, effect)
			})
		}
		t.Run(string(effect)+"/directory", func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "nodes.yaml"), []byte(toYAML(node)), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "rules.json"), toJSON(r), 0o644); err != nil {
				t.Fatal(err)
			}
			c, notes, err := LoadPaths([]string{dir})
			check(t, c, notes, err, effect)
		})
		t.Run(string(effect)+"/api server", func(t *testing.T) {
			c, notes, err := LoadLive(context.Background(), fake.NewClientset(node, r), "server", Options{})
			check(t, c, notes, err, effect)
		})
	}
}
