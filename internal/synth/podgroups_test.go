package synth

import (
	"fmt"
	"maps"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kptr "k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/preempt"
)

// performanceConfig is the part of a scheduler_perf performance-config.yaml
// the shapes follow: each test case's gates and its workloads' params.
type performanceConfig []struct {
	Name         string          `json:"name"`
	FeatureGates map[string]bool `json:"featureGates"`
	Workloads    []struct {
		Name   string         `json:"name"`
		Params map[string]any `json:"params"`
	} `json:"workloads"`
}

func readPerformanceConfig(t *testing.T, rel string) performanceConfig {
	t.Helper()
	var pc performanceConfig
	schedulerPerfTemplateLax(t, rel, &pc)
	return pc
}

// podGroupShapeOf is the shape of a PreemptionPodGroupDisruptionMode
// workload's disruptionMode.
var podGroupShapeOf = map[string]string{"": "podgroup-none", "single": "podgroup-single", "all": "podgroup-all"}

// TestPodGroupShapesAreSchedulerPerf builds each workload of
// scheduler_perf's PreemptionPodGroupDisruptionMode (the required
// k8s.io/kubernetes) as its shape at its initNodes, and checks the counts
// and objects against its params and templates: nodes, groups, pods per
// group and per node, cpu, priorities, modes, membership, the gates, the
// measured preemptors and the preemptor.
func TestPodGroupShapesAreSchedulerPerf(t *testing.T) {
	var node v1.Node
	var high v1.Pod
	schedulerPerfTemplate(t, "templates/node-default.yaml", &node)
	schedulerPerfTemplate(t, "default_preemption/templates/pod-high-priority.yaml", &high)
	pc := readPerformanceConfig(t, "default_preemption/performance-config.yaml")
	seen := map[string][]int{}
	for _, tc := range pc {
		if tc.Name != "PreemptionPodGroupDisruptionMode" {
			continue
		}
		wantGates := maps.Clone(tc.FeatureGates)
		delete(wantGates, "SchedulerAsyncAPICalls") // not carried: see podGroupVictims
		for _, w := range tc.Workloads {
			mode, _ := w.Params["disruptionMode"].(string)
			shape, ok := podGroupShapeOf[mode]
			if !ok {
				t.Fatalf("%s: disruptionMode %q has no shape", w.Name, mode)
			}
			num := func(k string) int {
				f, ok := w.Params[k].(float64)
				if !ok {
					t.Fatalf("%s: param %s is %v", w.Name, k, w.Params[k])
				}
				return int(f)
			}
			nodes := num("initNodes")
			seen[shape] = append(seen[shape], nodes)
			cpu := resource.MustParse(w.Params["lowPriorityCpuRequest"].(string))
			checkPodGroupShape(t, w.Name, MustBuild(shape, nodes, 1), podGroupWant{
				nodes: nodes, groups: num("lowPriorityGroups"), perGroup: num("podsPerGroup"), measure: num("measurePods"),
				milliCPU: cpu.MilliValue(), mode: mode, gates: wantGates, node: &node, preemptor: &high,
			})
		}
	}
	// FastTest (2 nodes) and 1000Nodes_1000Candidates, for each mode.
	for _, shape := range podGroupShapeOf {
		if got := fmt.Sprint(seen[shape]); got != "[2 1000]" {
			t.Errorf("%s: upstream's workloads at %s nodes, want [2 1000]", shape, got)
		}
		if got := fmt.Sprint(UpstreamSizes(shape)); got != "[2 1000]" {
			t.Errorf("UpstreamSizes(%s) = %s, want [2 1000]", shape, got)
		}
	}
}

// Between and around upstream's sizes the shapes keep their rule: a
// group per node, min(10, nodes) pods per group of 3000m/that, one
// measured preemptor per 10 nodes (at least one).
func TestPodGroupShapesAtOtherSizes(t *testing.T) {
	var node v1.Node
	var high v1.Pod
	schedulerPerfTemplate(t, "templates/node-default.yaml", &node)
	schedulerPerfTemplate(t, "default_preemption/templates/pod-high-priority.yaml", &high)
	for mode, shape := range podGroupShapeOf {
		for _, tc := range []struct{ nodes, perGroup, measure int }{
			{0, 1, 1}, {1, 1, 1}, {3, 3, 1}, {10, 10, 1}, {30, 10, 3}, {250, 10, 25},
		} {
			checkPodGroupShape(t, fmt.Sprintf("%s/%d", shape, tc.nodes), MustBuild(shape, tc.nodes, 5), podGroupWant{
				nodes: tc.nodes, groups: tc.nodes, perGroup: tc.perGroup, measure: tc.measure,
				milliCPU: int64(3000 / tc.perGroup), mode: mode, gates: map[string]bool{"GenericWorkload": true}, node: &node, preemptor: &high,
			})
		}
	}
	// The members' nodes are drawn: another seed, another layout.
	a, b := MustBuild("podgroup-all", 100, 1), MustBuild("podgroup-all", 100, 2)
	same := 0
	for i := range a.Cluster.Pods {
		if a.Cluster.Pods[i].Spec.NodeName == b.Cluster.Pods[i].Spec.NodeName {
			same++
		}
	}
	if same > len(a.Cluster.Pods)/4 {
		t.Errorf("seeds 1 and 2 put %d of %d pods on the same node", same, len(a.Cluster.Pods))
	}
}

