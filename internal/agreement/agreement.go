// Package agreement decides what "the same decision" means between the
// reference and another implementation, allowing for upstream's two
// remaining sources of chance: the final tie of pickOneNodeForPreemption,
// which upstream breaks by map order, and which node of an extender's
// answer its error names when the answer names pods not on their nodes
// (also map order).
package agreement

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/actuation"
	"github.com/preemptbench/preemptbench/internal/extender"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/preempt"
)

// RandomFinalTie is implemented by implementations (upstream) whose
// SelectCandidate breaks the last tie at random among equal-best nodes.
type RandomFinalTie interface {
	RandomFinalTie() bool
}

// TieIsRandom reports whether impl breaks the final tie at random.
func TieIsRandom(impl preempt.Implementation) bool {
	r, ok := impl.(RandomFinalTie)
	return ok && r.RandomFinalTie()
}

// EqualBest lists the candidates pickOneNodeForPreemption cannot tell apart
// from the best one: those ev picks when moved to the front of the list.
func EqualBest(ev preempt.Evaluator, cands []preempt.Candidate, req *preempt.Request) []string {
	var out []string
	for i := range cands {
		reordered := append([]preempt.Candidate{cands[i]}, slices.Delete(slices.Clone(cands), i, i+1)...)
		if best := ev.SelectCandidate(reordered, req); best != nil && best.Node == cands[i].Node {
			out = append(out, cands[i].Node)
		}
	}
	return out
}

// Expected returns the decision other must match: ref itself, or, when
// other breaks the final tie at random and chose another of the equal-best
// nodes, the decision refEv makes had it chosen that node (its victims and
// the API calls of actuating it). note says when the tie was reconciled; an
// error says other chose a node that is not equal-best.
//
// The candidates compared are those SelectCandidate saw: the dry run's,
// after the extenders of req (called again: they must answer the same
// arguments the same way). The API calls fs name fail, as they did.
func Expected(ctx context.Context, refEv preempt.Evaluator, c *preempt.Cluster, req *preempt.Request, ref, got preempt.Decision, other preempt.Implementation, fs ...harness.Fault) (want preempt.Decision, note string, err error) {
	if TieIsRandom(other) {
		if note, ok := ExtenderAnswerOrder(c, ref, got); ok {
			want = ref
			want.Message = got.Message
			return want, note, nil
		}
	}
	if !TieIsRandom(other) || !actuated(ref) || !actuated(got) {
		return ref, "", nil
	}
	cands, err := Selectable(ctx, c, req, ref.Candidates)
	if err != nil {
		if ref.Status == preempt.Success && got.Status == preempt.Success {
			return ref, "", err
		}
		return ref, "", nil // the extenders' error is the decision itself
	}
	refNode, gotNode := chosenNode(ref, cands), chosenNode(got, cands)
	if gotNode == "" || gotNode == refNode {
		return ref, "", nil
	}
	ties := EqualBest(refEv, cands, req)
	if !slices.Contains(ties, gotNode) {
		return ref, "", fmt.Errorf("%s chose %s, not among the equal-best candidates %v (reference: %s)", other.Name(), gotNode, ties, refNode)
	}
	i := slices.IndexFunc(cands, func(c preempt.Candidate) bool { return c.Node == gotNode })
	cand := cands[i]
	cs := harness.NewClient(c, req.Pod, fs...)
	want = ref
	want.Status, want.Message = preempt.Success, preempt.SuccessMessage(cand.Node, len(cand.Victims))
	want.ActuationErrors, want.PreemptorActivated = nil, false
	want.NominatedNode, want.Victims, want.NumPDBViolations = cand.Node, cand.Victims, cand.NumPDBViolations
	if err := refEv.PrepareCandidate(ctx, cs, &cand, req); err != nil {
		var bg *actuation.BackgroundError
		if errors.As(err, &bg) {
			want.ActuationErrors, want.PreemptorActivated = bg.Victims, true
		} else {
			// As PreemptWithStages: an actuation error leaves no nomination.
			want.Status, want.Message = preempt.Error, err.Error()
			want.NominatedNode, want.Victims, want.NumPDBViolations = "", []preempt.Victim{}, 0
		}
	}
	want.Actions = cs.Recorded()
	note = fmt.Sprintf("%s broke the final tie among the equal-best nodes %v at %s (map order); the reference takes list order, %s", other.Name(), ties, gotNode, refNode)
	return want, note, nil
}

// actuated reports whether d reached actuation: a node was chosen (a
// Success, or an Error of the actuation once candidates were found).
func actuated(d preempt.Decision) bool {
	return d.Eligible && len(d.Candidates) > 0 && (d.Status == preempt.Success || d.Status == preempt.Error)
}

