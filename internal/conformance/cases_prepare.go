package conformance

// PrepareCandidate, both ways upstream actuates (actuation.Actuate):
// synchronous prepareCandidate (victims patched with DisruptionTarget and
// deleted, in victim order; lower-priority nominations on the node cleared;
// then the preemptor's nomination), and the default (since v1.33) asynchronous
// prepareCandidateAsync (the nomination first; then, when a victim is not
// already terminating, the nominations cleared and the victims preempted,
// the last one only when the others succeeded).
// Also the ports of executor_test.go's TestPrepareCandidate,
// TestRemoveNominatedNodeName and TestPreemptPod.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/preemptbench/preemptbench/internal/actuation"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
)

func patchOf(ns, name string, sets ...string) preempt.Action {
	return preempt.Action{Verb: "patch", Subresource: "status", Namespace: ns, Name: name, Sets: sets}
}

func deleteOf(ns, name string) preempt.Action {
	return preempt.Action{Verb: "delete", Namespace: ns, Name: name}
}

const setsDisruption = "conditions[DisruptionTarget]"

// prepareCluster: node1 with victims v1, v2 and the terminating v3, and
// pods nominated to node1 (n-low2 and n-low1 below the preemptor, in that
// cluster order; n-eq and n-high not below) and to node2 (n-other).
func prepareCluster() *preempt.Cluster {
	v1pod := pod("default", "v1", 1).Node("node1").Phase(v1.PodRunning).CPU("100m").StartTime(ago(2 * time.Hour)).Conditions([]v1.PodCondition{v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue}}).Obj()
	v1pod.Generation = 3
	return &preempt.Cluster{
		Nodes: []*v1.Node{node("node1", "1").Obj(), node("node2", "1").Obj()},
		Pods: []*v1.Pod{
			v1pod,
			pod("default", "v2", 1).Node("node1").Phase(v1.PodRunning).CPU("100m").StartTime(ago(time.Hour)).Obj(),
			pod("default", "v3", 1).Node("node1").Phase(v1.PodRunning).CPU("100m").DeletionTimestamp(ago(time.Minute)).PreemptedByScheduler().Obj(),
			pod("default", "n-high", 20).NominatedNodeName("node1").Obj(),
			pod("other", "n-low2", 0).NominatedNodeName("node1").Obj(),
			pod("default", "n-eq", 10).NominatedNodeName("node1").Obj(),
			pod("default", "n-low1", 5).NominatedNodeName("node1").Obj(),
			pod("default", "n-other", 1).NominatedNodeName("node2").Obj(),
		},
	}
}

func prepareCandidate() *preempt.Candidate {
	return &preempt.Candidate{Node: "node1", Victims: []preempt.Victim{
		vic("default", "v1", 1), vic("default", "v3", 1), vic("default", "v2", 1),
	}}
}

// prepareAsyncActions is prepareActions under asynchronous preemption.
var prepareAsyncActions = []preempt.Action{
	patchOf("default", "p", "nominatedNodeName=node1"),
	patchOf("other", "n-low2", "nominatedNodeName=null"),
	patchOf("default", "n-low1", "nominatedNodeName=null"),
	patchOf("default", "v1", setsDisruption),
	deleteOf("default", "v1"),
	patchOf("default", "v2", setsDisruption),
	deleteOf("default", "v2"),
}

// isBackground matches a *actuation.BackgroundError.
func isBackground(err error) bool {
	var bg *actuation.BackgroundError
	return errors.As(err, &bg)
}

var prepareActions = []preempt.Action{
	patchOf("default", "v1", setsDisruption),
	deleteOf("default", "v1"),
	patchOf("default", "v2", setsDisruption),
	deleteOf("default", "v2"),
	patchOf("other", "n-low2", "nominatedNodeName=null"),
	patchOf("default", "n-low1", "nominatedNodeName=null"),
	patchOf("default", "p", "nominatedNodeName=node1"),
}