type podGroupWant struct {
	nodes, groups, perGroup, measure int
	milliCPU                         int64
	mode                             string
	gates                            map[string]bool
	node                             *v1.Node
	preemptor                        *v1.Pod
}

func checkPodGroupShape(t *testing.T, what string, s *Scenario, w podGroupWant) {
	t.Helper()
	c := s.Cluster
	if err := c.Validate(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(c.Nodes) != w.nodes || len(c.PodGroups) != w.groups || len(c.Pods) != w.groups*w.perGroup || len(c.PDBs) != 0 {
		t.Fatalf("%s: %d nodes, %d pod groups, %d pods, %d PDBs; want %d, %d, %d, 0", what, len(c.Nodes), len(c.PodGroups), len(c.Pods), len(c.PDBs), w.nodes, w.groups, w.groups*w.perGroup)
	}
	if s.MeasurePods != w.measure {
		t.Errorf("%s: MeasurePods %d, want %d", what, s.MeasurePods, w.measure)
	}
	if !maps.Equal(s.FeatureGates, w.gates) {
		t.Errorf("%s: gates %v, want %v", what, s.FeatureGates, w.gates)
	}
	for _, n := range c.Nodes {
		for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods} {
			if got, want := n.Status.Allocatable[r], w.node.Status.Capacity[r]; got.Cmp(want) != 0 {
				t.Errorf("%s: node %s allocatable %s %v, template's capacity %v", what, n.Name, r, got, want)
			}
		}
	}
	for _, pg := range c.PodGroups {
		if pg.Namespace != lowNamespace || preempt.PodGroupPriority(pg) != 1000 || preempt.PodGroupMinCount(pg) != int32(w.perGroup) ||
			preempt.PodGroupModeAll(pg) != (w.mode == "all") || pg.Spec.DisruptionMode == nil {
			t.Errorf("%s: pod group %+v", what, pg)
		}
	}
	perNode := map[string]int{}
	groupNodes := map[string]map[string]bool{}
	members := map[string]int{}
	for _, p := range c.Pods {
		perNode[p.Spec.NodeName]++
		req := p.Spec.Containers[0].Resources.Requests
		if p.Namespace != lowNamespace || kptr.Deref(p.Spec.Priority, 0) != 1000 || req.Cpu().MilliValue() != w.milliCPU || req.Memory().Cmp(resource.MustParse("50Mi")) != 0 {
			t.Errorf("%s: pod %s/%s priority %d requests %v", what, p.Namespace, p.Name, kptr.Deref(p.Spec.Priority, 0), req)
		}
		g, ok := preempt.PodGroupName(p)
		if ok != (w.mode != "") {
			t.Fatalf("%s: pod %s in a group: %v, want %v", what, p.Name, ok, w.mode != "")
		}
		if !ok {
			continue
		}
		members[g]++
		if groupNodes[g] == nil {
			groupNodes[g] = map[string]bool{}
		}
		groupNodes[g][p.Spec.NodeName] = true
	}
	for _, n := range c.Nodes {
		if perNode[n.Name] != w.perGroup {
			t.Errorf("%s: node %s holds %d pods, want %d", what, n.Name, perNode[n.Name], w.perGroup)
		}
	}
	if w.mode != "" {
		for _, pg := range c.PodGroups {
			if members[pg.Name] != w.perGroup {
				t.Errorf("%s: group %s has %d members, want %d", what, pg.Name, members[pg.Name], w.perGroup)
			}
			// Distinct nodes whenever a level holds whole groups.
			if w.nodes%w.perGroup == 0 && len(groupNodes[pg.Name]) != w.perGroup {
				t.Errorf("%s: group %s spans %d nodes, want %d", what, pg.Name, len(groupNodes[pg.Name]), w.perGroup)
			}
		}
	}
	p := s.Pod
	if p.Namespace != preemptorNamespace || p.Spec.NodeName != "" || p.Spec.SchedulingGroup != nil ||
		kptr.Deref(p.Spec.Priority, 0) != kptr.Deref(w.preemptor.Spec.Priority, 0) {
		t.Errorf("%s: preemptor %s/%s priority %d", what, p.Namespace, p.Name, kptr.Deref(p.Spec.Priority, 0))
	}
	g, want := p.Spec.Containers[0].Resources.Requests, w.preemptor.Spec.Containers[0].Resources.Requests
	if g.Cpu().Cmp(*want.Cpu()) != 0 || g.Memory().Cmp(*want.Memory()) != 0 {
		t.Errorf("%s: preemptor requests %v, template's %v", what, g, want)
	}
}
