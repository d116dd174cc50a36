package actuation

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/preemptbench/preemptbench/internal/testobj"
)

// diffPatch is the patch PatchPodStatus computes: the strategic merge
// patch between the two marshalled pods.
func diffPatch(t *testing.T, old, newStatus *v1.PodStatus) string {
	t.Helper()
	a, err := json.Marshal(v1.Pod{Status: *old})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v1.Pod{Status: *newStatus})
	if err != nil {
		t.Fatal(err)
	}
	p, err := strategicpatch.CreateTwoWayMergePatch(a, b, &v1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	return string(p)
}

// TestAppendedConditionPatch: the directly written patch is, byte for
// byte, the diff's, over statuses with 0 to 4 conditions of odd types,
// messages that JSON escapes (quotes, HTML characters, invalid UTF-8,
// control characters), observed generations zero or not, transition
// times in other zones and with sub-second parts, other status fields
// set; and the cases it declines are declined.
func TestAppendedConditionPatch(t *testing.T) {
	strs := []string{"", "x", `quo"te`, "<a&b>", "é\u2028", "\xff\xfe", "tab\tnl\n", "default-scheduler: preempting to accommodate a higher priority pod"}
	types := []v1.PodConditionType{v1.PodReady, v1.PodScheduled, v1.ContainersReady, "Custom\"<x>", "é"}
	rng := rand.New(rand.NewPCG(1, 2))
	zones := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+1800)}
	checked := 0
	for i := range 3000 {
		old := &v1.PodStatus{Phase: v1.PodRunning, HostIP: "10.0.0.1", Message: strs[rng.IntN(len(strs))]}
		if rng.IntN(2) == 0 {
			st := metav1.NewTime(testobj.Epoch)
			old.StartTime = &st
		}
		for _, k := range rng.Perm(len(types))[:rng.IntN(5)] {
			old.Conditions = append(old.Conditions, v1.PodCondition{Type: types[k], Status: v1.ConditionTrue, Reason: strs[rng.IntN(len(strs))]})
		}
		c := &v1.PodCondition{
			Type: v1.DisruptionTarget, Status: v1.ConditionStatus(strs[rng.IntN(len(strs))]),
			Reason: strs[rng.IntN(len(strs))], Message: strs[rng.IntN(len(strs))],
			ObservedGeneration: int64(rng.IntN(3)) * 1234567890123,
			LastTransitionTime: metav1.NewTime(time.Date(2026, 3, 4, 5, 6, 7, rng.IntN(2)*999999999, zones[rng.IntN(2)])),
		}
		got, ok := appendedConditionPatch(old, c)
		if !ok {
			if utf8.ValidString(string(c.Status)) && utf8.ValidString(c.Reason) && utf8.ValidString(c.Message) {
				t.Fatalf("case %d: declined %+v", i, old.Conditions)
			}
			continue // not UTF-8: left to the diff
		}
		newStatus := old.DeepCopy()
		newStatus.Conditions = append(newStatus.Conditions, *c)
		if want := diffPatch(t, old, newStatus); string(got) != want {
			t.Fatalf("case %d:\n direct %s\n   diff %s", i, got, want)
		}
		checked++
	}
	for _, tc := range []struct {
		name string
		old  []v1.PodCondition
		c    v1.PodCondition
	}{
		{"condition already there", []v1.PodCondition{{Type: v1.DisruptionTarget}}, v1.PodCondition{Type: v1.DisruptionTarget}},
		{"repeated type", []v1.PodCondition{{Type: v1.PodReady}, {Type: v1.PodReady}}, v1.PodCondition{Type: v1.DisruptionTarget}},
		{"empty type", []v1.PodCondition{{}}, v1.PodCondition{Type: v1.DisruptionTarget}},
		{"probe time", nil, v1.PodCondition{Type: v1.DisruptionTarget, LastProbeTime: metav1.Now()}},
		{"no transition time", nil, v1.PodCondition{Type: v1.DisruptionTarget, LastTransitionTime: metav1.Time{}}},
		{"not UTF-8", nil, v1.PodCondition{Type: v1.DisruptionTarget, Message: "\xff"}},
	} {
		c := tc.c
		if tc.name != "no transition time" && tc.name != "probe time" {
			c.LastTransitionTime = metav1.Now()
		}
		if _, ok := appendedConditionPatch(&v1.PodStatus{Conditions: tc.old}, &c); ok {
			t.Errorf("%s: not declined", tc.name)
		}
	}
	if checked < 1500 { // a third draw some invalid UTF-8
		t.Errorf("only %d of 3000 statuses compared (about two thirds expected)", checked)
	}
	t.Logf("%d statuses: the same bytes", checked)
}

