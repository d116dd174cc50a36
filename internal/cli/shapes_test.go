package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/internal/loader"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// TestDecideOnEveryShape writes each shape to files, runs `compare decide
// -impl all` on them (which exits 1 when the implementations disagree),
// and checks each decision against the cluster itself: every
// victim is a lower-priority pod bound to the nominated node, and with the
// victims gone the filters say the pod fits there.
func TestDecideOnEveryShape(t *testing.T) {
	successes := 0
	for _, shape := range synth.Shapes() {
		for _, nodes := range []int{1, 7, 40} {
			t.Run(fmt.Sprintf("%s/%d", shape, nodes), func(t *testing.T) {
				dir := t.TempDir()
				if _, stderr, code := runCLI(t, "scenario", "-shape", shape, "-nodes", fmt.Sprint(nodes), "-seed", "3", "-dir", dir); code != ExitOK {
					t.Fatalf("scenario: exit %d: %s", code, stderr)
				}
				stdout, stderr, code := runCLI(t, "decide", "-impl", "all", "-cluster", filepath.Join(dir, "cluster.yaml"), "-pod", filepath.Join(dir, "pod.yaml"), "-now", testNow)
				if code != ExitOK {
					t.Fatalf("decide -impl all: exit %d (implementations disagree?): %s", code, stderr)
				}
				var all []DecisionJSON
				if err := json.Unmarshal([]byte(stdout), &all); err != nil {
					t.Fatal(err)
				}
				refusals := strings.Count(stderr, "is not modelled")
				if len(all)+refusals != len(implementations()) || all[0].Implementation != "reference" {
					t.Fatalf("%d decisions and %d refusals for %d implementations, the first by %s", len(all), refusals, len(implementations()), all[0].Implementation)
				}
				for _, d := range all[1:] {
					if d.Status == preempt.Success {
						checkVictimsMakeRoom(t, dir, d)
					}
				}
				d := all[0]
				if d.Status != preempt.Success {
					t.Logf("status %s: %s", d.Status, d.Message)
					return
				}
				successes++
				checkVictimsMakeRoom(t, dir, d)
			})
		}
	}
	if successes < len(synth.Shapes()) {
		t.Errorf("only %d decisions succeeded; every shape should preempt at some size", successes)
	}
}

func checkVictimsMakeRoom(t *testing.T, dir string, d DecisionJSON) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := loader.LoadCluster("cluster.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	podData, err := os.ReadFile(filepath.Join(dir, "pod.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pod, err := loader.LoadPod("pod.yaml", podData)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Victims) == 0 {
		t.Fatalf("success without victims: %+v", d)
	}
	victims := map[string]bool{}
	for _, v := range d.Victims {
		victims[preempt.Key(v.Namespace, v.Name)] = true
	}
	after := *c // every object but the victims (pvs: the preemptor's claim and volume)
	after.Pods = nil
	for _, p := range c.Pods {
		if !victims[preempt.Key(p.Namespace, p.Name)] {
			after.Pods = append(after.Pods, p)
			continue
		}
		if p.Spec.NodeName != d.NominatedNode {
			t.Errorf("victim %s is on %s, not on the nominated node %s", p.Name, p.Spec.NodeName, d.NominatedNode)
		}
		if corev1helpers.PodPriority(p) >= corev1helpers.PodPriority(pod) {
			t.Errorf("victim %s has priority %d, not below the preemptor's %d", p.Name, corev1helpers.PodPriority(p), corev1helpers.PodPriority(pod))
		}
		delete(victims, preempt.Key(p.Namespace, p.Name))
	}
	if len(victims) > 0 {
		t.Errorf("victims not in the cluster: %v", victims)
	}
	ev, err := reference.Impl{}.NewEvaluator(&after)
	if err != nil {
		t.Fatal(err)
	}
	if fr := ev.Filter(context.Background(), pod); !slices.Contains(fr.Feasible, d.NominatedNode) {
		t.Errorf("with the victims gone the pod still does not fit on %s: %+v", d.NominatedNode, fr.NodeStatuses)
	}
}
