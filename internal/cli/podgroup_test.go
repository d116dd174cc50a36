package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/preempt"
)

const pgDir = "testdata/podgroup/"

// decide -pod-group: a gang of two (minCount 2, priority 10) preempts a
// mode-All group spread over both nodes; -pod under the gate names the
// victims' group, and deletes the remote member too.
func TestDecidePodGroup(t *testing.T) {
	base := []string{"decide", "-cluster", pgDir + "cluster.yaml", "-impl", "upstream", "-feature-gates", "GenericWorkload=true", "-now", "2026-01-01T00:00:00Z", "-actions"}
	victims := []preempt.Victim{{Namespace: "default", Name: "w1", PodGroup: "default/batch"}, {Namespace: "default", Name: "w2", PodGroup: "default/batch"}}
	deleted := func(actions []preempt.Action) []string {
		var out []string
		for _, a := range actions {
			if a.Verb == "delete" {
				out = append(out, a.Name)
			}
		}
		return out
	}

	stdout, stderr, code := runCLI(t, append(base, "-pod-group", pgDir+"gang.yaml")...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var g PodGroupDecisionJSON
	if err := json.Unmarshal([]byte(stdout), &g); err != nil {
		t.Fatal(err)
	}
	want := PodGroupDecisionJSON{Implementation: "upstream", Status: preempt.Success,
		Message:                "pod group preemption: found a placement for podgroup, preempting 2 victims",
		Nominations:            []preempt.Nomination{{Namespace: "default", Name: "t0", Node: "n1"}, {Namespace: "default", Name: "t1", Node: "n2"}},
		NumPodGroupDisruptions: 1, Victims: victims, ClearedNominations: []preempt.PodRef{}}
	got := g
	got.Actions = nil
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("-pod-group decision (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"w1", "w2"}, deleted(g.Actions)); d != "" {
		t.Errorf("-pod-group deletions (-want +got):\n%s", d)
	}
	if !strings.Contains(stdout, `"podGroup": "default/batch"`) || !strings.Contains(stdout, `"numPodGroupDisruptions": 1`) {
		t.Errorf("JSON keys missing:\n%s", stdout)
	}

	stdout, stderr, code = runCLI(t, append(base, "-pod", pgDir+"pod.yaml")...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var d DecisionJSON
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatal(err)
	}
	// Both nodes are candidates with the same victims: upstream breaks
	// the final tie at random.
	if (d.NominatedNode != "n1" && d.NominatedNode != "n2") || !cmp.Equal(d.Victims, victims) || !cmp.Equal(deleted(d.Actions), []string{"w1", "w2"}) {
		t.Errorf("-pod: node %q victims %+v deleted %v", d.NominatedNode, d.Victims, deleted(d.Actions))
	}
	// v1.37.2 never sets NumPodGroupDisruptions for a single-pod
	// preemptor (docs/upstream-findings.md).
	if d.NumPodGroupDisruptions != 0 {
		t.Errorf("-pod numPodGroupDisruptions %d, want upstream's 0", d.NumPodGroupDisruptions)
	}

	// optimized preempts for the gang alone, as upstream does.
	stdout, stderr, code = runCLI(t, "decide", "-cluster", pgDir+"cluster.yaml", "-impl", "optimized", "-feature-gates", "GenericWorkload=true", "-now", "2026-01-01T00:00:00Z", "-actions", "-pod-group", pgDir+"gang.yaml")
	if code != ExitOK {
		t.Fatalf("optimized: exit %d, %s", code, stderr)
	}
	var og PodGroupDecisionJSON
	if err := json.Unmarshal([]byte(stdout), &og); err != nil {
		t.Fatal(err)
	}
	got = og
	got.Implementation, got.Actions = "upstream", nil
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("optimized -pod-group decision (-upstream +optimized):\n%s", d)
	}
	if d := cmp.Diff([]string{"w1", "w2"}, deleted(og.Actions)); d != "" {
		t.Errorf("optimized -pod-group deletions (-want +got):\n%s", d)
	}
	// -impl all: the three answer the gang, and agree.
	stdout, stderr, code = runCLI(t, append(base[:len(base)-1:len(base)-1], "-impl", "all", "-pod-group", pgDir+"gang.yaml", "-actions")...)
	if code != ExitOK || strings.Contains(stderr, "does not model gang preemption") || strings.Contains(stderr, "refuses") ||
		!strings.Contains(stderr, "all three agree (reference, upstream, optimized)") {
		t.Fatalf("-impl all: exit %d, %s", code, stderr)
	}
	if !strings.Contains(stdout, `"implementation": "optimized"`) {
		t.Errorf("-impl all: no optimized answer: %s", stdout)
	}
	if !strings.Contains(stdout, `"implementation": "upstream"`) || !strings.Contains(stdout, `"implementation": "reference"`) {
		t.Errorf("-impl all: %s", stdout)
	}
	// -pod under the gate: reference and upstream agree too.
	_, stderr, code = runCLI(t, append(base[:len(base)-1:len(base)-1], "-impl", "reference,upstream", "-pod", pgDir+"pod.yaml")...)
	if code != ExitOK {
		t.Errorf("-pod -impl reference,upstream: exit %d, %s", code, stderr)
	}
	// Without the gate, a gang is refused.
	_, stderr, code = runCLI(t, "decide", "-cluster", pgDir+"cluster.yaml", "-impl", "upstream", "-pod-group", pgDir+"gang.yaml")
	if code != ExitBadInput || !strings.Contains(stderr, "gang preemption needs GenericWorkload=true") {
		t.Errorf("no gate: exit %d, %s", code, stderr)
	}
}

