package conformance

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"context"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"
)

// TestMinimiseGang is a tool, not a test: with PREEMPTTEST_MINIMISE=DIR
// it draws gang problems (GenGang) from seeds 0 to PREEMPTTEST_SEEDS
// (1000 by default) until the reference and upstream (or
// PREEMPTTEST_IMPL) disagree, shrinks the problem greedily (nodes, pods,
// PDBs, groups, members, pod fields) while they still disagree, and
// writes it to DIR as cluster.yaml and gang.yaml for `compare decide
// -pod-group`.
func TestMinimiseGang(t *testing.T) {
	dir := os.Getenv("PREEMPTTEST_MINIMISE")
	if dir == "" {
		t.Skip("a tool: set PREEMPTTEST_MINIMISE=DIR")
	}
	seeds := 1000
	if s := os.Getenv("PREEMPTTEST_SEEDS"); s != "" {
		seeds, _ = strconv.Atoi(s)
	}
	first := 0
	if s := os.Getenv("PREEMPTTEST_FIRST"); s != "" {
		first, _ = strconv.Atoi(s)
	}
	implName := "upstream"
	if s := os.Getenv("PREEMPTTEST_IMPL"); s != "" {
		implName = s // the implementation compared with the reference
	}
	up, err := registry.Lookup(implName)
	if err != nil {
		t.Fatal(err)
	}
	gen := GenGang(MaxNodes)
	if os.Getenv("PREEMPTTEST_GEN") == "volumes" {
		// The GangVolumes property's problems.
		gen = GenGangVolumes(MaxVolumeNodes)
	}
	differs := func(in Input) (bool, string) {
		if in.Cluster.Validate() != nil || in.Gang.Validate() != nil || refusedGangMember(in) {
			return false, ""
		}
		rec := &recorder{name: "minimise"}
		func() {
			defer func() {
				if r := recover(); r != nil {
					rec.Error(fmt.Sprint("panic: ", r))
				}
			}()
			CheckGang(rec, in, up)
		}()
		if !rec.failed {
			return false, ""
		}
		return true, fmt.Sprint(rec.errors)
	}
	if os.Getenv("PREEMPTTEST_MODE") == "nondet" {
		differs = func(in Input) (bool, string) {
			if in.Cluster.Validate() != nil || in.Gang.Validate() != nil {
				return false, ""
			}
			seen := map[string]bool{}
			for range 16 {
				seen[answer(t, in, up)] = true
			}
			if len(seen) < 2 {
				return false, ""
			}
			return true, fmt.Sprint(seen)
		}
	}
	if ff := os.Getenv("PREEMPTTEST_FAILFILE"); ff != "" {
		// The problem a property's failure file replays: GenGang's
		// draw labelled "input", as GangDecision draws it.
		var in Input
		defer setFlag(t, "rapid.failfile", ff)()
		defer setFlag(t, "rapid.nofailfile", "true")() // its "drawn" is no failure
		rapid.Check(&recorder{name: t.Name()}, func(rt *rapid.T) {
			in = gen.Draw(rt, "input")
			rt.Fatalf("drawn")
		})
		if ok, _ := differs(in); !ok {
			t.Fatalf("%s: the reference and %s agree on its problem", ff, implName)
		}
		in = shrinkGang(in, func(in Input) bool { ok, _ := differs(in); return ok })
		_, msg := differs(in)
		t.Logf("minimised: %s\n%s", in, msg)
		writeGang(t, dir, in)
		return
	}
	for seed := first; seed < seeds; seed++ {
		in := gen.Example(seed)
		if ok, _ := differs(in); !ok {
			continue
		}
		t.Logf("seed %d disagrees: %s", seed, in)
		in = shrinkGang(in, func(in Input) bool { ok, _ := differs(in); return ok })
		_, msg := differs(in)
		t.Logf("minimised: %s\n%s", in, msg)
		writeGang(t, dir, in)
		return
	}
	t.Logf("no disagreement in seeds %d to %d", first, seeds)
}

func cloneInput(in Input) Input {
	out := in
	out.Cluster = in.Cluster.DeepCopy()
	g := *in.Gang
	g.Pods = nil
	for _, p := range in.Gang.Pods {
		g.Pods = append(g.Pods, p.DeepCopy())
	}
	out.Gang = &g
	return out
}

