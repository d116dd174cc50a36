package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/internal/extendertest"
	"github.com/preemptbench/preemptbench/preempt"
)

// decideAll runs decide -impl all on the small cluster with args and
// returns every implementation's decision.
func decideAll(t *testing.T, args ...string) ([]DecisionJSON, string, int) {
	t.Helper()
	base := []string{"decide", "-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml", "-now", testNow, "-impl", "all"}
	stdout, stderr, code := runCLI(t, append(base, args...)...)
	var out []DecisionJSON
	if code != ExitBadInput {
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
	}
	return out, stderr, code
}

func schedulerConfigFile(t *testing.T, body string) string {
	t.Helper()
	return writeFile(t, t.TempDir(), "config.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"+body)
}

// The small cluster's candidates are node-a (victim a1) and node-b (b1 and
// b2, one PDB violation); node-a wins (testdata/small).
func TestDecideConfigExtenders(t *testing.T) {
	url := extendertest.URL()
	tests := []struct {
		name, config string
		code         int
		node         string
		victims      []string
		message      string
	}{
		{name: "an extender that keeps everything", node: "node-a", victims: []string{"a1"},
			config: fmt.Sprintf("extenders:\n- urlPrefix: %s/keep\n  preemptVerb: preempt\n", url)},
		{name: "an extender emptying node-a, ignorable: node-a is dropped", node: "node-b", victims: []string{"b1", "b2"},
			config: fmt.Sprintf("extenders:\n- urlPrefix: %s/empty\n  preemptVerb: preempt\n  ignorable: true\n  nodeCacheCapable: true\n", url)},
		{name: "a failing extender", code: ExitOK, message: fmt.Sprintf("failed preempt with extender at URL %s/fail/preempt, code 500", url),
			config: fmt.Sprintf("extenders:\n- urlPrefix: %s/fail\n  preemptVerb: preempt\n", url)},
		{name: "a failing ignorable extender", node: "node-a", victims: []string{"a1"},
			config: fmt.Sprintf("extenders:\n- urlPrefix: %s/fail\n  preemptVerb: preempt\n  ignorable: true\n", url)},
		{name: "DefaultPreemption args from the profile: one candidate", node: "node-a", victims: []string{"a1"},
			config: "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n  - name: DefaultPreemption\n    args:\n      minCandidateNodesPercentage: 0\n      minCandidateNodesAbsolute: 1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outs, stderr, code := decideAll(t, "-config", schedulerConfigFile(t, tt.config))
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if len(outs) != 3 {
				t.Fatalf("%d decisions, want one per implementation", len(outs))
			}
			for _, o := range outs {
				var victims []string
				for _, v := range o.Victims {
					victims = append(victims, v.Name)
				}
				wantMsg := tt.message
				if wantMsg == "" && tt.node != "" {
					wantMsg = successMessage(tt.node, len(tt.victims))
				}
				if o.NominatedNode != tt.node || !cmp.Equal(victims, tt.victims) || o.Message != wantMsg {
					t.Errorf("%s: node %q victims %v message %q, want %q %v %q", o.Implementation, o.NominatedNode, victims, o.Message, tt.node, tt.victims, wantMsg)
				}
			}
		})
	}
	t.Run("DefaultPreemption args reach the dry run", func(t *testing.T) {
		outs, stderr, code := decideAll(t, "-config", schedulerConfigFile(t, "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n  - name: DefaultPreemption\n    args:\n      minCandidateNodesPercentage: 0\n      minCandidateNodesAbsolute: 1\n"))
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for _, o := range outs {
			if len(o.Candidates) != 1 {
				t.Errorf("%s: %d candidates, want 1 (minCandidateNodesAbsolute 1)", o.Implementation, len(o.Candidates))
			}
		}
	})
}

func TestDecideConfigRefused(t *testing.T) {
	tests := []struct {
		name, config, want string
	}{
		{"upstream validation", "extenders:\n- urlPrefix: http://x\n  prioritizeVerb: p\n  weight: 0\n",
			"extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"},
		{"strict decoding", "extenderz: []\n", `strict decoding error: unknown field "extenderz"`},
		{"args out of range", "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n  - name: DefaultPreemption\n    args:\n      minCandidateNodesPercentage: 200\n",
			"minCandidateNodesPercentage: Invalid value: 200: not in valid range [0, 100]"},
		{"plugins changed", "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n      disabled:\n      - name: NodePorts\n",
			"enables or disables plugins"},
		{"other plugin args", "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: MostAllocated\n",
			"sets NodeResourcesFit args"},
		{"no profile for the pod", "profiles:\n- schedulerName: other\n", `no profile for the pod's scheduler "default-scheduler"`},
		{"ignored resources", "extenders:\n- urlPrefix: http://x\n  preemptVerb: p\n  managedResources:\n  - name: example.com/gpu\n    ignoredByScheduler: true\n",
			"ignoredByScheduler"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := schedulerConfigFile(t, tt.config)
			_, stderr, code := decideAll(t, "-config", file)
			if code != ExitBadInput || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, filepath.Base(file)) {
				t.Errorf("exit %d, stderr %q; want exit 2 naming the file and %q", code, stderr, tt.want)
			}
		})
	}
	_, stderr, code := decideAll(t, "-config", schedulerConfigFile(t, ""), "-min-candidate-nodes-absolute", "3")
	if code != ExitBadInput || !strings.Contains(stderr, "-config sets the DefaultPreemption args") {
		t.Errorf("-config with a candidate flag: exit %d, stderr %q", code, stderr)
	}
}

func TestDecideFaultsAndModes(t *testing.T) {
	// node-a's victim is a1; q, nominated to node-a at a lower priority,
	// loses its nomination.
	forbidden := `pods "a1" is forbidden: injected by preemptbench`
	t.Run("async", func(t *testing.T) {
		outs, stderr, code := decideAll(t, "-fail", "delete:default/a1")
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for _, o := range outs {
			if o.Status != preempt.Success || o.NominatedNode != "node-a" || !cmp.Equal(o.ActuationErrors, []string{forbidden}) || !o.PreemptorActivated {
				t.Errorf("%s: %+v, want a standing decision reporting %q", o.Implementation, o, forbidden)
			}
			if n := len(o.Actions); n == 0 || o.Actions[0].Sets[0] != "nominatedNodeName=node-a" || o.Actions[n-1].Error != forbidden {
				t.Errorf("%s: actions %v, want the nomination first and the failed delete last", o.Implementation, o.Actions)
			}
		}
	})
	t.Run("sync", func(t *testing.T) {
		outs, stderr, code := decideAll(t, "-fail", "delete:default/a1", "-async=false")
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for _, o := range outs {
			if o.Status != preempt.Error || o.Message != forbidden || o.NominatedNode != "" || len(o.ClearedNominations) != 0 {
				t.Errorf("%s: %+v, want Error %q and nothing after the delete", o.Implementation, o, forbidden)
			}
		}
	})
	t.Run("bad fault", func(t *testing.T) {
		_, stderr, code := decideAll(t, "-fail", "get:default/a1")
		if code != ExitBadInput || !strings.Contains(stderr, `verb "get", want patch or delete`) {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}
