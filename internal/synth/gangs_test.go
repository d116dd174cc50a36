package synth

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"text/template"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kptr "k8s.io/utils/ptr"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/preemptbench/preemptbench/preempt"
)

// workloadConfig is the part of workload_preemption's
// performance-config.yaml the gang shapes follow: each test case's gates,
// its operations and its workloads' params.
type workloadConfig []struct {
	Name             string          `json:"name"`
	FeatureGates     map[string]bool `json:"featureGates"`
	WorkloadTemplate []struct {
		Opcode               string         `json:"opcode"`
		CountParam           string         `json:"countParam"`
		CountMultiplierParam string         `json:"countMultiplierParam"`
		Count                int            `json:"count"`
		Prefix               string         `json:"prefix"`
		Namespace            string         `json:"namespace"`
		PodTemplatePath      string         `json:"podTemplatePath"`
		TemplatePath         string         `json:"templatePath"`
		TemplateParams       map[string]any `json:"templateParams"`
		CollectMetrics       bool           `json:"collectMetrics"`
	} `json:"workloadTemplate"`
	Workloads []struct {
		Name   string         `json:"name"`
		Params map[string]any `json:"params"`
	} `json:"workloads"`
}

// gangShapeOf is the shape of each workload_preemption test case.
var gangShapeOf = map[string]string{
	"GangPreemptionBasic":     "gang-basic",
	"GangPreemptionPodGroups": "gang-podgroups",
	"GangPreemptionAffinity":  "gang-affinity",
}

// renderSchedulerPerf renders a scheduler_perf object template as its
// createPods and createPodGroups do (text/template with the functions
// the workload_preemption templates use, on the operation's resolved
// templateParams plus Index) and decodes it strictly into into.
// Templates are parsed once: schedulerPerfFile runs go list.
func renderSchedulerPerf(t *testing.T, rel string, env map[string]any, into any) {
	t.Helper()
	tmpl := parsedTemplates[rel]
	if tmpl == nil {
		src, path := schedulerPerfFile(t, rel)
		var err error
		tmpl, err = template.New(path).Funcs(template.FuncMap{"AddInt": addInt, "DivideInt": divideInt, "Mod": modInt}).Parse(string(src))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		parsedTemplates[rel] = tmpl
	}
	path := tmpl.Name()
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, env); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := sigsyaml.UnmarshalStrict(buf.Bytes(), into); err != nil {
		t.Fatalf("%s rendered with %v: %v\n%s", path, env, err, buf.Bytes())
	}
}

var parsedTemplates = map[string]*template.Template{}

// The template functions of scheduler_perf (operations.go's
// getTemplateFuncs) the workload_preemption templates use, on the ints
// and float64s of params and Index.
func addInt(a, b any) int    { return templateInt(a) + templateInt(b) }
func divideInt(a, b any) int { return templateInt(a) / templateInt(b) }
func modInt(a, b any) int    { return templateInt(a) % templateInt(b) }

func templateInt(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case float64:
		return int(x)
	}
	panic(fmt.Sprintf("%v (%T) is not a number", v, v))
}

