package scenario

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/preemptbench/preemptbench/preempt"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

func TestBuildIsDeterministicAndValid(t *testing.T) {
	for _, shape := range Shapes() {
		for _, nodes := range []int{0, 1, 2, 9, 100} {
			a := MustBuild(shape, nodes, 7)
			b := MustBuild(shape, nodes, 7)
			if !equality.Semantic.DeepEqual(a.Cluster, b.Cluster) || !equality.Semantic.DeepEqual(a.Pod, b.Pod) || !a.Now.Equal(b.Now) {
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

func TestBasicIsSchedulerPerfPreemptionBasic(t *testing.T) {
	s := MustBuild("basic", 3, 1)
	for _, n := range s.Cluster.Nodes {
		a := n.Status.Allocatable
		if a.Cpu().MilliValue() != 4000 || a.Memory().Value() != 32<<30 || a.Pods().Value() != 110 {
			t.Errorf("node %s allocatable %v", n.Name, a)
		}
	}
	if len(s.Cluster.Pods) != 12 {
		t.Fatalf("%d pods, want 4 per node", len(s.Cluster.Pods))
	}
	for _, p := range s.Cluster.Pods {
		r := p.Spec.Containers[0].Resources.Requests
		if *p.Spec.Priority != 0 || r.Cpu().MilliValue() != 900 || r.Memory().Value() != 500<<20 {
			t.Errorf("pod %s: priority %d requests %v", p.Name, *p.Spec.Priority, r)
		}
	}
	r := s.Pod.Spec.Containers[0].Resources.Requests
	if *s.Pod.Spec.Priority != 10 || r.Cpu().MilliValue() != 3000 || r.Memory().Value() != 500<<20 {
		t.Errorf("preemptor: priority %d requests %v", *s.Pod.Spec.Priority, r)
	}
}

func TestListRoundTrip(t *testing.T) {
	for _, shape := range Shapes() {
		s := MustBuild(shape, 6, 11)
		data, err := ListYAML(s.Cluster)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := LoadCluster(shape+".yaml", data)
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
		pod, err := LoadPod("pod.yaml", podData)
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
	c, _, err := LoadCluster("x.json", []byte(jsonList))
	if err != nil || len(c.Nodes) != 1 {
		t.Fatalf("json list: %v, %+v", err, c)
	}
	multi := "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: b}\n---\n"
	c, _, err = LoadCluster("x.yaml", []byte(multi))
	if err != nil || len(c.Nodes) != 2 {
		t.Fatalf("multi-document: %v, %+v", err, c)
	}
	// kubectl names its lists NodeList, PodList...
	c, _, err = LoadCluster("x.yaml", []byte("apiVersion: v1\nkind: NodeList\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: a}}\n"))
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
	// Output: affinity basic heterogeneous hostports mixed nominated pdb spread ties
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
	return out
}
