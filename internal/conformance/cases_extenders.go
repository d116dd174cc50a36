package conformance

// Extenders and actuation faults: whole decisions with extenders served on
// loopback (callExtenders: who is called, what is done with the answer)
// and with API calls that fail, in both actuation modes.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/preemptbench/preemptbench/internal/extendertest"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/preempt"
)

// extenderCluster: node-a holds a1 (priority 1) and a2 (2), node-b b1 (1),
// node-c c1 (5), each node full; the preemptor (10) needs a whole node.
// Without extenders node-b wins (its highest victim is the lowest).
func extenderCluster() *preempt.Cluster {
	return &preempt.Cluster{
		Nodes: []*v1.Node{node("node-a", "1000m").Obj(), node("node-b", "1000m").Obj(), node("node-c", "1000m").Obj()},
		Pods: []*v1.Pod{
			pod("default", "a1", 1).Node("node-a").Phase(v1.PodRunning).CPU("500m").StartTime(ago(time.Hour)).Obj(),
			pod("default", "a2", 2).Node("node-a").Phase(v1.PodRunning).CPU("500m").StartTime(ago(time.Hour)).Obj(),
			pod("default", "b1", 1).Node("node-b").Phase(v1.PodRunning).CPU("1000m").StartTime(ago(time.Hour)).Obj(),
			pod("default", "c1", 5).Node("node-c").Phase(v1.PodRunning).CPU("1000m").StartTime(ago(time.Hour)).Obj(),
		},
	}
}

func ext(behaviour string, mod ...func(*configv1.Extender)) configv1.Extender {
	e := configv1.Extender{URLPrefix: extendertest.URL() + "/" + behaviour, PreemptVerb: "preempt", HTTPTimeout: metav1.Duration{Duration: 10 * time.Second}}
	for _, m := range mod {
		m(&e)
	}
	return e
}

func ignorable(e *configv1.Extender)     { e.Ignorable = true }
func nodeCache(e *configv1.Extender)     { e.NodeCacheCapable = true }
func noPreemptVerb(e *configv1.Extender) { e.PreemptVerb = "" }
func managing(e *configv1.Extender) {
	e.ManagedResources = []configv1.ExtenderManagedResource{{Name: string(ExtendedResource)}}
}

