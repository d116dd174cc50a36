package synth

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kptr "k8s.io/utils/ptr"
)

// volumesConfig is the part of a scheduler_perf performance-config.yaml
// of volumes/ and dra/ the pvs shape follows and TestOnlyPreemptionPVsPreempts
// reads: each test case's operations and its workloads' params.
type volumesConfig []struct {
	Name                   string `json:"name"`
	DefaultPodTemplatePath string `json:"defaultPodTemplatePath"`
	WorkloadTemplate       []struct {
		Opcode                            string   `json:"opcode"`
		CountParam                        string   `json:"countParam"`
		NodeTemplatePath                  string   `json:"nodeTemplatePath"`
		PodTemplatePath                   string   `json:"podTemplatePath"`
		PersistentVolumeTemplatePath      string   `json:"persistentVolumeTemplatePath"`
		PersistentVolumeClaimTemplatePath string   `json:"persistentVolumeClaimTemplatePath"`
		TemplatePath                      string   `json:"templatePath"`
		TemplatePaths                     []string `json:"templatePaths"`
		CollectMetrics                    bool     `json:"collectMetrics"`
	} `json:"workloadTemplate"`
	Workloads []struct {
		Name   string         `json:"name"`
		Params map[string]any `json:"params"`
	} `json:"workloads"`
}