// shrinkGang removes whatever it can from in while bad holds.
func shrinkGang(in Input, bad func(Input) bool) Input {
	try := func(edit func(Input) bool) bool {
		c := cloneInput(in)
		if !edit(c) {
			return false
		}
		if bad(c) {
			in = c
			return true
		}
		return false
	}
	for changed := true; changed; {
		changed = false
		// nodes, with their pods
		for i := len(in.Cluster.Nodes) - 1; i >= 0; i-- {
			changed = try(func(c Input) bool {
				name := c.Cluster.Nodes[i].Name
				c.Cluster.Nodes = append(c.Cluster.Nodes[:i:i], c.Cluster.Nodes[i+1:]...)
				var pods []*v1.Pod
				for _, p := range c.Cluster.Pods {
					if p.Spec.NodeName == name {
						continue
					}
					if p.Status.NominatedNodeName == name {
						p.Status.NominatedNodeName = ""
					}
					pods = append(pods, p)
				}
				c.Cluster.Pods = pods
				for _, p := range c.Gang.Pods {
					if p.Status.NominatedNodeName == name {
						p.Status.NominatedNodeName = ""
					}
				}
				return true
			}) || changed
		}
		for i := len(in.Cluster.Pods) - 1; i >= 0; i-- {
			changed = try(func(c Input) bool {
				c.Cluster.Pods = append(c.Cluster.Pods[:i:i], c.Cluster.Pods[i+1:]...)
				return true
			}) || changed
		}
		for i := len(in.Cluster.PDBs) - 1; i >= 0; i-- {
			changed = try(func(c Input) bool {
				c.Cluster.PDBs = append(c.Cluster.PDBs[:i:i], c.Cluster.PDBs[i+1:]...)
				return true
			}) || changed
		}
		for i := len(in.Cluster.PodGroups) - 1; i >= 0; i-- {
			changed = try(func(c Input) bool {
				name := c.Cluster.PodGroups[i].Name
				if c.Gang.PodGroup != nil && name == c.Gang.PodGroup.Name {
					return false
				}
				for _, p := range c.Cluster.Pods {
					if p.Spec.SchedulingGroup != nil && p.Spec.SchedulingGroup.PodGroupName != nil && *p.Spec.SchedulingGroup.PodGroupName == name {
						return false
					}
				}
				c.Cluster.PodGroups = append(c.Cluster.PodGroups[:i:i], c.Cluster.PodGroups[i+1:]...)
				return true
			}) || changed
		}
		// storage and devices, then the members' volumes and claims
		for _, list := range []func(c *preempt.Cluster) any{
			func(c *preempt.Cluster) any { return &c.PVCs },
			func(c *preempt.Cluster) any { return &c.PVs },
			func(c *preempt.Cluster) any { return &c.StorageClasses },
			func(c *preempt.Cluster) any { return &c.CSINodes },
			func(c *preempt.Cluster) any { return &c.CSIDrivers },
			func(c *preempt.Cluster) any { return &c.VolumeAttachments },
			func(c *preempt.Cluster) any { return &c.ResourceClaims },
			func(c *preempt.Cluster) any { return &c.ResourceSlices },
		} {
			for i := shrinkLen(list(in.Cluster)) - 1; i >= 0; i-- {
				changed = try(func(c Input) bool { return shrinkDrop(list(c.Cluster), i) }) || changed
			}
		}
		for i := range in.Gang.Pods {
			for j := len(in.Gang.Pods[i].Spec.Volumes) - 1; j >= 0; j-- {
				changed = try(func(c Input) bool {
					p := c.Gang.Pods[i]
					p.Spec.Volumes = append(p.Spec.Volumes[:j:j], p.Spec.Volumes[j+1:]...)
					return true
				}) || changed
			}
			for j := len(in.Gang.Pods[i].Spec.ResourceClaims) - 1; j >= 0; j-- {
				changed = try(func(c Input) bool {
					p := c.Gang.Pods[i]
					name := p.Spec.ResourceClaims[j].Name
					p.Spec.ResourceClaims = append(p.Spec.ResourceClaims[:j:j], p.Spec.ResourceClaims[j+1:]...)
					for k := range p.Spec.Containers {
						p.Spec.Containers[k].Resources.Claims = slices.DeleteFunc(slices.Clone(p.Spec.Containers[k].Resources.Claims), func(rc v1.ResourceClaim) bool { return rc.Name == name })
					}
					return true
				}) || changed
			}
		}
		for i := len(in.Gang.Pods) - 1; i >= 0 && len(in.Gang.Pods) > 1; i-- {
			changed = try(func(c Input) bool {
				c.Gang.Pods = append(c.Gang.Pods[:i:i], c.Gang.Pods[i+1:]...)
				return true
			}) || changed
		}
		// pod fields
		all := func(c Input) []*v1.Pod { return append(append([]*v1.Pod{}, c.Cluster.Pods...), c.Gang.Pods...) }
		for i := range len(in.Cluster.Pods) + len(in.Gang.Pods) {
			for _, edit := range []func(p *v1.Pod) bool{
				func(p *v1.Pod) bool { r := p.Spec.Affinity != nil; p.Spec.Affinity = nil; return r },
				func(p *v1.Pod) bool {
					r := p.Spec.TopologySpreadConstraints != nil
					p.Spec.TopologySpreadConstraints = nil
					return r
				},
				func(p *v1.Pod) bool { r := p.Labels != nil; p.Labels = nil; return r },
				func(p *v1.Pod) bool { r := p.Status.NominatedNodeName != ""; p.Status.NominatedNodeName = ""; return r },
				func(p *v1.Pod) bool {
					r := p.DeletionTimestamp != nil
					p.DeletionTimestamp = nil
					p.Status.Conditions = nil
					return r
				},
				func(p *v1.Pod) bool {
					r := false
					for j := range p.Spec.Containers {
						for k := range p.Spec.Containers[j].Ports {
							_ = k
							r = true
						}
						p.Spec.Containers[j].Ports = nil
					}
					return r
				},
				func(p *v1.Pod) bool {
					r := p.Spec.SchedulingGroup != nil && p.Spec.NodeName != ""
					if r {
						p.Spec.SchedulingGroup = nil
					}
					return r
				},
			} {
				changed = try(func(c Input) bool { return edit(all(c)[i]) }) || changed
			}
		}
	}
	return in
}