// -explain shows a candidate's victims as units: the mode-All group
// batch is one unit that also evicts on n2.
func TestDecideExplainUnits(t *testing.T) {
	stdout, stderr, code := runCLI(t, "decide", "-cluster", pgDir+"cluster.yaml", "-pod", pgDir+"pod.yaml", "-feature-gates", "GenericWorkload=true",
		"-impl", "reference,upstream", "-explain", "-o", "text", "-now", "2026-01-01T01:00:00Z")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := strings.Count(stdout, "  victim default/w1 priority 0 podGroup default/batch\n"); got != 2 { // reference and upstream
		t.Errorf("victim w1 appears %d times, want 2:\n%s", got, stdout)
	}
	// Both nodes tie: the reference takes the first in list order (n1),
	// upstream either (its dry run is parallel). Each report's unit names
	// the other node as the one it also evicts on.
	sections := strings.Split(stdout, "implementation: ")[1:]
	if len(sections) != 2 {
		t.Fatalf("%d reports, want 2:\n%s", len(sections), stdout)
	}
	for _, sec := range sections {
		impl, _, _ := strings.Cut(sec, "\n")
		chosen, other := "n1", "n2"
		if strings.Contains(sec, "nominated node: n2 ") {
			chosen, other = "n2", "n1"
		} else if !strings.Contains(sec, "nominated node: n1 ") {
			t.Errorf("%s: no nominated node n1 or n2:\n%s", impl, sec)
			continue
		}
		if impl == "reference" && chosen != "n1" {
			t.Errorf("reference chose %s, want n1 (first in list order)", chosen)
		}
		want := "           unit PodGroup default/batch, priority 0: default/w1@n1, default/w2@n2 (also evicts on " + other + ")\n"
		if !strings.Contains(sec, want) {
			t.Errorf("%s: %q missing:\n%s", impl, want, sec)
		}
	}
	// Without the gate there are no units.
	stdout, _, _ = runCLI(t, "decide", "-cluster", pgDir+"cluster.yaml", "-pod", pgDir+"pod.yaml", "-impl", "reference", "-explain", "-now", "2026-01-01T01:00:00Z")
	if strings.Contains(stdout, `"units"`) {
		t.Errorf("units without GenericWorkload:\n%s", stdout)
	}
}