// TestGangShapesAreSchedulerPerf builds every workload of scheduler_perf's
// GangPreemptionBasic, GangPreemptionPodGroups and GangPreemptionAffinity
// (workload_preemption/performance-config.yaml of the required
// k8s.io/kubernetes) as its shape, at its initNodes with its number of
// preemptor gangs, and replays the test case's operations against it:
// the nodes against node-default.yaml, the namespaces, and every pod and
// PodGroup of each createPods and createPodGroups against the operation's
// template rendered at its index with its params (names, namespaces,
// priorities, requests, host ports, labels, affinity, membership,
// minCount); the gangs are the collectMetrics pods, their count the
// measured pods, the gates the test case's.
func TestGangShapesAreSchedulerPerf(t *testing.T) {
	var node v1.Node
	schedulerPerfTemplate(t, "templates/node-default.yaml", &node)
	var wc workloadConfig
	schedulerPerfTemplateLax(t, "workload_preemption/performance-config.yaml", &wc)
	seen := map[string][]string{}
	for _, tc := range wc {
		shape, ok := gangShapeOf[tc.Name]
		if !ok {
			t.Errorf("workload_preemption's test case %s has no shape", tc.Name)
			continue
		}
		for _, w := range tc.Workloads {
			what := tc.Name + "/" + w.Name
			param := func(v any) any {
				if s, ok := v.(string); ok && strings.HasPrefix(s, "$") {
					p, ok := w.Params[s[1:]]
					if !ok {
						t.Fatalf("%s: no param %s", what, s)
					}
					return p
				}
				return v
			}
			num := func(v any) int {
				f, ok := param(v).(float64)
				if !ok {
					t.Fatalf("%s: %v is %v, not a number", what, v, param(v))
				}
				return int(f)
			}
			nodes := num("$initNodes")
			gangs := 0
			for _, k := range []string{"preemptorPodGroups", "highPriorityGroups"} {
				if _, ok := w.Params[k]; ok {
					gangs = num("$" + k)
				}
			}
			seen[shape] = append(seen[shape], fmt.Sprintf("%dx%d", nodes, gangs))
			s := MustBuildGangs(shape, nodes, gangs, 1)
			c := s.Cluster
			if err := c.Validate(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if !maps.Equal(s.FeatureGates, tc.FeatureGates) {
				t.Errorf("%s: gates %v, want %v", what, s.FeatureGates, tc.FeatureGates)
			}
			if s.Pod != nil {
				t.Errorf("%s: a gang shape has a single preemptor %s", what, s.Pod.Name)
			}
			podsOf := map[string][]*v1.Pod{}
			for _, p := range c.Pods {
				podsOf[p.Namespace] = append(podsOf[p.Namespace], p)
			}
			groupsOf := map[string][]*preempt.PodGroup{}
			for _, pg := range c.PodGroups {
				groupsOf[pg.Namespace] = append(groupsOf[pg.Namespace], pg)
			}
			var members []*v1.Pod
			for _, g := range s.Gangs {
				members = append(members, g.Members...)
				if !slices.Contains(c.PodGroups, g.PodGroup) {
					t.Errorf("%s: preemptor group %s is not in the cluster", what, g.PodGroup.Name)
				}
			}
			usedPods, usedGroups := map[string]int{}, map[string]int{}
			for _, op := range tc.WorkloadTemplate {
				count := 0
				if op.CountParam != "" {
					count = num(op.CountParam)
				}
				if op.CountMultiplierParam != "" {
					count *= num(op.CountMultiplierParam)
				}
				env := func(i int) map[string]any {
					e := map[string]any{"Index": i, "Count": count}
					for k, v := range op.TemplateParams {
						e[k] = param(v)
					}
					return e
				}
				switch op.Opcode {
				case "createNodes":
					if len(c.Nodes) != count {
						t.Errorf("%s: %d nodes, want %d", what, len(c.Nodes), count)
					}
					for _, n := range c.Nodes {
						for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods} {
							if got, want := n.Status.Allocatable[r], node.Status.Capacity[r]; got.Cmp(want) != 0 {
								t.Errorf("%s: node %s allocatable %s %v, template's capacity %v", what, n.Name, r, got, want)
							}
						}
					}
				case "createNamespaces":
					var got, want []string
					for _, ns := range c.Namespaces {
						got = append(got, ns.Name)
					}
					for i := range op.Count {
						want = append(want, fmt.Sprintf("%s-%d", op.Prefix, i))
					}
					if !slices.Equal(got, want) {
						t.Errorf("%s: namespaces %v, want %v", what, got, want)
					}
				case "createPodGroups":
					got := groupsOf[op.Namespace][usedGroups[op.Namespace]:]
					if len(got) < count {
						t.Fatalf("%s: %d pod groups left in %s, want %d", what, len(got), op.Namespace, count)
					}
					usedGroups[op.Namespace] += count
					for i := range count {
						var want preempt.PodGroup
						renderSchedulerPerf(t, "workload_preemption/"+op.TemplatePath, env(i), &want)
						g := got[i]
						if g.Name != want.Name || preempt.PodGroupPriority(g) != preempt.PodGroupPriority(&want) ||
							preempt.PodGroupMinCount(g) != preempt.PodGroupMinCount(&want) || preempt.PodGroupModeAll(g) {
							t.Errorf("%s: pod group %s/%s priority %d minCount %d, template's %s priority %d minCount %d", what, g.Namespace, g.Name,
								preempt.PodGroupPriority(g), preempt.PodGroupMinCount(g), want.Name, preempt.PodGroupPriority(&want), preempt.PodGroupMinCount(&want))
						}
					}
				case "createPods":
					var got []*v1.Pod
					if op.CollectMetrics {
						got = members
						if s.MeasurePods != count || len(members) != count {
							t.Errorf("%s: %d gang members, MeasurePods %d; want %d", what, len(members), s.MeasurePods, count)
						}
					} else {
						got = podsOf[op.Namespace][usedPods[op.Namespace]:]
						usedPods[op.Namespace] += count
					}
					if len(got) < count {
						t.Fatalf("%s: %d pods left in %s, want %d", what, len(got), op.Namespace, count)
					}
					for i := range count {
						var want v1.Pod
						renderSchedulerPerf(t, "workload_preemption/"+op.PodTemplatePath, env(i), &want)
						checkGangPod(t, what, got[i], &want, op.Namespace, !op.CollectMetrics)
					}
				default:
					t.Errorf("%s: operation %s not followed", what, op.Opcode)
				}
			}
			for ns, ps := range podsOf {
				if len(ps) != usedPods[ns] {
					t.Errorf("%s: %d pods in %s, the operations create %d", what, len(ps), ns, usedPods[ns])
				}
			}
			for ns, gs := range groupsOf {
				if len(gs) != usedGroups[ns] {
					t.Errorf("%s: %d pod groups in %s, the operations create %d", what, len(gs), ns, usedGroups[ns])
				}
			}
			checkGangLayout(t, what, s)
		}
	}
	// The short workload and the two performance ones of each test case
	// (GangPreemptionPodGroups' 10 gangs evict 50 low groups of 10).
	for _, shape := range GangShapes() {
		if got := fmt.Sprint(seen[shape]); got != "[2x1 100x1 100x10]" {
			t.Errorf("%s: upstream's workloads %s, want [2x1 100x1 100x10]", shape, got)
		}
		if got := fmt.Sprint(UpstreamSizes(shape)); got != "[2 100]" {
			t.Errorf("UpstreamSizes(%s) = %s, want [2 100]", shape, got)
		}
	}
	if DefaultGangs(2) != 1 || DefaultGangs(100) != 10 {
		t.Errorf("DefaultGangs: %d at 2 nodes, %d at 100; want 1 and 10", DefaultGangs(2), DefaultGangs(100))
	}
}