// shrinkLen is the length of the slice list points to.
func shrinkLen(list any) int { return reflect.ValueOf(list).Elem().Len() }

// shrinkDrop removes element i of the slice list points to (a copy).
func shrinkDrop(list any, i int) bool {
	v := reflect.ValueOf(list).Elem()
	out := reflect.MakeSlice(v.Type(), 0, v.Len()-1)
	out = reflect.AppendSlice(out, v.Slice(0, i))
	out = reflect.AppendSlice(out, v.Slice(i+1, v.Len()))
	v.Set(out)
	return true
}

func writeGang(t *testing.T, dir string, in Input) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := synth.ListYAML(in.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cluster.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	var groups []any
	if in.Gang.PodGroup != nil {
		pg := in.Gang.PodGroup.DeepCopy()
		pg.APIVersion, pg.Kind = "scheduling.k8s.io/v1beta1", "PodGroup"
		groups = append(groups, pg)
	} else {
		cpg := in.Gang.CompositePodGroup.DeepCopy()
		cpg.APIVersion, cpg.Kind = "scheduling.k8s.io/v1alpha3", "CompositePodGroup"
		groups = append(groups, cpg)
		for _, pg := range in.Gang.PodGroups {
			pg = pg.DeepCopy()
			pg.APIVersion, pg.Kind = "scheduling.k8s.io/v1beta1", "PodGroup"
			groups = append(groups, pg)
		}
	}
	for i, g := range groups {
		y, err := yaml.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(y)
	}
	for _, p := range in.Gang.Pods {
		y, err := synth.PodYAML(p)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("---\n")
		buf.Write(y)
	}
	if err := os.WriteFile(filepath.Join(dir, "gang.yaml"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("config %+v now %v", in.Gang.Config, in.Gang.Now)
	_ = preempt.GenericWorkloadGate
}

// TestGangDeterminism is a tool: with PREEMPTTEST_SEED=N it decides
// GenGang's seed N twice per implementation, twenty times, and logs
// whether each implementation always answers the same.
func TestGangDeterminism(t *testing.T) {
	s := os.Getenv("PREEMPTTEST_SEED")
	if s == "" {
		t.Skip("a tool: set PREEMPTTEST_SEED=N")
	}
	seed, _ := strconv.Atoi(s)
	in := GenGang(MaxNodes).Example(seed)
	for _, name := range []string{"reference", "upstream"} {
		impl, _ := registry.Lookup(name)
		seen := map[string]int{}
		for range 20 {
			ev, err := impl.NewEvaluator(in.Cluster)
			if err != nil {
				t.Fatal(err)
			}
			cs := harnessClient(in)
			d := ev.(preempt.PodGroupPreempter).PreemptPodGroup(context.Background(), cs, in.Gang)
			seen[fmt.Sprintf("%s %v %v", d.Message, d.Nominations, d.Victims)]++
		}
		t.Logf("%s: %d distinct answers", name, len(seen))
		for k, n := range seen {
			t.Logf("  %d× %s", n, k)
		}
	}
}

func harnessClient(in Input) *harness.Client {
	cs := harness.NewClient(in.Cluster, nil)
	for _, p := range in.Gang.Pods {
		_ = cs.Tracker().Add(p.DeepCopy())
	}
	return cs
}

func answer(t *testing.T, in Input, impl preempt.Implementation) string {
	ev, err := impl.NewEvaluator(in.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	d := ev.(preempt.PodGroupPreempter).PreemptPodGroup(context.Background(), harnessClient(in), in.Gang)
	return fmt.Sprintf("%s %v %v", d.Message, d.Nominations, d.Victims)
}
