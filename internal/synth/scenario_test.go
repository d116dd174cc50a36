package synth

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/preemptbench/preemptbench/internal/loader"
	"github.com/preemptbench/preemptbench/preempt"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	kptr "k8s.io/utils/ptr"
	sigsyaml "sigs.k8s.io/yaml"
)

func TestBuildIsDeterministicAndValid(t *testing.T) {
	for _, shape := range Shapes() {
		for _, nodes := range []int{0, 1, 2, 9, 100} {
			a := MustBuild(shape, nodes, 7)
			b := MustBuild(shape, nodes, 7)
			if !equality.Semantic.DeepEqual(a.Cluster, b.Cluster) || !equality.Semantic.DeepEqual(a.Pod, b.Pod) || !a.Now.Equal(b.Now) ||
				!equality.Semantic.DeepEqual(a.FeatureGates, b.FeatureGates) || a.MeasurePods != b.MeasurePods {
				t.Errorf("%s/%d: two builds with the same seed differ", shape, nodes)
			}
			if err := a.Cluster.Validate(); err != nil {
				t.Errorf("%s/%d: invalid cluster: %v", shape, nodes, err)
			}
			if len(a.Cluster.Nodes) != nodes {
				t.Errorf("%s/%d: %d nodes", shape, nodes, len(a.Cluster.Nodes))
			}
			if a.Pod == nil || a.Pod.Spec.Priority == nil {
				t.Errorf("%s/%d: no preemptor or no priority", shape, nodes)
			}
		}
	}
}

// schedulerPerfTemplate decodes a template of scheduler_perf in the
// k8s.io/kubernetes module this one requires (go list -m finds it).
func schedulerPerfTemplate(t *testing.T, rel string, into any) {
	t.Helper()
	b, path := schedulerPerfFile(t, rel)
	if err := sigsyaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// schedulerPerfTemplateLax is schedulerPerfTemplate for a file of which
// into holds only part (a performance-config.yaml).
func schedulerPerfTemplateLax(t *testing.T, rel string, into any) {
	t.Helper()
	b, path := schedulerPerfFile(t, rel)
	if err := sigsyaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func schedulerPerfFile(t *testing.T, rel string) ([]byte, string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes").Output()
	if err != nil {
		t.Fatalf("go list -m k8s.io/kubernetes: %v", err)
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "test", "integration", "scheduler_perf", rel)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b, path
}

// TestBasicIsSchedulerPerfPreemptionBasic checks the basic shape against
// scheduler_perf's own templates at the required k8s.io/kubernetes
// (PreemptionBasic in default_preemption/performance-config.yaml), and
// basic-v1.36 against v1.36's preemptor.
func TestBasicIsSchedulerPerfPreemptionBasic(t *testing.T) {
	var node v1.Node
	var low, high v1.Pod
	schedulerPerfTemplate(t, "templates/node-default.yaml", &node)
	schedulerPerfTemplate(t, "templates/pod-low-priority.yaml", &low)
	schedulerPerfTemplate(t, "default_preemption/templates/pod-high-priority.yaml", &high)
	v136 := &v1.Pod{Spec: v1.PodSpec{Priority: kptr.To[int32](10), Containers: []v1.Container{{Resources: v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("3000m"), v1.ResourceMemory: resource.MustParse("500Mi")}}}}}}
	for _, tc := range []struct {
		shape string
		high  *v1.Pod
	}{{"basic", &high}, {"basic-v1.36", v136}} {
		s := MustBuild(tc.shape, 3, 1)
		for _, n := range s.Cluster.Nodes {
			a := n.Status.Allocatable
			for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods} {
				if got, want := a[r], node.Status.Capacity[r]; got.Cmp(want) != 0 {
					t.Errorf("%s: node %s allocatable %s %v, template's capacity %v", tc.shape, n.Name, r, a[r], want)
				}
			}
		}
		if len(s.Cluster.Pods) != 12 {
			t.Fatalf("%s: %d pods, want 4 per node", tc.shape, len(s.Cluster.Pods))
		}
		same := func(what string, got, want *v1.Pod) {
			if p := kptr.Deref(want.Spec.Priority, 0); kptr.Deref(got.Spec.Priority, 0) != p {
				t.Errorf("%s: %s priority %d, template's %d", tc.shape, what, kptr.Deref(got.Spec.Priority, 0), p)
			}
			g, w := got.Spec.Containers[0].Resources.Requests, want.Spec.Containers[0].Resources.Requests
			if g.Cpu().Cmp(*w.Cpu()) != 0 || g.Memory().Cmp(*w.Memory()) != 0 {
				t.Errorf("%s: %s requests %v, template's %v", tc.shape, what, g, w)
			}
		}
		for _, p := range s.Cluster.Pods {
			same("pod "+p.Name, p, &low)
		}
		same("preemptor", s.Pod, tc.high)
	}
}

