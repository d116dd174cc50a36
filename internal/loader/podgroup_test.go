package loader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"
)

const podGroupYAML = `apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train, namespace: ml}
spec:
  parentCompositePodGroupName: job
  priority: 50
  disruptionMode: {all: {}}
  schedulingPolicy: {gang: {minCount: 2}}
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: CompositePodGroup
metadata: {name: job, namespace: ml}
spec:
  priority: 70
  schedulingPolicy: {gang: {minGroupCount: 1}}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: Pod
metadata: {name: w0, namespace: ml}
spec:
  nodeName: n1
  schedulingGroup: {podGroupName: train}
  containers: [{name: c, image: i}]
`

// PodGroups and CompositePodGroups are read as single objects, and a
// pod's membership is its spec.schedulingGroup.podGroupName.
func TestLoadPodGroups(t *testing.T) {
	c, notes, err := LoadCluster("pg.yaml", []byte(podGroupYAML))
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 0 {
		t.Errorf("notes %q, want none", notes)
	}
	if len(c.PodGroups) != 1 || len(c.CompositePodGroups) != 1 {
		t.Fatalf("got %d pod groups, %d composite pod groups", len(c.PodGroups), len(c.CompositePodGroups))
	}
	pg := c.PodGroups[0]
	if pg.Namespace != "ml" || pg.Name != "train" || preempt.PodGroupPriority(pg) != 50 || !preempt.PodGroupModeAll(pg) ||
		preempt.PodGroupParent(pg) != "job" || preempt.PodGroupMinCount(pg) != 2 || pg.Kind != "" {
		t.Errorf("pod group read as %+v", pg)
	}
	// The API server's defaulting under v1.37.2's default gates: the
	// policy is set only with PodGroupPreemptionPolicy (alpha, off).
	if p := pg.Spec.PreemptionPolicy; p != nil {
		t.Errorf("preemptionPolicy %v, want none (PodGroupPreemptionPolicy is off by default)", *p)
	}
	if name, ok := preempt.PodGroupName(c.Pods[0]); !ok || name != "train" {
		t.Errorf("pod's group %q %v", name, ok)
	}
	x := preempt.NewPodGroupIndex(c, true)
	if got := x.VictimPriority(c.Pods[0]); got != 70 {
		t.Errorf("victim priority %d, want the composite's 70", got)
	}
	if kind, ns, name, ok := x.GroupKey(c.Pods[0]); !ok || kind != "PodGroup" || ns != "ml" || name != "train" {
		t.Errorf("unit %s %s/%s %v, want PodGroup ml/train", kind, ns, name, ok)
	}
	if got := preempt.NewPodGroupIndex(c, false).VictimPriority(c.Pods[0]); got != 50 {
		t.Errorf("victim priority without CompositePodGroup %d, want the group's 50", got)
	}
}

// Typed lists (PodGroupList, CompositePodGroupList) with kind-less items,
// a v1alpha3 PodGroup converted to v1beta1, JSON and YAML, on the fast
// path and the slow one, give the same cluster.
func TestLoadPodGroupListsBothPaths(t *testing.T) {
	jsonList := `{"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroupList","items":[` +
		`{"metadata":{"name":"a","namespace":"ns"},"spec":{"priority":3,"schedulingPolicy":{"basic":{}},"disruptionMode":{"single":{}}}},` +
		`{"metadata":{"name":"b"},"spec":{"schedulingPolicy":{"gang":{"minCount":4}}}}]}`
	yamlList := `apiVersion: v1
kind: List
items:
- apiVersion: scheduling.k8s.io/v1alpha3
  kind: PodGroup
  metadata: {name: a, namespace: ns}
  spec: {priority: 3, schedulingPolicy: {basic: {}}, disruptionMode: {single: {}}}
- apiVersion: scheduling.k8s.io/v1beta1
  kind: PodGroup
  metadata: {name: b}
  spec: {schedulingPolicy: {gang: {minCount: 4}}}
- apiVersion: scheduling.k8s.io/v1alpha3
  kind: CompositePodGroup
  metadata: {name: c, namespace: ns}
  spec: {schedulingPolicy: {basic: {}}}
`
	typedComposite := `{"apiVersion":"scheduling.k8s.io/v1alpha3","kind":"CompositePodGroupList","items":[{"metadata":{"name":"c","namespace":"ns"},"spec":{"schedulingPolicy":{"basic":{}}}}]}`
	var want *preempt.Cluster
	for _, tc := range []struct{ name, data string }{{"list.json", jsonList + "\n" + typedComposite}, {"list.yaml", yamlList}} {
		for _, slow := range []bool{false, true} {
			c, _, err := loadClusterWith(tc.name, []byte(tc.data), Options{}, slow)
			if err != nil {
				t.Fatalf("%s (slow %v): %v", tc.name, slow, err)
			}
			if len(c.PodGroups) != 2 || len(c.CompositePodGroups) != 1 {
				t.Fatalf("%s: %d pod groups, %d composites", tc.name, len(c.PodGroups), len(c.CompositePodGroups))
			}
			if c.PodGroups[1].Namespace != "default" || preempt.PodGroupMinCount(c.PodGroups[1]) != 4 {
				t.Errorf("%s: second group %+v", tc.name, c.PodGroups[1])
			}
			if want == nil {
				want = c
			} else if d := cmp.Diff(want, c); d != "" {
				t.Errorf("%s (slow %v) differs from list.json (-want +got):\n%s", tc.name, slow, d)
			}
		}
	}
	// The fast path takes a single big List.
	single := `{"apiVersion":"v1","kind":"List","items":[` + strings.Repeat(`{"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"g`, 1) + `0"},"spec":{"schedulingPolicy":{"basic":{}}}}]}`
	r := reader{}
	if !r.readFast("one.json", []byte(single)) || len(r.objects) != 1 || kindOf(r.objects[0]) != "PodGroup" {
		t.Errorf("fast path: %d objects", len(r.objects))
	}
}