// The reproducers of docs/upstream-findings.md's pod-group findings:
// upstream's own code gives the outcome each finding describes, and the
// reference agrees.
func TestDecidePodGroupFindings(t *testing.T) {
	gate := []string{"-impl", "upstream,reference", "-feature-gates", "GenericWorkload=true", "-now", "2026-01-01T00:00:00Z", "-actions"}
	decide := func(t *testing.T, args ...string) []DecisionJSON {
		t.Helper()
		stdout, stderr, code := runCLI(t, append([]string{"decide"}, args...)...)
		if code != ExitOK || !strings.Contains(stderr, "agree") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var out []DecisionJSON
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	names := func(vs []preempt.Victim) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.Name)
		}
		return out
	}

	// The node pick reads a's own priority 50, not its group's 1: n2.
	for _, d := range decide(t, append([]string{"-cluster", pgDir + "pick-cluster.yaml", "-pod", pgDir + "pod.yaml"}, gate...)...) {
		if d.NominatedNode != "n2" || !cmp.Equal(names(d.Victims), []string{"b"}) {
			t.Errorf("pick-cluster, %s: node %q victims %v; want n2 [b]", d.Implementation, d.NominatedNode, names(d.Victims))
		}
	}
	// A Single-mode member outranks an older plain pod: b goes; without
	// the gate, a (the younger) goes.
	for _, d := range decide(t, append([]string{"-cluster", pgDir + "single-cluster.yaml", "-pod", pgDir + "single-pod.yaml"}, gate...)...) {
		if !cmp.Equal(names(d.Victims), []string{"b"}) {
			t.Errorf("single-cluster, %s: victims %v; want [b]", d.Implementation, names(d.Victims))
		}
	}
	for _, d := range decide(t, "-cluster", pgDir+"single-cluster.yaml", "-pod", pgDir+"single-pod.yaml", "-impl", "upstream,reference", "-now", "2026-01-01T00:00:00Z") {
		if !cmp.Equal(names(d.Victims), []string{"a"}) {
			t.Errorf("single-cluster without the gate, %s: victims %v; want [a]", d.Implementation, names(d.Victims))
		}
	}

	// Gang preemption clears low-c's nomination to the node named
	// cluster, which it does not touch, and keeps low-n's to n1, where
	// it goes: after the victim when synchronous, before it when not.
	for _, async := range []bool{true, false} {
		stdout, stderr, code := runCLI(t, append([]string{"decide", "-cluster", pgDir + "clusternode-cluster.yaml", "-pod-group", pgDir + "clusternode-gang.yaml", fmt.Sprintf("-async=%v", async)}, gate...)...)
		if code != ExitOK || !strings.Contains(stderr, "agree") {
			t.Fatalf("clusternode, async %v: exit %d: %s", async, code, stderr)
		}
		var out []PodGroupDecisionJSON
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		want := []string{"patch default/v1/status conditions[DisruptionTarget]", "delete default/v1", "patch default/low-c/status nominatedNodeName=null"}
		if async {
			want = []string{want[2], want[0], want[1]}
		}
		for _, g := range out {
			var got []string
			for _, a := range g.Actions {
				got = append(got, a.String())
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("clusternode, async %v, %s: API calls (-want +got):\n%s", async, g.Implementation, d)
			}
		}
	}
}

// -o text shows each implementation's gang decision: one line a member,
// the victims with their PodGroup.
func TestDecidePodGroupText(t *testing.T) {
	stdout, stderr, code := runCLI(t, "decide", "-cluster", pgDir+"cluster.yaml", "-pod-group", pgDir+"gang.yaml", "-feature-gates", "GenericWorkload=true",
		"-impl", "reference,upstream", "-o", "text", "-now", "2026-01-01T01:00:00Z")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"status:         Success\n",
		"message:        pod group preemption: found a placement for podgroup, preempting 2 victims\n",
		"  member default/t0 nominated to n1\n",
		"  member default/t1 nominated to n2\n",
		"victims: 2 (0 PDB violations, 1 pod group disruptions)\n",
		"  victim default/w2 priority 0 podGroup default/batch\n",
	} {
		if got := strings.Count(stdout, want); got != 2 {
			t.Errorf("%q appears %d times, want 2 (reference and upstream):\n%s", want, got, stdout)
		}
	}
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLI(t, "decide", "-cluster", pgDir+"cluster.yaml", "-pod-group", pgDir+"gang.yaml", "-feature-gates", "GenericWorkload=true", "-config", cfg); code != ExitBadInput || !strings.Contains(stderr, "-pod-group does not take -config yet") {
		t.Errorf("-config: exit %d, %s", code, stderr)
	}
}