func TestListRoundTrip(t *testing.T) {
	for _, shape := range Shapes() {
		s := MustBuild(shape, 6, 11)
		data, err := ListYAML(s.Cluster)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := loader.LoadCluster(shape+".yaml", data)
		if err != nil {
			t.Fatalf("%s: %v", shape, err)
		}
		want := defaulted(s.Cluster)
		if !equality.Semantic.DeepEqual(want, got) {
			t.Errorf("%s: cluster changed through YAML (-defaulted +loaded):\n%s", shape, cmp.Diff(want, got))
		}
		podData, err := PodYAML(s.Pod)
		if err != nil {
			t.Fatal(err)
		}
		pod, err := loader.LoadPod("pod.yaml", podData)
		if err != nil {
			t.Fatal(err)
		}
		wantPod := s.Pod.DeepCopy()
		legacyscheme.Scheme.Default(wantPod)
		if !equality.Semantic.DeepEqual(wantPod.Spec, pod.Spec) {
			t.Errorf("%s: pod changed through YAML", shape)
		}
	}
}

func TestLoadAcceptsJSONAndMultiDocument(t *testing.T) {
	jsonList := `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}}]}`
	c, _, err := loader.LoadCluster("x.json", []byte(jsonList))
	if err != nil || len(c.Nodes) != 1 {
		t.Fatalf("json list: %v, %+v", err, c)
	}
	multi := "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: b}\n---\n"
	c, _, err = loader.LoadCluster("x.yaml", []byte(multi))
	if err != nil || len(c.Nodes) != 2 {
		t.Fatalf("multi-document: %v, %+v", err, c)
	}
	// kubectl names its lists NodeList, PodList...
	c, _, err = loader.LoadCluster("x.yaml", []byte("apiVersion: v1\nkind: NodeList\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: a}}\n"))
	if err != nil || len(c.Nodes) != 1 {
		t.Fatalf("NodeList: %v", err)
	}
}

func TestBuildUnknownShape(t *testing.T) {
	_, err := Build("square", 3, 1)
	if err == nil || !strings.Contains(err.Error(), `unknown shape "square"`) {
		t.Errorf("err = %v", err)
	}
	if _, err := Build("basic", -1, 1); err == nil {
		t.Error("negative node count accepted")
	}
}

func ExampleShapes() {
	fmt.Println(strings.Join(Shapes(), " "))
	// Output: affinity basic basic-v1.36 heterogeneous hostports mixed nominated pdb podgroup-all podgroup-none podgroup-single pvs spread ties
}

// defaulted is c as the API server would store it: the loader applies the
// same defaulting.
func defaulted(c *preempt.Cluster) *preempt.Cluster {
	out := &preempt.Cluster{}
	for _, n := range c.Nodes {
		n = n.DeepCopy()
		legacyscheme.Scheme.Default(n)
		out.Nodes = append(out.Nodes, n)
	}
	for _, p := range c.Pods {
		p = p.DeepCopy()
		legacyscheme.Scheme.Default(p)
		out.Pods = append(out.Pods, p)
	}
	for _, pdb := range c.PDBs {
		pdb = pdb.DeepCopy()
		legacyscheme.Scheme.Default(pdb)
		out.PDBs = append(out.PDBs, pdb)
	}
	// The loader keeps pod groups as written (their type meta cleared).
	for _, pg := range c.PodGroups {
		out.PodGroups = append(out.PodGroups, pg.DeepCopy())
	}
	// It keeps the volume objects' type meta.
	for _, pvc := range c.PVCs {
		pvc = pvc.DeepCopy()
		legacyscheme.Scheme.Default(pvc)
		pvc.APIVersion, pvc.Kind = "v1", "PersistentVolumeClaim"
		out.PVCs = append(out.PVCs, pvc)
	}
	for _, pv := range c.PVs {
		pv = pv.DeepCopy()
		legacyscheme.Scheme.Default(pv)
		pv.APIVersion, pv.Kind = "v1", "PersistentVolume"
		out.PVs = append(out.PVs, pv)
	}
	return out
}