func testExtenders(t *testing.T, impl preempt.Implementation) {
	dryRun := []preempt.Candidate{
		{Node: "node-a", Victims: []preempt.Victim{vic("default", "a2", 2), vic("default", "a1", 1)}},
		{Node: "node-b", Victims: []preempt.Victim{vic("default", "b1", 1)}},
		{Node: "node-c", Victims: []preempt.Victim{vic("default", "c1", 5)}},
	}
	success := func(node string, victims ...preempt.Victim) decisionOutcome {
		out := decisionOutcome{Eligible: true, Status: preempt.Success, Message: successMsg(node, len(victims)), NominatedNode: node, Victims: victims,
			Actions: []preempt.Action{patchOf("default", "p", "nominatedNodeName="+node)}}
		for _, v := range victims {
			out.Actions = append(out.Actions, patchOf(v.Namespace, v.Name, setsDisruption), deleteOf(v.Namespace, v.Name))
		}
		return out
	}
	failure := func(msg string) decisionOutcome {
		return decisionOutcome{Eligible: true, Status: preempt.Error, Message: msg}
	}
	url := func(behaviour string) string { return extendertest.URL() + "/" + behaviour + "/preempt" }
	// drop-nodes drops the nodes whose name hashes even (fnv-32a):
	// node-b, not node-a or node-c.
	tests := []struct {
		name      string
		extenders []configv1.Extender
		want      decisionOutcome
	}{
		{name: "an extender answering what it was sent changes nothing", extenders: []configv1.Extender{ext("keep")},
			want: success("node-b", vic("default", "b1", 1))},
		{name: "an extender that drops a node", extenders: []configv1.Extender{ext("drop-nodes")},
			want: success("node-a", vic("default", "a2", 2), vic("default", "a1", 1))},
		{name: "an extender that drops victims", extenders: []configv1.Extender{ext("drop-nodes"), ext("trim")},
			want: success("node-a", vic("default", "a2", 2))},
		{name: "a node-cache-capable extender gets and answers UIDs", extenders: []configv1.Extender{ext("drop-nodes", nodeCache)},
			want: success("node-a", vic("default", "a2", 2), vic("default", "a1", 1))},
		{name: "a failing extender fails the preemption", extenders: []configv1.Extender{ext("fail")},
			want: failure(fmt.Sprintf("failed preempt with extender at URL %s, code 500", url("fail")))},
		{name: "a failing ignorable extender is skipped", extenders: []configv1.Extender{ext("fail", ignorable), ext("drop-nodes")},
			want: success("node-a", vic("default", "a2", 2), vic("default", "a1", 1))},
		{name: "ignorable extenders are called last", extenders: []configv1.Extender{ext("empty", ignorable), ext("drop-nodes")},
			// drop-nodes first leaves node-a and node-c; empty then empties
			// node-a, which an ignorable extender's answer drops.
			want: success("node-c", vic("default", "c1", 5))},
		{name: "a node answered without victims fails the preemption", extenders: []configv1.Extender{ext("empty")},
			want: failure(`expected at least one victim pod on node "node-a"`)},
		{name: "malformed JSON fails the preemption", extenders: []configv1.Extender{ext("garbage")},
			want: failure("unexpected EOF")},
		{name: "a timeout fails the preemption", extenders: []configv1.Extender{ext("slow", func(e *configv1.Extender) { e.HTTPTimeout.Duration = 100 * time.Millisecond })},
			want: failure(fmt.Sprintf("Post %q: context deadline exceeded (Client.Timeout exceeded while awaiting headers)", url("slow")))},
		{name: "a timeout of an ignorable extender is skipped", extenders: []configv1.Extender{ext("slow", ignorable, func(e *configv1.Extender) { e.HTTPTimeout.Duration = 100 * time.Millisecond })},
			want: success("node-b", vic("default", "b1", 1))},
		{name: "a pod the node does not hold fails the preemption", extenders: []configv1.Extender{ext("unknown-pod")},
			want: failure(fmt.Sprintf("extender: %s claims to preempt pod (UID: &{no-such-pod}) on node: node-a, but the pod is not found on that node", extendertest.URL()+"/unknown-pod"))},
		{name: "a node the cluster does not hold fails the preemption", extenders: []configv1.Extender{ext("unknown-node")},
			want: failure(`nodeinfo not found for node name "no-such-node"`)},
		{name: "an extender without a preempt verb is not called", extenders: []configv1.Extender{ext("fail", noPreemptVerb)},
			want: success("node-b", vic("default", "b1", 1))},
		{name: "an extender managing a resource the pod does not use is not called", extenders: []configv1.Extender{ext("fail", managing)},
			want: success("node-b", vic("default", "b1", 1))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRequest(pod("default", "p", 10).CPU("1000m").Obj(), unschedulable("node-a", "node-b", "node-c"))
			r.Config.Extenders = tt.extenders
			d := runDecision(t, impl, extenderCluster(), r)
			if diff := cmp.Diff(tt.want, outcomeOf(d), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(dryRun, d.Candidates); diff != "" {
				t.Errorf("candidates, the dry run's (-want +got):\n%s", diff)
			}
		})
	}
}

