package harness

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/preemptbench/preemptbench/internal/actuation"
	"github.com/preemptbench/preemptbench/internal/testobj"
)

// The accepting clientset answers preemption's calls (as actuation and
// upstream's util make them) without recording them, counts them, and
// still accepts and records any other call.
func TestAcceptingClientset(t *testing.T) {
	ctx := context.Background()
	cs := NewAcceptingClientset()
	victim := testobj.MakePod().Namespace("ns").Name("v").UID("uid-v").Node("n1").Obj()
	preemptor := testobj.MakePod().Namespace("other").Name("p").UID("uid-p").Obj()
	if err := actuation.PreemptPod(ctx, cs, preemptor, victim); err != nil {
		t.Fatal(err)
	}
	if got := cs.Calls(); got != 2 { // the DisruptionTarget patch and the deletion
		t.Errorf("calls after preempting one victim: %d, want 2", got)
	}
	if got, err := cs.CoreV1().Pods("ns").Patch(ctx, "v", "application/strategic-merge-patch+json", []byte(`{}`), metav1.PatchOptions{}, "status"); err != nil || got == nil {
		t.Errorf("patch: %v, %v", got, err)
	}
	if n := len(cs.Actions()); n != 0 {
		t.Errorf("%d actions recorded for answered calls: %v", n, cs.Actions())
	}
	if _, err := cs.CoreV1().Pods("ns").Get(ctx, "v", metav1.GetOptions{}); err != nil {
		t.Errorf("get: %v", err)
	}
	if _, err := cs.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{}); err != nil {
		t.Errorf("node get: %v", err)
	}
	if n := len(cs.Actions()); n != 2 {
		t.Errorf("other calls recorded: %d, want 2", n)
	}
	if cs.CoreV1().Pods("ns") != cs.CoreV1().Pods("ns") {
		t.Error("a namespace's pod client is built per call")
	}
	cs.ClearActions()
	if cs.Calls() != 0 || len(cs.Actions()) != 0 {
		t.Errorf("after ClearActions: %d calls, %d actions", cs.Calls(), len(cs.Actions()))
	}
}