// A CompositePodGroup preemptor: the composite, its PodGroups and their
// members in one file. upstream and the reference evict both pods and
// nominate a0 and b0, b0 for its child b that failed its minCount
// (docs/upstream-findings.md), and not b1, which no node holds; without CompositePodGroup the command
// refuses, naming the gate; a file with two composites is refused.
func TestDecideCompositeGang(t *testing.T) {
	gates := "GenericWorkload=true,CompositePodGroup=true,TopologyAwareWorkloadScheduling=true"
	stdout, stderr, code := runCLI(t, "decide", "-cluster", pgDir+"composite-cluster.yaml", "-pod-group", pgDir+"composite-gang.yaml",
		"-feature-gates", gates, "-impl", "upstream,reference", "-now", "2026-01-01T01:00:00Z")
	if code != ExitOK || !strings.Contains(stderr, "agree") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out []PodGroupDecisionJSON
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 {
		t.Fatalf("%d decisions, want 2", len(out))
	}
	for _, d := range out {
		var noms, victims []string
		for _, v := range d.Victims {
			victims = append(victims, v.Name)
		}
		for _, n := range d.Nominations {
			noms = append(noms, n.Name+"@"+n.Node)
		}
		if d.Status != "Success" || !cmp.Equal(victims, []string{"v1", "v2"}) || !cmp.Equal(noms, []string{"a0@n1", "b0@n2"}) {
			t.Errorf("%s: %s %q, victims %v, nominations %v; want Success, v1 and v2, a0@n1 b0@n2 (b1 unplaced, not nominated)", d.Implementation, d.Status, d.Message, victims, noms)
		}
	}

	_, stderr, code = runCLI(t, "decide", "-cluster", pgDir+"composite-cluster.yaml", "-pod-group", pgDir+"composite-gang.yaml",
		"-feature-gates", "GenericWorkload=true", "-impl", "reference", "-now", "2026-01-01T01:00:00Z")
	if code != ExitBadInput || !strings.Contains(stderr, "a CompositePodGroup preemptor (default/job) needs CompositePodGroup=true") {
		t.Errorf("without the gate: exit %d, %s; want a refusal naming the gate", code, stderr)
	}

	two := filepath.Join(t.TempDir(), "two.yaml")
	data, err := os.ReadFile(pgDir + "composite-gang.yaml")
	if err != nil {
		t.Fatal(err)
	}
	extra := "\n---\napiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\nmetadata: {name: other, namespace: default}\nspec: {priority: 1, schedulingPolicy: {basic: {}}}\n"
	if err := os.WriteFile(two, append(data, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runCLI(t, "decide", "-cluster", pgDir+"composite-cluster.yaml", "-pod-group", two,
		"-feature-gates", gates, "-impl", "reference", "-now", "2026-01-01T01:00:00Z")
	if code != ExitBadInput || !strings.Contains(stderr, "want one CompositePodGroup (the preemptor) and its PodGroups, found 2") {
		t.Errorf("two composites: exit %d, %s; want a refusal", code, stderr)
	}
}

// -fail takes a gang too: a victim's failed delete fails the synchronous
// preemption, in upstream and the reference alike, and a fault no call
// meets gets a note.
func TestDecidePodGroupFail(t *testing.T) {
	args := []string{"decide", "-cluster", pgDir + "composite-cluster.yaml", "-pod-group", pgDir + "composite-gang.yaml",
		"-feature-gates", "GenericWorkload=true,CompositePodGroup=true,TopologyAwareWorkloadScheduling=true",
		"-impl", "upstream,reference", "-now", "2026-01-01T01:00:00Z", "-async=false"}
	stdout, stderr, code := runCLI(t, append(args, "-fail", "delete:default/v2")...)
	if code != ExitOK || !strings.Contains(stderr, "agree") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out []PodGroupDecisionJSON
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	for _, d := range out {
		last := d.Actions[len(d.Actions)-1]
		if d.Status != preempt.Error || d.Message != `pod group preemption: pods "v2" is forbidden: injected by preemptbench` || last.String() != `delete default/v2 (failed: pods "v2" is forbidden: injected by preemptbench)` {
			t.Errorf("%s: %s %q, last call %s; want the Error of v2's failed delete", d.Implementation, d.Status, d.Message, last)
		}
	}
	_, stderr, code = runCLI(t, append(args, "-fail", "delete:default/zz")...)
	if code != ExitOK || !strings.Contains(stderr, "-fail delete:default/zz matched no API call") {
		t.Errorf("unmatched fault: exit %d, %s; want a note", code, stderr)
	}
}

// -explain on a gang: the groups in the scheduling function's order with
// each member's node, the failed child marked, the preempted units (a
// mode-All group as one) and the reprieved ones.
func TestDecidePodGroupExplain(t *testing.T) {
	gates := "GenericWorkload=true,CompositePodGroup=true,TopologyAwareWorkloadScheduling=true"
	stdout, stderr, code := runCLI(t, "decide", "-cluster", pgDir+"composite-cluster.yaml", "-pod-group", pgDir+"composite-gang.yaml",
		"-feature-gates", gates, "-impl", "reference", "-now", "2026-01-01T01:00:00Z", "-explain")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var d PodGroupDecisionJSON
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatal(err)
	}
	ex := d.Explanation
	if ex == nil || len(ex.Groups) != 3 || ex.Groups[0].Name != "default/job" || ex.Groups[2].Name != "default/b" || !ex.Groups[2].FailedChild || ex.Groups[1].FailedChild ||
		!cmp.Equal(ex.Groups[2].Members, []string{"default/b0@n2", "default/b1@"}) || len(ex.Preempted) != 2 || len(ex.Reprieved) != 0 {
		t.Errorf("composite: explanation %+v", ex)
	}

	stdout, stderr, code = runCLI(t, "decide", "-cluster", pgDir+"cluster.yaml", "-pod-group", pgDir+"gang.yaml",
		"-feature-gates", "GenericWorkload=true", "-impl", "reference", "-now", "2026-01-01T01:00:00Z", "-explain", "-o", "text")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"gang priority: 10\n", "  PodGroup default/train: minCount 2\n", "preempted: 1 units\n",
		"  PodGroup default/batch priority 0: default/w1@n1 default/w2@n2\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("gang.yaml -o text lacks %q:\n%s", want, stdout)
		}
	}
}