// Bad pod groups are refused with an error naming the object.
func TestLoadPodGroupErrors(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: ns}\nspec: {priority: high}\n",
			"podgroup ns/g"},
		{"apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: g}\n",
			`podgroup g: unsupported apiVersion "scheduling.k8s.io/v1alpha2" for kind PodGroup`},
		{"apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\nmetadata: {name: c, namespace: ns}\nspec: {priority: [1]}\n",
			"compositepodgroup ns/c"},
		{"apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: default}\n",
			"podgroup default/g appears twice"},
		{"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: n1, schedulingGroup: {}, containers: [{name: c, image: i}]}\n",
			"pod default/p: spec.schedulingGroup has no podGroupName"},
		// What the API server refuses (its declarative validation).
		{"apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: ns}\nspec: {schedulingPolicy: {gang: {minCount: -2}}}\n",
			"podgroup ns/g: spec.schedulingPolicy.gang.minCount: Invalid value: -2: must be greater than or equal to 1"},
		{"apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: ns}\nspec: {schedulingPolicy: {gang: {minCount: 0}}}\n",
			"podgroup ns/g: spec.schedulingPolicy.gang.minCount: Required value"},
		{"apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: ns}\nspec: {disruptionMode: {single: {}, all: {}}, schedulingPolicy: {basic: {}}}\n",
			"podgroup ns/g: spec.disruptionMode"},
	} {
		_, _, err := LoadCluster("bad.yaml", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
	// A kind in the wrong case is ignored, with a note naming the right one.
	_, notes, err := LoadCluster("case.yaml", []byte("apiVersion: scheduling.k8s.io/v1beta1\nkind: podgroup\nmetadata: {name: g}\n"))
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], `is not "PodGroup"`) {
		t.Errorf("wrong case: %v %q", err, notes)
	}
}

// Issue 33: a PodGroup's or CompositePodGroup's name is checked as the API
// server checks it (a DNS subdomain: ValidateObjectMeta with
// NameIsDNSSubdomain), as its parent's name already was: "Train_X" and a
// name of 300 characters were decided on. The error names the object,
// the name cut short.
func TestLoadPodGroupNameIsValidated(t *testing.T) {
	long := strings.Repeat("a", 300)
	for _, tc := range []struct{ data, want string }{
		{"apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: Train_X, namespace: ml}\nspec: {schedulingPolicy: {basic: {}}}\n",
			`podgroup ml/Train_X: metadata.name: Invalid value: "Train_X": a lowercase RFC 1123 subdomain must consist of`},
		{"apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: " + long + ", namespace: ml}\nspec: {schedulingPolicy: {basic: {}}}\n",
			"podgroup ml/" + long[:253] + "... (300 bytes): metadata.name: Invalid value: \"" + long[:253] + "... (300 bytes)\": must be no more than 253 characters"},
		{"apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\nmetadata: {name: Job.1, namespace: ml}\nspec: {schedulingPolicy: {basic: {}}}\n",
			`compositepodgroup ml/Job.1: metadata.name: Invalid value: "Job.1": a lowercase RFC 1123 subdomain`},
	} {
		_, _, err := LoadCluster("bad.yaml", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %.400v, want one containing %.400q", err, tc.want)
		}
	}
	// A subdomain is a name: dots and 253 characters are fine.
	ok := "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: train.x-1." + strings.Repeat("a", 243) + ", namespace: ml}\nspec: {schedulingPolicy: {basic: {}}}\n"
	if _, _, err := LoadCluster("ok.yaml", []byte(ok)); err != nil {
		t.Errorf("a valid name: %v", err)
	}
}

// A dump directory with pod groups in files of their own.
func TestLoadPodGroupDumpDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("nodes.json", `{"kind":"NodeList","apiVersion":"v1","items":[{"metadata":{"name":"n1"}}]}`)
	write("ml/podgroups.json", `{"kind":"PodGroupList","apiVersion":"scheduling.k8s.io/v1beta1","items":[{"metadata":{"name":"train","namespace":"ml"},"spec":{"schedulingPolicy":{"basic":{}}}}]}`)
	write("ml/compositepodgroups.yaml", "apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroupList\nitems:\n- metadata: {name: job, namespace: ml}\n  spec: {schedulingPolicy: {basic: {}}}\n")
	c, _, err := LoadPaths([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.PodGroups) != 1 || len(c.CompositePodGroups) != 1 || c.CompositePodGroups[0].Name != "job" {
		t.Errorf("got %d pod groups, %d composites", len(c.PodGroups), len(c.CompositePodGroups))
	}
	// ListYAML writes them back, and they read the same.
	y, err := synth.ListYAML(c)
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := LoadCluster("back.yaml", y)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(c, back); d != "" {
		t.Errorf("ListYAML round trip (-want +got):\n%s", d)
	}
}