// TestPVsIsSchedulerPerfPreemptionPVs builds each workload of
// scheduler_perf's PreemptionPVs (volumes/performance-config.yaml of the
// required k8s.io/kubernetes) as the pvs shape at its initNodes, follows
// the test case's operations and checks the objects against their
// templates: the nodes (no node template: the base node, whose capacity
// node-default.yaml repeats), the low-priority pods (count, four a node,
// requests and priority of pod-low-priority.yaml) and the measured pods
// (MeasurePods, and Preemptors(measurePods): requests and priority of
// pod-high-priority.yaml, each with the claim of pvc.yaml and the volume
// of pv-aws.yaml, bound to each other, named as CreatePodWithPersistentVolume
// names them; internal/e2e's TestPVsIsCreatePodWithPersistentVolume runs
// that function itself).
func TestPVsIsSchedulerPerfPreemptionPVs(t *testing.T) {
	var node v1.Node
	var low, high v1.Pod
	var pvcT v1.PersistentVolumeClaim
	var pvT v1.PersistentVolume
	schedulerPerfTemplate(t, "templates/node-default.yaml", &node)
	schedulerPerfTemplate(t, "templates/pod-low-priority.yaml", &low)
	schedulerPerfTemplate(t, "templates/pod-high-priority.yaml", &high)
	schedulerPerfTemplate(t, "templates/pvc.yaml", &pvcT)
	schedulerPerfTemplate(t, "templates/pv-aws.yaml", &pvT)
	var vc volumesConfig
	schedulerPerfTemplateLax(t, "volumes/performance-config.yaml", &vc)
	var seen []string
	for _, tc := range vc {
		if tc.Name != "PreemptionPVs" {
			continue
		}
		ops := tc.WorkloadTemplate
		if len(ops) != 3 || ops[0].Opcode != "createNodes" || ops[0].NodeTemplatePath != "" ||
			ops[1].Opcode != "createPods" || ops[1].PodTemplatePath != "../templates/pod-low-priority.yaml" || ops[1].PersistentVolumeClaimTemplatePath != "" || ops[1].CollectMetrics ||
			ops[2].Opcode != "createPods" || ops[2].PodTemplatePath != "../templates/pod-high-priority.yaml" || !ops[2].CollectMetrics ||
			ops[2].PersistentVolumeTemplatePath != "../templates/pv-aws.yaml" || ops[2].PersistentVolumeClaimTemplatePath != "../templates/pvc.yaml" {
			t.Fatalf("PreemptionPVs' operations changed: %+v", ops)
		}
		for _, w := range tc.Workloads {
			what := "PreemptionPVs/" + w.Name
			num := func(param string) int {
				f, ok := w.Params[strings.TrimPrefix(param, "$")].(float64)
				if !ok {
					t.Fatalf("%s: param %s is %v", what, param, w.Params[strings.TrimPrefix(param, "$")])
				}
				return int(f)
			}
			nodes, initPods, measure := num(ops[0].CountParam), num(ops[1].CountParam), num(ops[2].CountParam)
			seen = append(seen, fmt.Sprintf("%d/%d/%d", nodes, initPods, measure))
			s := MustBuild("pvs", nodes, 1)
			c := s.Cluster
			if err := c.Validate(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if len(c.Nodes) != nodes || len(c.Pods) != initPods || s.MeasurePods != measure || len(c.PDBs)+len(c.PodGroups) != 0 || s.FeatureGates != nil {
				t.Fatalf("%s: %d nodes, %d pods, MeasurePods %d, %d PDBs, %d pod groups, gates %v; want %d, %d, %d, none", what,
					len(c.Nodes), len(c.Pods), s.MeasurePods, len(c.PDBs), len(c.PodGroups), s.FeatureGates, nodes, initPods, measure)
			}
			for _, n := range c.Nodes {
				for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods} {
					if got, want := n.Status.Allocatable[r], node.Status.Capacity[r]; got.Cmp(want) != 0 {
						t.Errorf("%s: node %s allocatable %s %v, template's capacity %v", what, n.Name, r, got, want)
					}
				}
				if n.Labels[v1.LabelHostname] != n.Name {
					t.Errorf("%s: node %s labels %v", what, n.Name, n.Labels)
				}
			}
			perNode := map[string]int{}
			for _, p := range c.Pods {
				perNode[p.Spec.NodeName]++
				checkTemplatePod(t, what, p, &low, pvsLowNamespace)
				if len(p.Spec.Volumes) != 0 {
					t.Errorf("%s: low pod %s has volumes", what, p.Name)
				}
			}
			for _, n := range c.Nodes {
				if perNode[n.Name] != initPods/nodes {
					t.Errorf("%s: node %s holds %d pods, want %d", what, n.Name, perNode[n.Name], initPods/nodes)
				}
			}
			sc, pods := s.Preemptors(measure)
			if len(pods) != measure || len(sc.PVCs) != measure || len(sc.PVs) != measure {
				t.Fatalf("%s: %d preemptors, %d claims, %d volumes; want %d each", what, len(pods), len(sc.PVCs), len(sc.PVs), measure)
			}
			if len(c.PVCs) != 1 || len(c.PVs) != 1 || !equality.Semantic.DeepEqual(s.Pod, pods[0]) {
				t.Errorf("%s: the scenario's preemptor is not measured pod 0 with its claim and volume alone", what)
			}
			for i, p := range pods {
				checkTemplatePod(t, what, p, &high, pvsMeasuredNamespace)
				if p.Name != fmt.Sprintf("pod-high-priority-%d", i) || p.Spec.NodeName != "" {
					t.Errorf("%s: measured pod %d is %s on %q", what, i, p.Name, p.Spec.NodeName)
				}
				claim := fmt.Sprintf("pvc-%d", i)
				wantVols := []v1.Volume{{Name: "vol", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
				if d := cmp.Diff(wantVols, p.Spec.Volumes); d != "" {
					t.Errorf("%s: %s's volumes (-want +got):\n%s", what, p.Name, d)
				}
				// runners.go's CreatePodWithPersistentVolume with bindVolume,
				// as an informer lists the objects (no type meta).
				wantPVC := pvcT.DeepCopy()
				wantPVC.TypeMeta = metav1.TypeMeta{}
				wantPVC.Name, wantPVC.Namespace = claim, pvsMeasuredNamespace
				wantPV := pvT.DeepCopy()
				wantPV.TypeMeta = metav1.TypeMeta{}
				wantPV.Name = fmt.Sprintf("%s-vol-%d", pvsMeasuredNamespace, i)
				wantPV.Spec.AWSElasticBlockStore.VolumeID = fmt.Sprintf("vol-%d", i)
				wantPV.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: pvsMeasuredNamespace, Name: claim, APIVersion: "v1"}
				wantPV.Status.Phase = v1.VolumeBound
				wantPVC.Spec.VolumeName = wantPV.Name
				wantPVC.Status.Phase = v1.ClaimBound
				gotPVC, gotPV := sc.PVCs[i].DeepCopy(), sc.PVs[i].DeepCopy()
				gotPVC.UID, gotPV.UID = "", "" // the API server's
				if d := cmp.Diff(wantPVC, gotPVC); d != "" {
					t.Errorf("%s: claim %d (-want +got):\n%s", what, i, d)
				}
				if d := cmp.Diff(wantPV, gotPV); d != "" {
					t.Errorf("%s: volume %d (-want +got):\n%s", what, i, d)
				}
			}
		}
	}
	// 5Nodes and 1000Nodes; 5000Nodes is commented out upstream.
	if got := fmt.Sprint(seen); got != "[5/20/5 1000/4000/1000]" {
		t.Errorf("PreemptionPVs' workloads (nodes/initPods/measurePods) %s, want [5/20/5 1000/4000/1000]", got)
	}
	if got := fmt.Sprint(UpstreamSizes("pvs")); got != "[5 1000]" {
		t.Errorf("UpstreamSizes(pvs) = %s, want [5 1000]", got)
	}
}

// checkTemplatePod compares a built pod's namespace, priority and
// requests with its template's.
func checkTemplatePod(t *testing.T, what string, got, want *v1.Pod, namespace string) {
	t.Helper()
	if got.Namespace != namespace {
		t.Errorf("%s: pod %s/%s, want namespace %s", what, got.Namespace, got.Name, namespace)
	}
	if g, w := kptr.Deref(got.Spec.Priority, 0), kptr.Deref(want.Spec.Priority, 0); g != w {
		t.Errorf("%s: %s priority %d, template's %d", what, got.Name, g, w)
	}
	if g, w := got.Spec.Containers[0].Resources.Requests, want.Spec.Containers[0].Resources.Requests; !equality.Semantic.DeepEqual(g, w) {
		t.Errorf("%s: %s requests %v, template's %v", what, got.Name, g, w)
	}
}

// Preemptors leaves the scenario's cluster as it was, and stays within
// the objects it was given: the claims and volumes of a longer stream
// extend those of a shorter one.
func TestPVsPreemptorsLeaveTheScenario(t *testing.T) {
	s := MustBuild("pvs", 5, 1)
	before := s.Cluster
	pvcs, pvs := len(s.Cluster.PVCs), len(s.Cluster.PVs)
	c3, p3 := s.Preemptors(3)
	c7, p7 := s.Preemptors(7)
	if s.Cluster != before || len(s.Cluster.PVCs) != pvcs || len(s.Cluster.PVs) != pvs {
		t.Fatal("Preemptors changed the scenario's cluster")
	}
	if len(c3.PVCs) != 3 || len(c7.PVCs) != 7 || !equality.Semantic.DeepEqual(c3.PVCs, c7.PVCs[:3]) || !equality.Semantic.DeepEqual(p3, p7[:3]) {
		t.Errorf("3 and 7 preemptors: %d and %d claims, or a different start", len(c3.PVCs), len(c7.PVCs))
	}
	if &c3.Pods[0] != &s.Cluster.Pods[0] || &c3.Nodes[0] != &s.Cluster.Nodes[0] {
		t.Error("the stream's cluster copies the nodes and pods it does not change")
	}
	// Any other shape's preemptors are copies of its preemptor on its cluster.
	b := MustBuild("basic", 5, 1)
	c, ps := b.Preemptors(2)
	if c != b.Cluster || len(ps) != 2 || ps[1].Name != "preemptor-1" || ps[1].UID != b.Pod.UID+"-1" || ps[1] == b.Pod {
		t.Errorf("basic's preemptors: %v, %+v", c == b.Cluster, ps)
	}
}

// TestOnlyPreemptionPVsPreempts reads every scheduler_perf configuration
// of volumes/ and dra/ (issue 32 asks for their workloads that preempt)
// and the templates their operations create objects from (pods, pod
// groups, claims, slices...): none but PreemptionPVs' measured pods'
// (templates/pod-high-priority.yaml) says "priority" (a priority or a
// priorityClassName), so every other pod has priority 0 and no pod can
// preempt another (a victim must have a lower priority than its
// preemptor).
func TestOnlyPreemptionPVsPreempts(t *testing.T) {
	_, volumesPath := schedulerPerfFile(t, "volumes/performance-config.yaml")
	perfDir := filepath.Dir(filepath.Dir(volumesPath))
	var configs []string
	for _, dir := range []string{"volumes", "dra"} {
		err := filepath.WalkDir(filepath.Join(perfDir, dir), func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.Name() == "performance-config.yaml" {
				configs = append(configs, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(configs) < 10 {
		t.Fatalf("%d configurations in volumes/ and dra/: %v", len(configs), configs)
	}
	says := regexp.MustCompile(`(?i)priority`)
	priorityTemplates := map[string]bool{}
	preempting := map[string]bool{}
	for _, path := range configs {
		rel, _ := filepath.Rel(perfDir, path)
		var vc volumesConfig
		schedulerPerfTemplateLax(t, rel, &vc)
		if len(vc) == 0 {
			t.Fatalf("%s: no test cases", rel)
		}
		for _, tc := range vc {
			for _, op := range tc.WorkloadTemplate {
				var templates []string
				switch op.Opcode {
				case "createPods":
					// No path: the configuration's default, or
					// makeBasePod (no priority).
					if p := op.PodTemplatePath; p != "" {
						templates = append(templates, p)
					} else if tc.DefaultPodTemplatePath != "" {
						templates = append(templates, tc.DefaultPodTemplatePath)
					}
				case "churn":
					templates = op.TemplatePaths
				default:
					// createAny, createPodGroups (a gang of a priority
					// could preempt too).
					if op.TemplatePath != "" {
						templates = append(templates, op.TemplatePath)
					}
				}
				for _, tmpl := range templates {
					data, err := os.ReadFile(filepath.Join(filepath.Dir(path), tmpl))
					if err != nil {
						t.Fatalf("%s, %s: %v", rel, tc.Name, err)
					}
					if says.Match(data) {
						name, _ := filepath.Rel(perfDir, filepath.Join(filepath.Dir(path), tmpl))
						priorityTemplates[name] = true
						preempting[rel+": "+tc.Name] = true
					}
				}
			}
		}
		// Nor may a configuration pass a priority as a template parameter.
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if says.MatchString(line) && !strings.Contains(line, "TemplatePath: ../templates/pod-low-priority.yaml") && !strings.Contains(line, "TemplatePath: ../templates/pod-high-priority.yaml") {
				t.Errorf("%s: %q", rel, strings.TrimSpace(line))
			}
		}
	}
	if got := fmt.Sprint(preempting); got != "map[volumes/performance-config.yaml: PreemptionPVs:true]" {
		t.Errorf("test cases with a template that says priority: %s, want PreemptionPVs alone", got)
	}
	if got := fmt.Sprint(priorityTemplates); got != "map[templates/pod-high-priority.yaml:true]" {
		t.Errorf("templates that say priority: %s, want templates/pod-high-priority.yaml alone", got)
	}
	var low v1.Pod
	schedulerPerfTemplate(t, "templates/pod-low-priority.yaml", &low)
	if low.Spec.Priority != nil || low.Spec.PriorityClassName != "" {
		t.Errorf("pod-low-priority.yaml sets a priority: %v %q", low.Spec.Priority, low.Spec.PriorityClassName)
	}
}
