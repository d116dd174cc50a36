package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/preempt"
)

// decodePodGroup runs decide -pod-group with args and decodes its one
// decision.
func decodePodGroup(t *testing.T, args ...string) PodGroupDecisionJSON {
	t.Helper()
	stdout, stderr, code := runCLI(t, args...)
	if code != ExitOK {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	var d PodGroupDecisionJSON
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stdout)
	}
	return d
}

// -placer scheduler: where each member has one node it fits (the gang's
// members pinned by node affinity, in the reverse of name order), the
// scheduler's own placement gives first fit's decision; where its scoring
// prefers another node (placer-scored-cluster.yaml: n2 has the most room)
// it takes that node and so another victim.
func TestDecidePlacerScheduler(t *testing.T) {
	decide := func(cluster, gang, placer string) PodGroupDecisionJSON {
		return decodePodGroup(t, "decide", "-cluster", pgDir+cluster, "-pod-group", pgDir+gang, "-impl", "upstream",
			"-feature-gates", "GenericWorkload=true", "-now", "2026-01-01T01:00:00Z", "-placer", placer)
	}
	firstFit := decide("cluster.yaml", "placer-pinned-gang.yaml", "firstfit")
	sched := decide("cluster.yaml", "placer-pinned-gang.yaml", "scheduler")
	want := PodGroupDecisionJSON{Implementation: "upstream", Status: preempt.Success,
		Message:                "pod group preemption: found a placement for podgroup, preempting 2 victims",
		Nominations:            []preempt.Nomination{{Namespace: "default", Name: "t0", Node: "n2"}, {Namespace: "default", Name: "t1", Node: "n1"}},
		NumPodGroupDisruptions: 1,
		Victims:                []preempt.Victim{{Namespace: "default", Name: "w1", PodGroup: "default/batch"}, {Namespace: "default", Name: "w2", PodGroup: "default/batch"}},
		ClearedNominations:     []preempt.PodRef{}}
	if d := cmp.Diff(want, firstFit); d != "" {
		t.Errorf("pinned gang, -placer firstfit (-want +got):\n%s", d)
	}
	if d := cmp.Diff(firstFit, sched); d != "" {
		t.Errorf("pinned gang (-firstfit +scheduler):\n%s", d)
	}

	firstFit = decide("placer-scored-cluster.yaml", "placer-scored-gang.yaml", "firstfit")
	sched = decide("placer-scored-cluster.yaml", "placer-scored-gang.yaml", "scheduler")
	want = PodGroupDecisionJSON{Implementation: "upstream", Status: preempt.Success,
		Message:     "pod group preemption: found a placement for podgroup, preempting 1 victims",
		Nominations: []preempt.Nomination{{Namespace: "default", Name: "m0", Node: "n1"}},
		Victims:     []preempt.Victim{{Namespace: "default", Name: "v1"}}, ClearedNominations: []preempt.PodRef{}}
	if d := cmp.Diff(want, firstFit); d != "" {
		t.Errorf("scored cluster, -placer firstfit (-want +got):\n%s", d)
	}
	want.Nominations[0].Node, want.Victims[0].Name = "n2", "v2"
	if d := cmp.Diff(want, sched); d != "" {
		t.Errorf("scored cluster, -placer scheduler (-want +got):\n%s", d)
	}
}

// -placer's bad combinations are usage errors naming the flag.
func TestDecidePlacerUsage(t *testing.T) {
	base := []string{"decide", "-cluster", pgDir + "cluster.yaml", "-feature-gates", "GenericWorkload=true"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-pod-group", pgDir + "gang.yaml", "-impl", "reference", "-placer", "scheduler"}, `-placer scheduler runs kube-scheduler itself, in the upstream adapter only: it needs -impl upstream (alone), not "reference"`},
		{[]string{"-pod-group", pgDir + "gang.yaml", "-impl", "upstream,reference", "-placer", "scheduler"}, `-placer scheduler runs kube-scheduler itself, in the upstream adapter only: it needs -impl upstream (alone), not "upstream,reference"`},
		{[]string{"-pod-group", pgDir + "gang.yaml", "-impl", "all", "-placer", "scheduler"}, `it needs -impl upstream (alone), not "all"`},
		{[]string{"-pod", pgDir + "pod.yaml", "-impl", "upstream", "-placer", "scheduler"}, "-placer scheduler places a gang's members: it needs -pod-group"},
		{[]string{"-pod-group", pgDir + "gang.yaml", "-impl", "upstream", "-placer", "best"}, `-placer must be firstfit or scheduler, not "best"`},
	} {
		_, stderr, code := runCLI(t, append(base, tc.args...)...)
		if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d with %q", tc.args, code, stderr, ExitBadInput, tc.want)
		}
	}
}
