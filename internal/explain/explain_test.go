package explain_test

import (
	"context"
	"strings"
	"testing"

	"github.com/preemptbench/preemptbench/internal/explain"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// On the basic shape at 50 nodes with the default candidate settings
// (10% of the potential nodes, at least 100: all 50 here) every node is a
// candidate; the explanation names the one the decision nominated as
// chosen, says what eliminated each other, and lists the preemptor's
// FailedScheduling event and a Preempted event per victim.
func TestPodExplainsTheChoice(t *testing.T) {
	s := synth.MustBuild("basic", 50, 1)
	cfg := preempt.DefaultConfig()
	r, err := harness.Decide(context.Background(), reference.Impl{}, s.Cluster, s.Pod, cfg, 7, s.Now)
	if err != nil {
		t.Fatal(err)
	}
	if r.Decision.Status != preempt.Success {
		t.Fatalf("status %s, want Success", r.Decision.Status)
	}
	ex := explain.Pod("reference", r, s.Cluster, s.Pod, cfg)
	if ex.Window == nil || ex.Window.PotentialNodes != 50 || ex.Window.Offset != 7 || ex.Window.Visited != 50 || len(ex.Window.NotVisited) != 0 {
		t.Errorf("window %+v, want 50 potential nodes from offset 7, all visited", ex.Window)
	}
	chosen := 0
	for _, c := range ex.Candidates {
		switch {
		case c.Chosen:
			chosen++
			if c.Node != r.Decision.NominatedNode {
				t.Errorf("chosen %s, the decision nominated %s", c.Node, r.Decision.NominatedNode)
			}
		case c.EliminatedBy == "" || c.Against == "":
			t.Errorf("candidate %s neither chosen nor eliminated: %+v", c.Node, c)
		}
	}
	if chosen != 1 || len(ex.Candidates) != len(r.Decision.Candidates) {
		t.Errorf("%d chosen of %d candidates (the decision has %d)", chosen, len(ex.Candidates), len(r.Decision.Candidates))
	}
	if len(ex.Events) != 1+len(r.Decision.Victims) || ex.Events[0].Reason != "FailedScheduling" {
		t.Errorf("events %+v, want FailedScheduling and one Preempted per victim (%d)", ex.Events, len(r.Decision.Victims))
	}
	var b strings.Builder
	explain.WriteText(&b, ex)
	if !strings.Contains(b.String(), "chosen   "+r.Decision.NominatedNode) {
		t.Errorf("text does not name the chosen node %s:\n%s", r.Decision.NominatedNode, b.String())
	}
}
