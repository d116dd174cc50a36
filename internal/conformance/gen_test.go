package conformance

import (
	"context"
	"strings"
	"testing"

	"github.com/preemptbench/preemptbench/internal/agreement"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// TestGeneratorCoversOutcomes guards the differential properties against
// going vacuous: over a fixed number of draws the generator must reach
// every outcome the properties are meant to compare.
func TestGeneratorCoversOutcomes(t *testing.T) {
	seen := map[string]int{}
	gen := Gen(64)
	for i := range 1000 {
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

// TestGeneratorCoversV137Inputs: the draws reach the inputs on which
// v1.37 decides differently from v1.36 (namespace selectors of every
// operator over namespaces with and without a Namespace object,
// overlapping PDBs listed out of (namespace, name) order, resized pods).
func TestGeneratorCoversV137Inputs(t *testing.T) {
	seen := map[string]int{}
	gen := Gen(64)
	for i := range 400 {
		in := gen.Example(i)
		c := in.Cluster
		hasNS := map[string]bool{}
		for _, ns := range c.Namespaces {
			hasNS[ns.Name] = true
		}
		for _, p := range c.Pods {
			if a := p.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
				for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
					if sel := term.NamespaceSelector; sel != nil && len(sel.MatchExpressions) > 0 {
						seen["namespace selector "+string(sel.MatchExpressions[0].Operator)]++
					}
				}
			}
			if p.Spec.NodeName != "" {
				if hasNS[p.Namespace] {
					seen["bound pod in a namespace with an object"]++
				} else if len(c.Namespaces) > 0 {
					seen["bound pod in a namespace without an object, beside one with"]++
				}
			}
			if p.Status.Resources != nil || len(p.Status.ContainerStatuses) > 0 || len(p.Status.InitContainerStatuses) > 0 {
				seen["resized pod"]++
			}
			matching := 0
			for _, pdb := range c.PDBs {
				if pdbMatches(pdb, p) {
					matching++
				}
			}
			if matching > 1 {
				seen["pod matching several PDBs"]++
			}
		}
		for j := 1; j < len(c.PDBs); j++ {
			a, b := c.PDBs[j-1], c.PDBs[j]
			if a.Namespace == b.Namespace && a.Name > b.Name {
				seen["PDBs out of (namespace, name) order"]++
			}
		}
	}
	for _, want := range []string{
		"namespace selector In", "namespace selector NotIn", "namespace selector Exists", "namespace selector DoesNotExist",
		"bound pod in a namespace with an object", "bound pod in a namespace without an object, beside one with",
		"resized pod", "pod matching several PDBs", "PDBs out of (namespace, name) order",
	} {
		if seen[want] == 0 {
			t.Errorf("no draw reached %q (seen: %v)", want, seen)
		}
	}
	t.Logf("inputs: %v", seen)
}

// TestGangGeneratorCoversComposites: the gang draws reach every outcome of
// a CompositePodGroup preemptor and of a gang under
// TopologyAwareWorkloadScheduling, on the reference: a success, a failed
// composite (its minGroupCount missed, with the placement algorithm's
// message), a composite that succeeds beside a failed child (whose placed
// members are nominated all the same), policy Never, no victims.
func TestGangGeneratorCoversComposites(t *testing.T) {
	seen := map[string]int{}
	gen := GenGang(8)
	for i := range 600 {
		in := gen.Example(i)
		req := in.Gang
		kind := "gang"
		switch {
		case req.CompositePodGroup != nil:
			kind = "composite"
		case req.Config.FeatureGates[preempt.TopologyAwareGate]:
			kind = "TAS gang"
		}
		ev, err := reference.Impl{}.NewEvaluator(in.Cluster)
		if err != nil {
			t.Fatal(err)
		}
		d := ev.(preempt.PodGroupPreempter).PreemptPodGroup(context.Background(), harness.NewClientset(in.Cluster, nil), req)
		outcome := string(d.Status)
		switch {
		case strings.Contains(d.Message, "0/1 placements are available"):
			outcome += " (placements)"
		case strings.Contains(d.Message, "preemptionPolicy=Never"):
			outcome += " (Never)"
		}
		if kind == "composite" && d.Status == preempt.Success {
			tree, err := req.Tree(in.Cluster)
			if err != nil {
				t.Fatal(err)
			}
			nominated := map[string]bool{}
			for _, n := range d.Nominations {
				nominated[n.Name] = n.Node != ""
			}
			for _, child := range tree.Children {
				placed := 0
				for _, m := range child.Members {
					if nominated[req.Pods[m].Name] {
						placed++
					}
				}
				if placed > 0 && placed < child.MinCount() {
					seen["composite nominating a failed child's members"]++
				}
			}
		}
		seen[kind+": "+outcome]++
	}
	t.Logf("outcomes: %v", seen)
	for _, want := range []string{
		"gang: Success", "gang: Unschedulable", "TAS gang: Success", "TAS gang: Unschedulable (placements)",
		"composite: Success", "composite: Unschedulable (placements)", "composite: Unschedulable (Never)",
		"composite: UnschedulableAndUnresolvable", "composite nominating a failed child's members",
	} {
		if seen[want] == 0 {
			t.Errorf("no draw reached %q", want)
		}
	}
	if n := seen["composite: Error"] + seen["TAS gang: Error"] + seen["gang: Error"]; n > 0 {
		t.Errorf("%d draws gave an Error decision (the generator draws only valid gangs)", n)
	}
}

// GenGang's draws reach every step of kube-scheduler's pod-group cycle
// (harness.DecidePodGroup with the reference): gangs validatePodGroup
// refuses, for each of its reasons; members being deleted, skipped;
// gangs that fit as the cluster is (Schedulable, no preemption); gangs
// that preempt, with an unplaced member left out of the nominations;
// gangs that fail; and gangs no cycle takes (every member being deleted).
func TestGangGeneratorCoversCycle(t *testing.T) {
	seen := map[string]int{}
	gen := GenGang(8)
	for i := range 600 {
		in := gen.Example(i)
		ev, err := reference.Impl{}.NewEvaluator(in.Cluster)
		if err != nil {
			t.Fatal(err)
		}
		cs := harness.NewClient(in.Cluster, nil)
		for _, p := range in.Gang.Pods {
			_ = cs.Tracker().Add(p.DeepCopy())
		}
		d, err := harness.DecidePodGroup(context.Background(), reference.Impl{}, ev.(preempt.PodGroupPreempter), in.Cluster, in.Gang, cs)
		if err != nil {
			seen["no cycle"]++
			continue
		}
		outcome := string(d.Status)
		switch {
		case strings.Contains(d.Message, "same priority"):
			outcome += " (priority)"
		case strings.Contains(d.Message, "schedulerName"):
			outcome += " (scheduler name)"
		case strings.Contains(d.Message, "same preemption policy"):
			outcome += " (preemption policy)"
		}
		seen[outcome]++
		if len(d.Skipped) > 0 {
			seen["skipped: "+string(d.Status)]++
		}
		if d.Status == preempt.Success && len(d.Nominations) < len(in.Gang.Pods)-len(d.Skipped) {
			seen["Success leaving a member unnominated"]++
		}
	}
	t.Logf("outcomes: %v", seen)
	for _, want := range []string{
		"Schedulable", "Success", "Unschedulable", "UnschedulableAndUnresolvable",
		"Error (priority)", "Error (scheduler name)", "Error (preemption policy)",
		"skipped: Success", "skipped: Schedulable", "skipped: Unschedulable",
		"Success leaving a member unnominated", "no cycle",
	} {
		if seen[want] == 0 {
			t.Errorf("no draw reached %q", want)
		}
	}
}
