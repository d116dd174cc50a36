package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/preempt"
)

// gangFile writes a -pod-group file: the PodGroup train (priority 10,
// minCount minCount) and one member per spec, each "name:cpu[:extra
// spec lines]" with priority 10 unless the extra lines say otherwise.
func gangFile(t *testing.T, minCount string, members ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: train, namespace: default, uid: train-uid}\nspec: {priority: 10, schedulingPolicy: {gang: {minCount: " + minCount + "}}}\n")
	for _, m := range members {
		parts := strings.SplitN(m, ":", 3)
		b.WriteString("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + parts[0] + "\n  namespace: default\n")
		extra := ""
		if len(parts) == 3 {
			extra = parts[2]
		}
		if strings.Contains(extra, "deletionTimestamp") {
			b.WriteString("  deletionTimestamp: \"2026-01-01T00:30:00Z\"\n")
			extra = strings.ReplaceAll(extra, "deletionTimestamp\n", "")
		}
		b.WriteString("spec:\n")
		if !strings.Contains(extra, "priority:") {
			b.WriteString("  priority: 10\n")
		}
		b.WriteString(extra)
		b.WriteString("  schedulingGroup: {podGroupName: train}\n  containers: [{name: c, image: i, resources: {requests: {cpu: " + parts[1] + "}}}]\n")
	}
	f := filepath.Join(t.TempDir(), "gang.yaml")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// decideGangAll runs decide -pod-group -impl all on cluster (mostly
// testdata/podgroup's cluster.yaml: two 1-CPU nodes, each holding a 600m
// member of the mode-All group batch at priority 0) and returns the three
// decisions, which must agree.
func decideGangAll(t *testing.T, cluster, gang string, extra ...string) []PodGroupDecisionJSON {
	t.Helper()
	args := append([]string{"decide", "-cluster", cluster, "-pod-group", gang, "-feature-gates", "GenericWorkload=true",
		"-impl", "all", "-now", "2026-01-01T01:00:00Z"}, extra...)
	stdout, stderr, code := runCLI(t, args...)
	if code != ExitOK || !strings.Contains(stderr, "all three agree") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	var out []PodGroupDecisionJSON
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 {
		t.Fatalf("%d decisions, want 3", len(out))
	}
	return out
}

// The pod-group cycle around PodGroupPostFilter (schedule_one_podgroup.go),
// each implementation through harness.DecidePodGroup: a gang that fits
// the cluster as it is binds without preemption; a gang validatePodGroup
// refuses is an Error before any attempt; a member being deleted is
// skipped (not placed, not counted for minCount); PodGroupPostFilter's
// nominations hold its placed members only.
func TestDecidePodGroupCycle(t *testing.T) {
	cases := []struct {
		name, cluster, gang string
		want                PodGroupDecisionJSON
	}{{
		// 2 x 300m fit beside the 600m pods: bound, nothing evicted (the
		// evaluator alone would evict the batch group).
		name: "fits-as-it-is",
		gang: gangFile(t, "2", "t0:300m", "t1:300m"),
		want: PodGroupDecisionJSON{Status: preempt.Schedulable, Nominations: []preempt.Nomination{},
			Placement: []preempt.Nomination{{Namespace: "default", Name: "t0", Node: "n1"}, {Namespace: "default", Name: "t1", Node: "n2"}},
			Victims:   []preempt.Victim{}, ClearedNominations: []preempt.PodRef{}},
	}, {
		// t1's priority is not the group's: validatePodGroup's error for
		// every member, no attempt, no preemption.
		name: "refused-by-validatePodGroup",
		gang: gangFile(t, "2", "t0:600m", "t1:600m:  priority: 5\n"),
		want: PodGroupDecisionJSON{Status: preempt.Error, Nominations: []preempt.Nomination{},
			Message: "all pods in a single pod group should have the same priority as the pod group's priority, got 5 and 10",
			Victims: []preempt.Victim{}, ClearedNominations: []preempt.PodRef{}},
	}, {
		// A scheduled member (bound, in the cluster) of another
		// scheduler: validatePodGroup checks the scheduled members too.
		name:    "refused-scheduler-name",
		cluster: scheduledMemberCluster(t, "  schedulerName: other\n"),
		gang:    gangFile(t, "2", "t0:600m", "t1:600m"),
		want: PodGroupDecisionJSON{Status: preempt.Error, Nominations: []preempt.Nomination{},
			Message: `all pods in a single pod group should have the same .spec.schedulerName set, got: "other" and "default-scheduler"`,
			Victims: []preempt.Victim{}, ClearedNominations: []preempt.PodRef{}},
	}, {
		// t2 is being deleted: the cycle drops it, and the gang (minCount
		// 3) cannot reach its minCount with the two left, before any
		// member is tried. DynamicResources' PodGroupPostFilter, which
		// runs before DefaultPreemption's, finds no state of its PreFilter
		// and fails the chain: v1.37.2's kube-scheduler answers this
		// Error, and DefaultPreemption never runs (its own answer would be
		// "minCount (3) cannot be satisfied: 0 scheduled, 2 remaining").
		name: "deleting-member-needed",
		gang: gangFile(t, "3", "t0:600m", "t1:600m", "t2:100m:deletionTimestamp\n"),
		want: PodGroupDecisionJSON{Status: preempt.Error, Nominations: []preempt.Nomination{},
			Message: `error in "DynamicResources" PodGroupPostFilter plugins: not found`,
			Skipped: []preempt.PodRef{{Namespace: "default", Name: "t2"}},
			Victims: []preempt.Victim{}, ClearedNominations: []preempt.PodRef{}},
	}, {
		// t2 is being deleted and not needed: the two others preempt the
		// batch group; t2 is neither placed nor nominated.
		name: "deleting-member-skipped",
		gang: gangFile(t, "2", "t0:600m", "t1:600m", "t2:100m:deletionTimestamp\n"),
		want: PodGroupDecisionJSON{Status: preempt.Success,
			Message:                "pod group preemption: found a placement for podgroup, preempting 2 victims",
			Nominations:            []preempt.Nomination{{Namespace: "default", Name: "t0", Node: "n1"}, {Namespace: "default", Name: "t1", Node: "n2"}},
			Skipped:                []preempt.PodRef{{Namespace: "default", Name: "t2"}},
			Victims:                []preempt.Victim{{Namespace: "default", Name: "w1", PodGroup: "default/batch"}, {Namespace: "default", Name: "w2", PodGroup: "default/batch"}},
			NumPodGroupDisruptions: 1, ClearedNominations: []preempt.PodRef{}},
	}, {
		// minCount 1: t0 gets a node after preemption, t1 (2 CPUs) none:
		// only t0 is nominated.
		name: "unplaced-member-not-nominated",
		gang: gangFile(t, "1", "t0:600m", "t1:2"),
		want: PodGroupDecisionJSON{Status: preempt.Success,
			Message:                "pod group preemption: found a placement for podgroup, preempting 2 victims",
			Nominations:            []preempt.Nomination{{Namespace: "default", Name: "t0", Node: "n1"}},
			Victims:                []preempt.Victim{{Namespace: "default", Name: "w1", PodGroup: "default/batch"}, {Namespace: "default", Name: "w2", PodGroup: "default/batch"}},
			NumPodGroupDisruptions: 1, ClearedNominations: []preempt.PodRef{}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cluster := tc.cluster
			if cluster == "" {
				cluster = pgDir + "cluster.yaml"
			}
			for _, d := range decideGangAll(t, cluster, tc.gang) {
				impl := d.Implementation
				d.Implementation = ""
				if diff := cmp.Diff(tc.want, d); diff != "" {
					t.Errorf("%s (-want +got):\n%s", impl, diff)
				}
			}
			// The same cycle run by a real v1.37.2 kube-scheduler
			// (-placer scheduler: its own validation, skipping, attempt
			// and PodGroupPostFilter; every placement here is the one
			// first fit makes, the nodes tying on score).
			stdout, stderr, code := runCLI(t, "decide", "-cluster", cluster, "-pod-group", tc.gang, "-feature-gates", "GenericWorkload=true",
				"-impl", "upstream", "-placer", "scheduler", "-now", "2026-01-01T01:00:00Z")
			if code != ExitOK {
				t.Fatalf("-placer scheduler: exit %d, stderr:\n%s", code, stderr)
			}
			var d PodGroupDecisionJSON
			if err := json.Unmarshal([]byte(stdout), &d); err != nil {
				t.Fatal(err)
			}
			d.Implementation = ""
			if diff := cmp.Diff(tc.want, d); diff != "" {
				t.Errorf("kube-scheduler's own cycle (-want +got):\n%s", diff)
			}
		})
	}
}

// scheduledMemberCluster is testdata/podgroup's cluster.yaml with s0, a
// 100m member of train bound to n1, with extra spec lines.
func scheduledMemberCluster(t *testing.T, extra string) string {
	t.Helper()
	data, err := os.ReadFile(pgDir + "cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pod := "- apiVersion: v1\n  kind: Pod\n  metadata: {name: s0, namespace: default}\n  spec:\n    nodeName: n1\n    priority: 10\n" +
		strings.ReplaceAll(extra, "  ", "    ") + "    schedulingGroup: {podGroupName: train}\n    containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]\n"
	f := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(f, append(data, pod...), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// A gang no kube-scheduler cycle takes is refused, naming why (exit 2):
// every member being deleted; no member of kube-scheduler's profile (the
// queue never takes another scheduler's pods); fewer pods known than
// minCount (GangScheduling's PreEnqueue holds the gang back), a member of
// another scheduler not counted.
func TestDecidePodGroupNoCycle(t *testing.T) {
	for _, tc := range []struct{ name, gang, want string }{
		{"all-deleting", gangFile(t, "1", "t0:600m:deletionTimestamp\n"), "every member is being deleted; kube-scheduler skips them all and runs no cycle"},
		{"other-scheduler", gangFile(t, "1", "t0:600m:  schedulerName: other\n"), `no member names kube-scheduler's profile "default-scheduler"`},
		{"below-minCount", gangFile(t, "3", "t0:600m", "t1:600m"), `waiting for minCount pods from a gang to appear in scheduling queue": 2 pods known, minCount 3`},
		{"other-scheduler-not-counted", gangFile(t, "2", "t0:600m", "t1:600m:  schedulerName: other\n"), `1 pods known, minCount 2`},
	} {
		_, stderr, code := runCLI(t, "decide", "-cluster", pgDir+"cluster.yaml", "-pod-group", tc.gang, "-feature-gates", "GenericWorkload=true", "-impl", "all")
		if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", tc.name, code, stderr, ExitBadInput, tc.want)
		}
	}
}

// -pod-group prints the loader's notes as -cluster and -pod do (issue 33:
// they were dropped, and a member bound to a node the file lacks left the
// gang without a word); under -strict each is an error, exit 2.
func TestDecidePodGroupLoaderNotes(t *testing.T) {
	gang := gangFile(t, "1", "t0:600m", "t1:600m:  nodeName: n9\n  nodeselector: {a: b}\n")
	args := []string{"decide", "-cluster", pgDir + "cluster.yaml", "-pod-group", gang, "-feature-gates", "GenericWorkload=true", "-impl", "reference", "-now", "2026-01-01T01:00:00Z"}
	_, stderr, code := runCLI(t, args...)
	for _, want := range []string{
		`compare decide: note: left out 1 pods of nodes the dump does not hold, which kube-scheduler's snapshot never holds: default/t1 (bound to n9)`,
		`unknown field "spec.nodeselector"`,
	} {
		if code != ExitOK || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr %q; want exit 0 and %q", code, stderr, want)
		}
	}
	_, stderr, code = runCLI(t, append(args, "-strict")...)
	if code != ExitBadInput || !strings.Contains(stderr, "nodeselector") {
		t.Errorf("-strict: exit %d, stderr %q; want exit 2 naming the field", code, stderr)
	}
	bound := gangFile(t, "1", "t0:600m", "t1:600m:  nodeName: n9\n")
	_, stderr, code = runCLI(t, "decide", "-cluster", pgDir+"cluster.yaml", "-pod-group", bound, "-feature-gates", "GenericWorkload=true", "-impl", "reference", "-strict")
	if code != ExitBadInput || !strings.Contains(stderr, "default/t1 (bound to n9)") {
		t.Errorf("-strict, a bound member: exit %d, stderr %q; want exit 2 naming it", code, stderr)
	}
}

// A release whose API has no pod groups (v1.36.3) decides no gang, and no
// pod of one, in any implementation: exit 2 (issue 33: the reference
// answered the gang "as v1.36.3", and -impl all exited 1).
func TestDecidePodGroupOldRelease(t *testing.T) {
	for _, impls := range []string{"reference", "optimized", "upstream", "all"} {
		_, stderr, code := runCLI(t, "decide", "-cluster", pgDir+"cluster.yaml", "-pod-group", pgDir+"gang.yaml", "-feature-gates", "GenericWorkload=true",
			"-release", "v1.36.3", "-impl", impls, "-now", "2026-01-01T01:00:00Z")
		if code != ExitBadInput || !strings.Contains(stderr, "release v1.36.3's PodGroups are scheduling.k8s.io/v1alpha2 objects") {
			t.Errorf("-pod-group -impl %s: exit %d, stderr %q; want exit 2 and the release's reason", impls, code, stderr)
		}
	}
	for _, impls := range []string{"reference", "optimized"} {
		_, stderr, code := runCLI(t, "decide", "-cluster", pgDir+"cluster.yaml", "-pod", pgDir+"pod.yaml", "-feature-gates", "GenericWorkload=true",
			"-release", "v1.36.3", "-impl", impls, "-now", "2026-01-01T01:00:00Z")
		if code != ExitBadInput || !strings.Contains(stderr, "release v1.36.3's PodGroups are scheduling.k8s.io/v1alpha2 objects") {
			t.Errorf("-pod -impl %s: exit %d, stderr %q; want exit 2 and the release's reason", impls, code, stderr)
		}
	}
}

// -explain follows the cycle: a gang that fits preempted nothing and
// reprieved nothing (no PodGroupPostFilter ran), and the members the cycle
// leaves out say why.
func TestExplainPodGroupCycle(t *testing.T) {
	gang := gangFile(t, "2", "t0:300m", "t1:300m", "t2:300m:deletionTimestamp\n", "t3:300m:  schedulerName: mine\n")
	stdout, stderr, code := runCLI(t, "decide", "-cluster", pgDir+"cluster.yaml", "-pod-group", gang, "-feature-gates", "GenericWorkload=true",
		"-impl", "reference", "-now", "2026-01-01T01:00:00Z", "-o", "text", "-explain")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"status:         Schedulable\n", "  member default/t0 bound to n1\n", "  member default/t2 skipped (being deleted)\n",
		"member default/t2 (being deleted: skipped) left out\n", "member default/t3 (another scheduler's: never queued) left out\n",
		"preempted: 0 units\n", "reprieved: 0 units\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, `default/t3 name another scheduler than "default-scheduler"`) {
		t.Errorf("no note on t3: %q", stderr)
	}
	// A real kube-scheduler's cycle decides the same.
	stdout, stderr, code = runCLI(t, "decide", "-cluster", pgDir+"cluster.yaml", "-pod-group", gang, "-feature-gates", "GenericWorkload=true",
		"-impl", "upstream", "-placer", "scheduler", "-now", "2026-01-01T01:00:00Z", "-o", "text")
	if code != ExitOK {
		t.Fatalf("-placer scheduler: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"status:         Schedulable\n", "  member default/t0 bound to n1\n", "  member default/t1 bound to n2\n", "  member default/t2 skipped (being deleted)\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("-placer scheduler: no %q in:\n%s", want, stdout)
		}
	}
}
