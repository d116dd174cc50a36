package preempttest

import (
	"context"
	"strings"
	"testing"

	"github.com/preemptbench/preemptbench/agreement"
	"github.com/preemptbench/preemptbench/harness"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// TestGeneratorCoversOutcomes guards the differential properties against
// going vacuous: over a fixed number of draws the generator must reach
// every outcome the properties are meant to compare.
func TestGeneratorCoversOutcomes(t *testing.T) {
	seen := map[string]int{}
	gen := Gen(64)
	for i := range 400 {
		in := gen.Example(i)
		d, err := harness.Run(context.Background(), reference.Impl{}, in.Cluster, in.Request)
		if err != nil {
			t.Fatalf("example %d: %v", i, err)
		}
		seen["status "+string(d.Status)]++
		if !d.Eligible {
			seen["ineligible"]++
		}
		if len(d.Candidates) > 1 {
			seen["several candidates"]++
		}
		if d.NumPDBViolations > 0 {
			seen["chosen with PDB violations"]++
		}
		for _, c := range d.Candidates {
			if c.NumPDBViolations > 0 {
				seen["violating candidate"]++
				break
			}
		}
		if len(harness.ClearedNominations(d.Actions)) > 0 {
			seen["cleared nominations"]++
		}
		for _, s := range d.NodeStatuses {
			seen["node status "+string(s.Code)]++
			for _, r := range s.Reasons {
				if strings.Contains(r, "affinity") || strings.Contains(r, "spread") {
					seen["dry run: "+r]++
				}
			}
		}
		ev0, _ := reference.Impl{}.NewEvaluator(in.Cluster)
		for _, s := range ev0.Filter(context.Background(), in.Request.Pod).NodeStatuses {
			for _, r := range s.Reasons {
				if strings.Contains(r, "affinity") || strings.Contains(r, "spread") {
					seen["filter: "+r]++
				}
			}
		}
		ev, _ := reference.Impl{}.NewEvaluator(in.Cluster)
		if d.Status == preempt.Success && len(agreement.EqualBest(ev, d.Candidates, in.Request)) > 1 {
			seen["final tie"]++
		}
	}
	for _, want := range []string{
		"status Success", "status Unschedulable", "status Error", "ineligible", "several candidates",
		"chosen with PDB violations", "violating candidate", "cleared nominations",
		"node status Unschedulable", "node status UnschedulableAndUnresolvable", "node status Error", "final tie",
		"filter: node(s) didn't match pod affinity rules", "filter: node(s) didn't match pod anti-affinity rules",
		"filter: node(s) didn't satisfy existing pods anti-affinity rules",
		"dry run: node(s) didn't match pod affinity rules", "dry run: node(s) didn't match pod anti-affinity rules",
		"dry run: node(s) didn't satisfy existing pods anti-affinity rules",
		"filter: node(s) didn't match pod topology spread constraints", "filter: node(s) didn't match pod topology spread constraints (missing required label)",
		"dry run: node(s) didn't match pod topology spread constraints",
	} {
		if seen[want] == 0 {
			t.Errorf("no draw reached %q (seen: %v)", want, seen)
		}
	}
	t.Logf("outcomes: %v", seen)
}