// checkGangPod compares a built pod with its template rendered: the name
// (generateName's without its random suffix), namespace, priority,
// requests, host ports, labels, affinity and group; bound pods are bound,
// gang members not, nor started.
func checkGangPod(t *testing.T, what string, got, want *v1.Pod, namespace string, bound bool) {
	t.Helper()
	name := want.Name
	if name == "" {
		name = strings.TrimSuffix(want.GenerateName, "-")
	}
	if got.Name != name || got.Namespace != namespace {
		t.Errorf("%s: pod %s/%s, template's %s/%s", what, got.Namespace, got.Name, namespace, name)
		return
	}
	key := got.Namespace + "/" + got.Name
	if g, w := kptr.Deref(got.Spec.Priority, 0), kptr.Deref(want.Spec.Priority, 0); g != w {
		t.Errorf("%s: %s priority %d, template's %d", what, key, g, w)
	}
	if g, w := got.Spec.Containers[0].Resources.Requests, want.Spec.Containers[0].Resources.Requests; !equality.Semantic.DeepEqual(g, w) {
		t.Errorf("%s: %s requests %v, template's %v", what, key, g, w)
	}
	ports := func(p *v1.Pod) []int32 {
		var out []int32
		for _, c := range p.Spec.Containers {
			for _, port := range c.Ports {
				if port.HostPort != 0 {
					out = append(out, port.HostPort)
				}
			}
		}
		return out
	}
	if g, w := ports(got), ports(want); !slices.Equal(g, w) {
		t.Errorf("%s: %s host ports %v, template's %v", what, key, g, w)
	}
	if !maps.Equal(got.Labels, want.Labels) {
		t.Errorf("%s: %s labels %v, template's %v", what, key, got.Labels, want.Labels)
	}
	if d := cmp.Diff(want.Spec.Affinity, got.Spec.Affinity); d != "" {
		t.Errorf("%s: %s affinity (-template +built):\n%s", what, key, d)
	}
	if d := cmp.Diff(want.Spec.SchedulingGroup, got.Spec.SchedulingGroup); d != "" {
		t.Errorf("%s: %s scheduling group (-template +built):\n%s", what, key, d)
	}
	if preempt.IsBound(got) != bound || (!bound && got.Status.StartTime != nil) {
		t.Errorf("%s: %s bound to %q, started %v; want bound %v", what, key, got.Spec.NodeName, got.Status.StartTime, bound)
	}
}