func forbidden(name string) error {
	return apierrors.NewForbidden(v1.Resource("pods"), name, errors.New("injected"))
}

// failOn returns a reactor failing verb on the named pod with err, times
// times (0: always).
func failOn(name string, err error, times int) k8stesting.ReactionFunc {
	n := 0
	return func(a k8stesting.Action) (bool, runtime.Object, error) {
		var got string
		switch a := a.(type) {
		case k8stesting.PatchAction:
			got = a.GetName()
		case k8stesting.DeleteAction:
			got = a.GetName()
		}
		if got != name || (times > 0 && n >= times) {
			return false, nil, nil
		}
		n++
		return true, nil, err
	}
}

func testPrepareCandidate(t *testing.T, impl preempt.Implementation) {
	tests := []struct {
		name      string
		preemptor *v1.Pod
		// apiPods, when set, replaces the cluster's pods in the API.
		apiPods   func(c *preempt.Cluster) []*v1.Pod
		candidate *preempt.Candidate
		reactors  func(cs *fake.Clientset)
		wantErr   func(error) bool
		want      []preempt.Action
		// Under asynchronous preemption.
		asyncErr func(error) bool
		async    []preempt.Action
	}{
		{
			name:  "victims in victim order, terminating one skipped, lower nominations cleared in cluster order, preemptor nominated",
			want:  prepareActions,
			async: prepareAsyncActions,
		},
		{
			name: "a delete error stops the step",
			reactors: func(cs *fake.Clientset) {
				cs.PrependReactor("delete", "pods", failOn("v2", forbidden("v2"), 0))
			},
			wantErr: apierrors.IsForbidden,
			want:    prepareActions[:4],
			// v2 is the last victim: the others succeeded, so it is tried.
			asyncErr: isBackground,
			async:    prepareAsyncActions,
		},
		{
			name: "a patch error stops the step before the victim's delete",
			reactors: func(cs *fake.Clientset) {
				cs.PrependReactor("patch", "pods", failOn("v1", forbidden("v1"), 0))
			},
			wantErr: apierrors.IsForbidden,
			want:    prepareActions[:1],
			// v1 failing, the last victim is not tried.
			asyncErr: isBackground,
			async:    prepareAsyncActions[:4],
		},
		{
			name: "a victim already gone: NotFound on the patch skips its delete",
			apiPods: func(c *preempt.Cluster) []*v1.Pod {
				return c.Pods[1:] // no v1
			},
			want:  append([]preempt.Action{prepareActions[0]}, prepareActions[2:]...),
			async: append(append([]preempt.Action{}, prepareAsyncActions[:4]...), prepareAsyncActions[5:]...),
		},
		{
			name: "NotFound on a delete is ignored",
			reactors: func(cs *fake.Clientset) {
				cs.PrependReactor("delete", "pods", failOn("v1", apierrors.NewNotFound(v1.Resource("pods"), "v1"), 0))
			},
			want:  prepareActions,
			async: prepareAsyncActions,
		},
		{
			name: "a conflict on a patch is retried",
			reactors: func(cs *fake.Clientset) {
				cs.PrependReactor("patch", "pods", failOn("v1", apierrors.NewConflict(v1.Resource("pods"), "v1", errors.New("injected")), 1))
			},
			want:  append([]preempt.Action{prepareActions[0]}, prepareActions...),
			async: append(append([]preempt.Action{}, prepareAsyncActions[:4]...), prepareAsyncActions[3:]...),
		},
		{
			name: "a failure to clear a nomination is not fatal",
			reactors: func(cs *fake.Clientset) {
				cs.PrependReactor("patch", "pods", failOn("n-low2", forbidden("n-low2"), 0))
			},
			want:     prepareActions,
			asyncErr: isBackground,
			async:    prepareAsyncActions,
		},
		{
			name: "a failure to nominate the preemptor is returned",
			reactors: func(cs *fake.Clientset) {
				cs.PrependReactor("patch", "pods", failOn("p", forbidden("p"), 0))
			},
			wantErr: apierrors.IsForbidden,
			want:    prepareActions,
			// The background work runs all the same.
			asyncErr: apierrors.IsForbidden,
			async:    prepareAsyncActions,
		},
		{
			name:      "a preemptor already nominated to the node is not patched",
			preemptor: pod("default", "p", 10).NominatedNodeName("node1").Obj(),
			want:      prepareActions[:6],
			async:     prepareAsyncActions[1:],
		},
		{
			name:      "a preemptor nominated elsewhere is renominated",
			preemptor: pod("default", "p", 10).NominatedNodeName("node2").Obj(),
			want:      prepareActions,
			async:     prepareAsyncActions,
		},
		{
			name:      "victims are acted on in the candidate's order",
			candidate: &preempt.Candidate{Node: "node1", Victims: []preempt.Victim{vic("default", "v2", 1), vic("default", "v1", 1)}},
			want: append([]preempt.Action{
				patchOf("default", "v2", setsDisruption), deleteOf("default", "v2"),
				patchOf("default", "v1", setsDisruption), deleteOf("default", "v1"),
			}, prepareActions[4:]...),
			async: append(append([]preempt.Action{}, prepareAsyncActions[:3]...),
				patchOf("default", "v2", setsDisruption), deleteOf("default", "v2"),
				patchOf("default", "v1", setsDisruption), deleteOf("default", "v1")),
		},
		{
			name:      "a low-priority preemptor clears no nomination",
			preemptor: pod("default", "p", 0).Obj(),
			want:      append(append([]preempt.Action{}, prepareActions[:4]...), prepareActions[6]),
			async:     append([]preempt.Action{prepareAsyncActions[0]}, prepareAsyncActions[3:]...),
		},
		{
			name:      "a high-priority preemptor clears every lower nomination on the node",
			preemptor: pod("default", "p", 100).Obj(),
			want: append(append([]preempt.Action{}, prepareActions[:4]...),
				patchOf("default", "n-high", "nominatedNodeName=null"),
				patchOf("other", "n-low2", "nominatedNodeName=null"),
				patchOf("default", "n-eq", "nominatedNodeName=null"),
				patchOf("default", "n-low1", "nominatedNodeName=null"),
				prepareActions[6]),
			async: append([]preempt.Action{
				prepareAsyncActions[0],
				patchOf("default", "n-high", "nominatedNodeName=null"),
				patchOf("other", "n-low2", "nominatedNodeName=null"),
				patchOf("default", "n-eq", "nominatedNodeName=null"),
				patchOf("default", "n-low1", "nominatedNodeName=null"),
			}, prepareAsyncActions[3:]...),
		},
		{
			name:      "nominations on another node are not cleared",
			candidate: &preempt.Candidate{Node: "node2", Victims: []preempt.Victim{vic("default", "v3", 1)}},
			want: []preempt.Action{
				patchOf("default", "n-other", "nominatedNodeName=null"),
				patchOf("default", "p", "nominatedNodeName=node2"),
			},
			// The only victim is already terminating: no background work,
			// so no nomination is cleared.
			async: []preempt.Action{patchOf("default", "p", "nominatedNodeName=node2")},
		},
	}
	for _, tt := range tests {
		for _, sync := range []bool{true, false} {
			mode, wantErr, want := "sync", tt.wantErr, tt.want
			if !sync {
				mode, wantErr, want = "async", tt.asyncErr, tt.async
			}
			t.Run(mode+"/"+tt.name, func(t *testing.T) {
				c := prepareCluster()
				preemptor := tt.preemptor
				if preemptor == nil {
					preemptor = pod("default", "p", 10).Obj()
				}
				cand := tt.candidate
				if cand == nil {
					cand = prepareCandidate()
				}
				ev := newEvaluator(t, impl, c)
				api := c
				if tt.apiPods != nil {
					api = &preempt.Cluster{Nodes: c.Nodes, Pods: tt.apiPods(c)}
				}
				cs := harness.NewClientset(api, preemptor)
				if tt.reactors != nil {
					tt.reactors(cs)
				}
				cs.ClearActions()
				req := newRequest(preemptor, unschedulable("node1", "node2"))
				req.Config.Synchronous = sync
				err := ev.PrepareCandidate(context.Background(), cs, cand, req)
				switch {
				case wantErr == nil && err != nil:
					t.Errorf("PrepareCandidate: unexpected error %v", err)
				case wantErr != nil && !wantErr(err):
					t.Errorf("PrepareCandidate: error %v, want one matching %s", err, tt.name)
				}
				if diff := cmp.Diff(want, harness.Actions(cs.Actions())); diff != "" {
					t.Errorf("actions (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestPrepareCandidatePatches pins the patches themselves: the
// DisruptionTarget condition (upstream's TestPreempt checks it on the
// patched pods) and the nomination patches (upstream's
// TestRemoveNominatedNodeName).
func testPrepareCandidatePatches(t *testing.T, impl preempt.Implementation) {
	c := prepareCluster()
	preemptor := pod("default", "p", 10).SchedulerName("my-scheduler").Obj()
	cs := harness.NewClientset(c, preemptor)
	cs.ClearActions()
	if err := newEvaluator(t, impl, c).PrepareCandidate(context.Background(), cs, prepareCandidate(), newRequest(preemptor, unschedulable("node1"))); err != nil {
		t.Fatal(err)
	}
	patches := map[string]string{}
	for _, a := range cs.Actions() {
		if p, ok := a.(k8stesting.PatchAction); ok {
			patches[p.GetNamespace()+"/"+p.GetName()] = string(p.GetPatch())
		}
	}

	var v1Patch struct{ Status v1.PodStatus }
	if err := json.Unmarshal([]byte(patches["default/v1"]), &v1Patch); err != nil {
		t.Fatalf("patch of v1 %q: %v", patches["default/v1"], err)
	}
	wantConditions := []v1.PodCondition{{
		Type:               v1.DisruptionTarget,
		ObservedGeneration: 3,
		Status:             v1.ConditionTrue,
		Reason:             v1.PodReasonPreemptionByScheduler,
		Message:            "my-scheduler: preempting to accommodate a higher priority pod",
	}}
	if diff := cmp.Diff(wantConditions, v1Patch.Status.Conditions, cmpopts.IgnoreFields(v1.PodCondition{}, "LastTransitionTime")); diff != "" {
		t.Errorf("DisruptionTarget condition of v1 (-want +got):\n%s", diff)
	}
	if v1Patch.Status.Conditions[0].LastTransitionTime.IsZero() {
		t.Errorf("DisruptionTarget condition of v1 has no lastTransitionTime")
	}

	want := map[string]string{
		"other/n-low2":   `{"status":{"nominatedNodeName":null}}`,
		"default/n-low1": `{"status":{"nominatedNodeName":null}}`,
		"default/p":      `{"status":{"nominatedNodeName":"node1"}}`,
	}
	got := map[string]string{}
	for k := range want {
		got[k] = patches[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nomination patches (-want +got):\n%s", diff)
	}

	// After the step the API holds: v1, v2 gone, v3 untouched, nominations.
	pods, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nominated := map[string]string{}
	for _, p := range pods.Items {
		nominated[p.Namespace+"/"+p.Name] = p.Status.NominatedNodeName
	}
	wantNominated := map[string]string{
		"default/v3": "", "default/n-high": "node1", "other/n-low2": "", "default/n-eq": "node1",
		"default/n-low1": "", "default/n-other": "node2", "default/p": "node1",
	}
	if diff := cmp.Diff(wantNominated, nominated); diff != "" {
		t.Errorf("pods in the API after PrepareCandidate, with their nominations (-want +got):\n%s", diff)
	}
}

// TestUpstreamPrepareCandidate ports executor_test.go's TestPrepareCandidate
// (synchronous preemption, async API calls off) with upstream's reactors:
// deleting or patching "fail-victim" fails, "not-found-victim" is NotFound,
// every other patch or delete succeeds without touching the tracker.
// Skipped: "podgroup preemptor, one victim without condition" and
// "podgroup preemptor, one victim, but pod deletion failed" (pod groups).
// Upstream's failVictim, notFoundVictim1 and victim1 share the UID
// "victim1"; here each has its own, as a cluster requires.
func testUpstreamPrepareCandidate(t *testing.T, impl preempt.Implementation) {
	const (
		node1Name            = "node1"
		defaultSchedulerName = "default-scheduler"
		midPriority          = int32(100)
		highPriority         = int32(1000)
	)
	cond := v1.PodCondition{
		Type:    v1.DisruptionTarget,
		Status:  v1.ConditionTrue,
		Reason:  v1.PodReasonPreemptionByScheduler,
		Message: fmt.Sprintf("%s: preempting to accommodate a higher priority pod", defaultSchedulerName),
	}
	container := []v1.Container{{Name: "container1"}}
	mk := func(name, uid string, prio int32) *testobj.PodWrapper {
		return testobj.MakePod().Name(name).UID(uid).Node(node1Name).SchedulerName(defaultSchedulerName).Priority(prio).Containers(container)
	}
	victim1 := mk("victim1", "victim1", midPriority).Obj()
	notFoundVictim1 := mk("not-found-victim", "not-found-victim", midPriority).Obj()
	failVictim := mk("fail-victim", "fail-victim", midPriority).Obj()
	victim2 := mk("victim2", "victim2", 50000).Obj()
	victim1WithMatchingCondition := mk("victim1", "victim1", midPriority).Conditions([]v1.PodCondition{cond}).Obj()
	failVictim1WithMatchingCondition := mk("fail-victim", "fail-victim", midPriority).Conditions([]v1.PodCondition{cond}).Obj()
	preemptor := testobj.MakePod().Name("preemptor").UID("preemptor").SchedulerName(defaultSchedulerName).Priority(highPriority).Containers(container).Obj()
	victimWithDeletionTimestamp := victim1.DeepCopy()
	victimWithDeletionTimestamp.Name = "victim1-with-deletion-timestamp"
	victimWithDeletionTimestamp.UID = "victim1-with-deletion-timestamp"
	victimWithDeletionTimestamp.DeletionTimestamp = &metav1.Time{Time: now.Add(-100 * time.Second)}
	victimWithDeletionTimestamp.Finalizers = []string{"test"}

	errDeletePodFailed := errors.New("delete pod failed")
	errPatchStatusFailed := errors.New("patch pod status failed")
	nominate := patchOf("", "preemptor", "nominatedNodeName=node1")

	tests := []struct {
		name     string
		node     string
		victims  []*v1.Pod
		testPods []*v1.Pod // in the API
		wantErr  string
		want     []preempt.Action
	}{
		{name: "no victims", testPods: []*v1.Pod{victim1}},
		{name: "one victim without condition", node: node1Name, victims: []*v1.Pod{victim1}, testPods: []*v1.Pod{victim1},
			want: []preempt.Action{patchOf("", "victim1", setsDisruption), deleteOf("", "victim1"), nominate}},
		{name: "one victim, but victim is already being deleted", node: node1Name, victims: []*v1.Pod{victimWithDeletionTimestamp},
			testPods: []*v1.Pod{victimWithDeletionTimestamp}, want: []preempt.Action{nominate}},
		{name: "one victim, but victim is already deleted", node: node1Name, victims: []*v1.Pod{notFoundVictim1},
			want: []preempt.Action{patchOf("", "not-found-victim", setsDisruption), nominate}},
		{name: "one victim with same condition", node: node1Name, victims: []*v1.Pod{victim1WithMatchingCondition},
			testPods: []*v1.Pod{victim1WithMatchingCondition}, want: []preempt.Action{deleteOf("", "victim1"), nominate}},
		{name: "one victim, not-found victim error is ignored when patching", node: node1Name, victims: []*v1.Pod{victim1WithMatchingCondition},
			want: []preempt.Action{deleteOf("", "victim1"), nominate}},
		{name: "one victim, but pod deletion failed", node: node1Name, victims: []*v1.Pod{failVictim1WithMatchingCondition},
			wantErr: errDeletePodFailed.Error(), want: []preempt.Action{deleteOf("", "fail-victim")}},
		{name: "one victim, not-found victim error is ignored when deleting", node: node1Name, victims: []*v1.Pod{victim1},
			want: []preempt.Action{patchOf("", "victim1", setsDisruption), deleteOf("", "victim1"), nominate}},
		{name: "one victim, but patch pod failed", node: node1Name, victims: []*v1.Pod{failVictim},
			wantErr: errPatchStatusFailed.Error(), want: []preempt.Action{patchOf("", "fail-victim", setsDisruption)}},
		{
			// Upstream (parallel) accepts victim2 deleted or not; in victim
			// order the first failure stops before victim2.
			name: "two victims without condition, one passes successfully and the second fails", node: node1Name,
			victims: []*v1.Pod{failVictim, victim2}, testPods: []*v1.Pod{victim1},
			wantErr: errPatchStatusFailed.Error(), want: []preempt.Action{patchOf("", "fail-victim", setsDisruption)},
		},
	}
	for _, tt := range tests {
		for _, sync := range []bool{true, false} {
			// Under asynchronous preemption (upstream's test runs both) the
			// nomination comes first, the victims in the background, and
			// a failure is reported as a background error (upstream
			// activates the preemptor) instead of returned.
			mode, wantErr, want := "sync", tt.wantErr, tt.want
			if !sync {
				mode, want = "async", nominateFirst(tt.want, nominate, tt.node)
				if tt.wantErr != "" {
					wantErr = (&actuation.BackgroundError{Victims: []string{tt.wantErr}}).Error()
				}
			}
			t.Run(mode+"/"+tt.name, func(t *testing.T) {
				cand := &preempt.Candidate{Node: tt.node}
				for _, v := range tt.victims {
					cand.Victims = append(cand.Victims, vic(v.Namespace, v.Name, *v.Spec.Priority))
				}
				c := &preempt.Cluster{Nodes: []*v1.Node{testobj.MakeNode().Name(node1Name).Capacity(nil).Obj()}, Pods: tt.victims}
				ev := newEvaluator(t, impl, c)
				cs := harness.NewClientset(&preempt.Cluster{Pods: tt.testPods}, preemptor)
				cs.PrependReactor("delete", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
					switch action.(k8stesting.DeleteAction).GetName() {
					case "fail-victim":
						return true, nil, errDeletePodFailed
					case "not-found-victim":
						return true, nil, apierrors.NewNotFound(v1.Resource("pods"), "not-found-victim")
					}
					return true, nil, nil
				})
				cs.PrependReactor("patch", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
					switch action.(k8stesting.PatchAction).GetName() {
					case "fail-victim":
						return true, nil, errPatchStatusFailed
					case "not-found-victim":
						return true, nil, apierrors.NewNotFound(v1.Resource("pods"), "not-found-victim")
					}
					return true, nil, nil
				})
				cs.ClearActions()
				req := newRequest(preemptor, unschedulable(node1Name))
				req.Config.Synchronous = sync
				err := ev.PrepareCandidate(context.Background(), cs, cand, req)
				gotErr := ""
				if err != nil {
					gotErr = err.Error()
				}
				if diff := cmp.Diff(wantErr, gotErr); diff != "" {
					t.Errorf("PrepareCandidate error (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(want, harness.Actions(cs.Actions())); diff != "" {
					t.Errorf("actions (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// nominateFirst is the synchronous actions want with the nomination moved
// first; a failed synchronous step (no nomination in want) is nominated
// first all the same, as asynchronous preemption nominates before any
// victim is touched.
func nominateFirst(want []preempt.Action, nominate preempt.Action, node string) []preempt.Action {
	if node == "" {
		return want
	}
	out := []preempt.Action{nominate}
	for _, a := range want {
		if !cmp.Equal(a, nominate) {
			out = append(out, a)
		}
	}
	return out
}

// TestUpstreamRemoveNominatedNodeName ports executor_test.go's
// TestRemoveNominatedNodeName through PrepareCandidate (async API calls
// off).
func testUpstreamRemoveNominatedNodeName(t *testing.T, impl preempt.Implementation) {
	tests := []struct {
		name                     string
		currentNominatedNodeName string
		expectedPatchData        string // "" for no patch request
	}{
		{name: "Should make patch request to clear node name", currentNominatedNodeName: "node1",
			expectedPatchData: `{"status":{"nominatedNodeName":null}}`},
		// A pod without nomination is not one of the node's nominated pods.
		{name: "Should not make patch request if nominated node is already cleared", currentNominatedNodeName: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			foo := pod("", "foo", 0).NominatedNodeName(tt.currentNominatedNodeName).Obj()
			c := &preempt.Cluster{Nodes: []*v1.Node{node("node1", "1").Obj()}, Pods: []*v1.Pod{foo}}
			preemptor := pod("default", "p", 10).NominatedNodeName("node1").Obj()
			cs := harness.NewClientset(c, preemptor)
			cs.ClearActions()
			if err := newEvaluator(t, impl, c).PrepareCandidate(context.Background(), cs, &preempt.Candidate{Node: "node1"},
				synchronous(newRequest(preemptor, unschedulable("node1")))); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range cs.Actions() {
				if p, ok := a.(k8stesting.PatchAction); ok && p.GetName() == "foo" {
					got = append(got, string(p.GetPatch()))
				}
			}
			var want []string
			if tt.expectedPatchData != "" {
				want = []string{tt.expectedPatchData}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("patches of foo (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUpstreamPreemptPod ports executor_test.go's TestPreemptPod case
// "victim is not in waiting/preBind pods, pod should be deleted" (pod
// preemptor). Skipped: "victim is in preBind, context should be cancelled"
// and "victim is in waiting pods, it should be rejected (no calls to
// apiserver)" (no waiting or preBind pods modelled), and the pod-group
// variants.
func testUpstreamPreemptPod(t *testing.T, impl preempt.Implementation) {
	preemptorPod := testobj.MakePod().Name("p").UID("p").Priority(1000).Obj()
	victimPod := testobj.MakePod().Name("v").UID("v").Node("fake-node").Priority(100).Obj()
	c := &preempt.Cluster{Nodes: []*v1.Node{testobj.MakeNode().Name("fake-node").Capacity(nil).Obj()}, Pods: []*v1.Pod{victimPod}}
	cs := harness.NewClientset(c, preemptorPod)
	cs.ClearActions()
	if err := newEvaluator(t, impl, c).PrepareCandidate(context.Background(), cs,
		&preempt.Candidate{Node: "fake-node", Victims: []preempt.Victim{vic("", "v", 100)}},
		newRequest(preemptorPod, unschedulable("fake-node"))); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range cs.Actions() {
		if a.GetResource().Resource == "pods" && a.GetVerb() != "get" {
			if n, ok := a.(interface{ GetName() string }); ok && n.GetName() == "v" {
				got = append(got, a.GetVerb())
			}
		}
	}
	if diff := cmp.Diff([]string{"patch", "delete"}, got); diff != "" {
		t.Errorf("API calls on the victim (-want +got):\n%s", diff)
	}
}