// testActuationFaults fails one API call of a decision, in both modes.
func testActuationFaults(t *testing.T, impl preempt.Implementation) {
	forbiddenMsg := func(name string) string {
		return fmt.Sprintf("pods %q is forbidden: injected by preemptbench", name)
	}
	failed := func(a preempt.Action) preempt.Action {
		a.Error = forbiddenMsg(a.Name)
		return a
	}
	nominate := patchOf("default", "p", "nominatedNodeName=node-a")
	a2, a1 := []preempt.Action{patchOf("default", "a2", setsDisruption), deleteOf("default", "a2")}, []preempt.Action{patchOf("default", "a1", setsDisruption), deleteOf("default", "a1")}
	victims := []preempt.Victim{vic("default", "a2", 2), vic("default", "a1", 1)}
	type outcome struct {
		Status             preempt.Code
		Message            string
		NominatedNode      string
		Actions            []preempt.Action
		ActuationErrors    []string
		PreemptorActivated bool
	}
	tests := []struct {
		name  string
		fault harness.Fault
		sync  bool
		want  outcome
	}{
		{name: "sync: a failing delete fails the decision, nothing more is done", sync: true,
			fault: harness.Fault{Verb: "delete", Namespace: "default", Name: "a2"},
			want:  outcome{Status: preempt.Error, Message: forbiddenMsg("a2"), Actions: []preempt.Action{a2[0], failed(a2[1])}}},
		{name: "sync: a failing status patch fails the decision before the delete", sync: true,
			fault: harness.Fault{Verb: "patch", Subresource: "status", Namespace: "default", Name: "a1"},
			want:  outcome{Status: preempt.Error, Message: forbiddenMsg("a1"), Actions: []preempt.Action{a2[0], a2[1], failed(a1[0])}}},
		{name: "sync: a failing nomination fails the decision after the victims", sync: true,
			fault: harness.Fault{Verb: "patch", Subresource: "status", Namespace: "default", Name: "p"},
			want:  outcome{Status: preempt.Error, Message: forbiddenMsg("p"), Actions: append(append(append([]preempt.Action{}, a2...), a1...), failed(nominate))}},
		{name: "async: a failing victim but the last stops before the last, the decision stands",
			fault: harness.Fault{Verb: "delete", Namespace: "default", Name: "a2"},
			want: outcome{Status: preempt.Success, Message: successMsg("node-a", 2), NominatedNode: "node-a", Actions: []preempt.Action{nominate, a2[0], failed(a2[1])},
				ActuationErrors: []string{forbiddenMsg("a2")}, PreemptorActivated: true}},
		{name: "async: a failing last victim is reported",
			fault: harness.Fault{Verb: "patch", Subresource: "status", Namespace: "default", Name: "a1"},
			want: outcome{Status: preempt.Success, Message: successMsg("node-a", 2), NominatedNode: "node-a", Actions: []preempt.Action{nominate, a2[0], a2[1], failed(a1[0])},
				ActuationErrors: []string{forbiddenMsg("a1")}, PreemptorActivated: true}},
		{name: "async: a failing nomination is an error, the victims are preempted all the same",
			fault: harness.Fault{Verb: "patch", Subresource: "status", Namespace: "default", Name: "p"},
			want:  outcome{Status: preempt.Error, Message: forbiddenMsg("p"), Actions: append(append([]preempt.Action{failed(nominate)}, a2...), a1...)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := extenderCluster()
			c.Pods = c.Pods[:2] // node-a only
			c.Nodes = c.Nodes[:1]
			r := newRequest(pod("default", "p", 10).CPU("1000m").Obj(), unschedulable("node-a"))
			r.Config.Synchronous = tt.sync
			d, err := harness.Run(context.Background(), impl, c, r, tt.fault)
			if err != nil {
				t.Fatal(err)
			}
			got := outcome{Status: d.Status, Message: d.Message, NominatedNode: d.NominatedNode, Actions: d.Actions,
				ActuationErrors: d.ActuationErrors, PreemptorActivated: d.PreemptorActivated}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
			if d.Status == preempt.Success && !cmp.Equal(victims, d.Victims) {
				t.Errorf("victims %v, want %v", d.Victims, victims)
			}
		})
	}
}

// testRunningPreemption: a pod whose asynchronous preemption still runs is
// kept out of the queue by DefaultPreemption's PreEnqueue (the executor's
// IsPodRunningPreemption), and only then.
func testRunningPreemption(t *testing.T, impl preempt.Implementation) {
	waiting := decisionOutcome{Status: preempt.UnschedulableAndUnresolvable, Message: preempt.MessageWaitingForPreemption}
	nominate := patchOf("default", "p", "nominatedNodeName=node-b")
	decided := decisionOutcome{Eligible: true, Status: preempt.Success, Message: successMsg("node-b", 1), NominatedNode: "node-b", Victims: []preempt.Victim{vic("default", "b1", 1)},
		Actions: []preempt.Action{nominate, patchOf("default", "b1", setsDisruption), deleteOf("default", "b1")}}
	ref := func(name string) *preempt.PodRef { return &preempt.PodRef{Namespace: "default", Name: name} }
	tests := []struct {
		name       string
		preempting *preempt.Preempting
		sync       bool
		terminate  string // a pod of the cluster that is terminating
		want       decisionOutcome
	}{
		{name: "no record: preemption runs", want: decided},
		{name: "still preempting the first victims", preempting: &preempt.Preempting{}, want: waiting},
		{name: "preempting the last victim, still in the cluster", preempting: &preempt.Preempting{LastVictim: ref("c1")}, want: waiting},
		{name: "the last victim is terminating: done", preempting: &preempt.Preempting{LastVictim: ref("c1")}, terminate: "c1",
			want: decided},
		{name: "the last victim is gone: done", preempting: &preempt.Preempting{LastVictim: ref("gone")}, want: decided},
		{name: "synchronous preemption keeps no record", preempting: &preempt.Preempting{}, sync: true,
			want: decisionOutcome{Eligible: true, Status: preempt.Success, Message: successMsg("node-b", 1), NominatedNode: "node-b", Victims: []preempt.Victim{vic("default", "b1", 1)},
				Actions: []preempt.Action{patchOf("default", "b1", setsDisruption), deleteOf("default", "b1"), nominate}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := extenderCluster()
			for _, p := range c.Pods {
				if p.Name == tt.terminate {
					ts := metav1.NewTime(now)
					p.DeletionTimestamp = &ts
				}
			}
			r := newRequest(pod("default", "p", 10).CPU("1000m").Obj(), unschedulable("node-a", "node-b", "node-c"))
			r.Preempting, r.Config.Synchronous = tt.preempting, tt.sync
			if diff := cmp.Diff(tt.want, outcomeOf(runDecision(t, impl, c, r)), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}