// checkGangLayout checks the initial placement against what the
// scheduler must leave: no two pods of a node share a host port (so a
// low group's members are on distinct nodes), every node holds as many
// pods, no two pods below the gangs' priority started in the same second
// (see distinctAges), and every preemptor member fits a node only once
// all its lower-priority pods are gone.
func checkGangLayout(t *testing.T, what string, s *Scenario) {
	t.Helper()
	c := s.Cluster
	perNode := map[string][]*v1.Pod{}
	for _, p := range c.Pods {
		perNode[p.Spec.NodeName] = append(perNode[p.Spec.NodeName], p)
	}
	started := map[int64]string{}
	for _, p := range c.Pods {
		if kptr.Deref(p.Spec.Priority, 0) >= kptr.Deref(s.Gangs[0].Members[0].Spec.Priority, 0) {
			continue // never a victim
		}
		if p.Status.StartTime == nil {
			t.Errorf("%s: %s/%s is bound and not started", what, p.Namespace, p.Name)
			continue
		}
		if other, ok := started[p.Status.StartTime.Unix()]; ok {
			t.Errorf("%s: %s/%s started in the second %s did (a tie the gang path orders as upstream's snapshot lists)", what, p.Namespace, p.Name, other)
		}
		started[p.Status.StartTime.Unix()] = p.Namespace + "/" + p.Name
	}
	count := -1
	for _, n := range c.Nodes {
		ps := perNode[n.Name]
		if count >= 0 && len(ps) != count {
			t.Errorf("%s: node %s holds %d pods, another %d", what, n.Name, len(ps), count)
		}
		count = len(ps)
		ports := map[int32]bool{}
		used := int64(0)
		for _, p := range ps {
			used += p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
			for _, port := range p.Spec.Containers[0].Ports {
				if ports[port.HostPort] {
					t.Errorf("%s: node %s holds two pods of host port %d", what, n.Name, port.HostPort)
				}
				ports[port.HostPort] = true
			}
		}
		for _, g := range s.Gangs {
			m := g.Members[0]
			prio := kptr.Deref(m.Spec.Priority, 0)
			need := m.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
			kept, smallest := int64(0), int64(1<<62)
			for _, p := range ps {
				cpu := p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
				if kptr.Deref(p.Spec.Priority, 0) >= prio {
					kept += cpu
				} else {
					smallest = min(smallest, cpu)
				}
			}
			if free := int64(4000) - used; free >= need || 4000-kept < need || 4000-kept-smallest >= need {
				t.Errorf("%s: node %s: a member of %dm fits with %dm free, %dm kept", what, n.Name, need, free, kept)
			}
		}
	}
}