// chosenNode is the node d chose: its nomination, or, when actuation failed
// before it, the candidate holding the first pod its API calls touched.
func chosenNode(d preempt.Decision, cands []preempt.Candidate) string {
	if d.NominatedNode != "" {
		return d.NominatedNode
	}
	for _, a := range d.Actions {
		for _, c := range cands {
			for _, v := range c.Victims {
				if v.Namespace == a.Namespace && v.Name == a.Name {
					return c.Node
				}
			}
		}
		for _, s := range a.Sets {
			if node, ok := strings.CutPrefix(s, "nominatedNodeName="); ok && node != "null" && a.Name == "" {
				return node
			}
		}
	}
	return ""
}

// Selectable is the candidates SelectCandidate chooses among: the dry
// run's, after the extenders of req, called again (they must answer the
// same arguments the same way).
func Selectable(ctx context.Context, c *preempt.Cluster, req *preempt.Request, dryRun []preempt.Candidate) ([]preempt.Candidate, error) {
	cands, err := extender.Call(ctx, req.Config.Extenders, req.Pod, dryRun, extender.NodePodsOf(c), extender.BoundPodOf(c))
	if err != nil {
		return nil, fmt.Errorf("extenders, called again: %w", err)
	}
	return cands, nil
}

// Upstream's errors reading an extender's answer, one node at a time
// (HTTPExtender.convertToVictims, then callExtenders' check of each node).
var (
	extenderLookupError = regexp.MustCompile(`^extender: (.*) claims to preempt pod \(UID: &\{(.*)\}\) on node: (.*), but the pod is not found on that node$`)
	extenderNodeError   = regexp.MustCompile(`^nodeinfo not found for node name "(.*)"$`)
	extenderEmptyError  = regexp.MustCompile(`^expected at least one victim pod on node "(.*)"$`)
)

// ExtenderAnswerOrder explains got's error when it differs from ref's only
// by which node of an extender's answer it names: upstream reads the
// answer in map order and fails on the first bad node it meets, the
// contract reads node names in order. Under GenericWorkload this is
// common: a unit's members on other nodes are a candidate's victims too,
// and an extender that answers with them makes upstream fail on the
// first such pod of a node. got is explained when both are answer errors
// of the same reading step and got's names a bad node: a node not in the
// cluster, a pod that is in no node of the cluster, or a pod that is a
// victim of that node's candidate in the dry run and bound to another
// node; or both name a node answered without victims.
func ExtenderAnswerOrder(c *preempt.Cluster, ref, got preempt.Decision) (string, bool) {
	if ref.Status != preempt.Error || got.Status != preempt.Error || ref.Message == got.Message {
		return "", false
	}
	explained := func(node string) (string, bool) {
		return fmt.Sprintf("an extender's answer has several bad nodes; upstream read it in map order and failed at %s, the reference reads node names in order (%s)", node, ref.Message), true
	}
	reading := func(msg string) bool {
		return extenderLookupError.MatchString(msg) || extenderNodeError.MatchString(msg)
	}
	switch {
	case extenderEmptyError.MatchString(ref.Message) && extenderEmptyError.MatchString(got.Message):
		return explained(extenderEmptyError.FindStringSubmatch(got.Message)[1])
	case !reading(ref.Message):
		return "", false
	}
	if g := extenderNodeError.FindStringSubmatch(got.Message); g != nil {
		if slices.ContainsFunc(c.Nodes, func(n *v1.Node) bool { return n.Name == g[1] }) {
			return "", false
		}
		return explained(g[1])
	}
	g := extenderLookupError.FindStringSubmatch(got.Message)
	if g == nil {
		return "", false
	}
	if r := extenderLookupError.FindStringSubmatch(ref.Message); r != nil && r[1] != g[1] {
		return "", false // another extender
	}
	uid, node := g[2], g[3]
	i := slices.IndexFunc(ref.Candidates, func(cand preempt.Candidate) bool { return cand.Node == node })
	if i < 0 {
		return "", false
	}
	if !slices.ContainsFunc(c.Pods, func(p *v1.Pod) bool { return string(p.UID) == uid && preempt.IsBound(p) }) {
		return explained(node) // the answer names a pod no node holds
	}
	for _, v := range ref.Candidates[i].Victims {
		for _, p := range c.Pods {
			if p.Namespace == v.Namespace && p.Name == v.Name && string(p.UID) == uid && preempt.IsBound(p) && p.Spec.NodeName != node {
				return explained(node)
			}
		}
	}
	return "", false
}