// The direct nomination patch is the diff's, byte for byte: setting,
// moving and clearing a nomination beside every other status field.
func TestNominationPatch(t *testing.T) {
	st := metav1.NewTime(testobj.Epoch)
	olds := []v1.PodStatus{
		{},
		{Phase: v1.PodPending, Conditions: []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: "Unschedulable"}}},
		{Phase: v1.PodRunning, HostIP: "10.0.0.1", StartTime: &st, NominatedNodeName: "n1"},
		{NominatedNodeName: `q"uote<&>`},
		{NominatedNodeName: "é\u2028"},
		{NominatedNodeName: "\xff"},
	}
	nodes := []string{"", "n1", "n2", `q"uote<&>`, "é\u2028", "\xff"}
	checked := 0
	for _, old := range olds {
		for _, node := range nodes {
			got, ok := nominationPatch(&old, node)
			if !ok {
				if utf8.ValidString(node) && utf8.ValidString(old.NominatedNodeName) {
					t.Errorf("%q -> %q declined", old.NominatedNodeName, node)
				}
				continue
			}
			newStatus := old.DeepCopy()
			newStatus.NominatedNodeName = node
			want := diffPatch(t, &old, newStatus)
			if want == "{}" {
				want = "" // PatchPodStatus sends nothing
			}
			if string(got) != want {
				t.Errorf("%q -> %q:\n direct %s\n   diff %s", old.NominatedNodeName, node, got, want)
			}
			checked++
		}
	}
	if checked < 25 {
		t.Errorf("only %d cases checked", checked)
	}
}

// appendJSONString writes what json.Marshal writes, for every byte.
func TestAppendJSONString(t *testing.T) {
	strs := []string{"", "plain", "default-scheduler: preempting", "é", "\u2028", "\xff"}
	for c := range 256 {
		strs = append(strs, string([]byte{'a', byte(c), 'z'}))
	}
	for _, s := range strs {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("%q: %s, want %s", s, got[1:], want)
		}
	}
}

// TestPreemptionMessage: the kept message is Sprintf's, whichever
// scheduler and kind asked last.
func TestPreemptionMessage(t *testing.T) {
	for _, c := range [][2]string{{"default-scheduler", "pod"}, {"default-scheduler", "pod"}, {"default-scheduler", "podgroup"}, {"other", "podgroup"}, {"default-scheduler", "pod"}} {
		want := fmt.Sprintf("%s: preempting to accommodate a higher priority %s", c[0], c[1])
		if got := preemptionMessage(c[0], c[1]); got != want {
			t.Errorf("preemptionMessage(%q, %q) = %q, want %q", c[0], c[1], got, want)
		}
	}
}

// appendJSONTime writes what metav1.Time marshals to, whichever second it
// wrote last (it keeps one): seconds in turn, back and forth, in two
// zones, with and without nanoseconds.
func TestAppendJSONTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	zones := []*time.Location{time.UTC, time.FixedZone("x", -7*3600-1800)}
	base := time.Date(2026, 12, 31, 23, 59, 58, 0, time.UTC)
	for i := range 500 {
		tm := metav1.NewTime(base.Add(time.Duration(rng.IntN(4))*time.Second + time.Duration(rng.IntN(2)*999999999)).In(zones[rng.IntN(2)]))
		want, err := json.Marshal(tm)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONTime([]byte("x"), tm); string(got) != "x"+string(want) {
			t.Fatalf("case %d, %v: %s, want %s", i, tm, got[1:], want)
		}
	}
}
