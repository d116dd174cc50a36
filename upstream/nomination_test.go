package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/schedulerconfig"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
)

// nominationCycle is one scheduling cycle of kube-scheduler v1.37.2 itself
// (scheduler.New with the default profile under gates, informers over a
// fake clientset holding objects, one Scheduler.ScheduleOne), with
// everything it set off waited for: the asynchronous executor's goroutine
// (until victims pods are deleted) and, under SchedulerAsyncAPICalls, the
// API dispatcher. entity is the pod or pod group the cycle must pop
// (namespace/name). holdDispatcher starts the dispatcher only once the
// cycle and the executor are done, so every call the cycle queued is
// still pending when the next one is added (a dispatcher running behind).
type nominationCycle struct {
	gates          map[string]bool
	objects        []runtime.Object
	entity         string
	victims        int
	holdDispatcher bool
}

// nominationOutcome is what the nominator answered for each node while
// the entity was in flight (when the scheduling algorithm first
// returned), and what the cycle left: each pod's API calls in order
// (harness.Action's String), each pod's status.nominatedNodeName in the
// API server (the fake clientset's object; "" when cleared, absent when
// deleted), and each pod's node in the scheduler's nominator.
type nominationOutcome struct {
	inFlight  []string
	calls     map[string][]string
	api       map[string]string
	nominator map[string]string
}

func (c nominationCycle) run(t *testing.T) nominationOutcome {
	t.Helper()
	overrides := featuregatetesting.FeatureOverrides{}
	for k, v := range c.gates {
		overrides[featuregate.Feature(k)] = v
	}
	featuregatetesting.SetFeatureGatesDuringTest(t, utilfeature.DefaultFeatureGate, overrides)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := klog.FromContext(ctx)
	cs := fake.NewClientset(c.objects...)
	// The fake tracker keeps an object's resourceVersion as it was given,
	// and the scheduler drops an update event whose resourceVersion did
	// not change (updatePodInSchedulingQueue): a pod's status patch is
	// applied here and stored with a new resourceVersion, as the API
	// server would, so that it reaches the queue and the nominator.
	var patchMu sync.Mutex
	resourceVersion := 0
	pods := v1.SchemeGroupVersion.WithResource("pods")
	cs.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa := a.(k8stesting.PatchAction)
		if pa.GetPatchType() != types.StrategicMergePatchType {
			return false, nil, nil
		}
		patchMu.Lock()
		defer patchMu.Unlock()
		obj, err := cs.Tracker().Get(pods, pa.GetNamespace(), pa.GetName())
		if err != nil {
			return true, nil, err
		}
		old, err := json.Marshal(obj)
		if err != nil {
			return true, nil, err
		}
		patched, err := strategicpatch.StrategicMergePatch(old, pa.GetPatch(), &v1.Pod{})
		if err != nil {
			return true, nil, err
		}
		p := &v1.Pod{}
		if err := json.Unmarshal(patched, p); err != nil {
			return true, nil, err
		}
		resourceVersion++
		p.ResourceVersion = strconv.Itoa(resourceVersion)
		return true, p, cs.Tracker().Update(pods, p, p.Namespace)
	})
	var nodes []string
	for _, o := range c.objects {
		if n, ok := o.(*v1.Node); ok {
			nodes = append(nodes, n.Name)
		}
	}
	informerFactory := scheduler.NewInformerFactory(cs, 0, nil)
	cfg, err := schedulerconfig.DefaultUnderGates()
	if err != nil {
		t.Fatal(err)
	}
	recorder := func(string) events.EventRecorderLogger { return &events.FakeRecorder{} }
	sched, err := scheduler.New(ctx, cs, informerFactory, nil, recorder, scheduler.WithProfiles(cfg.Profiles...))
	if err != nil {
		t.Fatal(err)
	}
	defer sched.SchedulingQueue.Close()
	informerFactory.Start(ctx.Done())
	defer informerFactory.Shutdown()
	defer cancel() // before Shutdown, which waits for the informers
	informerFactory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		t.Fatal(err)
	}
	if sched.APIDispatcher != nil {
		if !c.holdDispatcher {
			sched.APIDispatcher.Run(logger)
		}
		defer sched.APIDispatcher.Close()
	}

	// The cycle pops the highest-priority entity: check it is entity.
	var popped string
	nextEntity := sched.NextEntity
	sched.NextEntity = func(logger klog.Logger) (framework.QueuedEntityInfo, error) {
		e, err := nextEntity(logger)
		switch e := e.(type) {
		case *framework.QueuedPodInfo:
			popped = preempt.Key(e.Pod.Namespace, e.Pod.Name)
		case *framework.QueuedPodGroupInfo:
			popped = preempt.Key(e.Namespace, e.Name)
		}
		return e, err
	}
	// Pop blocks while the queue is empty: closing it ends the wait.
	defer time.AfterFunc(10*time.Second, sched.SchedulingQueue.Close).Stop()
	// What the nominator answers while the entity is in flight, as the
	// executor reads it: taken when the scheduling algorithm first
	// returns (before PostFilter, so before the executor's own calls
	// reach the nominator through the informer).
	var inFlight []string
	schedulePod := sched.SchedulePod
	sched.SchedulePod = func(ctx context.Context, f framework.Framework, state fwk.CycleState, pi *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
		res, err := schedulePod(ctx, f, state, pi)
		if inFlight == nil {
			inFlight = []string{}
			for _, n := range nodes {
				for _, np := range sched.SchedulingQueue.NominatedPodsForNode(n) {
					p := np.GetPod()
					inFlight = append(inFlight, fmt.Sprintf("%s on %s: priority %d, %d containers, nominatedNodeName %q",
						p.Name, n, corev1helpers.PodPriority(p), len(p.Spec.Containers), p.Status.NominatedNodeName))
				}
			}
		}
		return res, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sched.ScheduleOne(ctx)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("ScheduleOne did not return within 30s")
	}
	if popped != c.entity {
		t.Fatalf("the cycle popped %q, want %q", popped, c.entity)
	}

	deletions := func() int {
		n := 0
		for _, a := range harness.Actions(cs.Actions()) {
			if a.Verb == "delete" {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(30 * time.Second)
	for deletions() < c.victims {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d victims deleted after 30s", deletions(), c.victims)
		}
		time.Sleep(time.Millisecond)
	}
	if sched.APIDispatcher != nil && c.holdDispatcher {
		sched.APIDispatcher.Run(logger)
	}

	// The dispatcher's calls and the informers' events: wait until
	// neither the calls nor the nominator change for 300ms.
	read := func() nominationOutcome {
		out := nominationOutcome{calls: map[string][]string{}, api: map[string]string{}, nominator: map[string]string{}}
		for _, a := range harness.Actions(cs.Actions()) {
			out.calls[a.Name] = append(out.calls[a.Name], a.String())
		}
		pods, err := cs.Tracker().List(v1.SchemeGroupVersion.WithResource("pods"), v1.SchemeGroupVersion.WithKind("Pod"), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.(*v1.PodList).Items {
			if p.Spec.NodeName == "" {
				out.api[p.Name] = p.Status.NominatedNodeName
			}
		}
		for _, n := range nodes {
			for _, pi := range sched.SchedulingQueue.NominatedPodsForNode(n) {
				out.nominator[pi.GetPod().Name] = n
			}
		}
		return out
	}
	last := read()
	last.inFlight = inFlight
	for stable := time.Now(); time.Since(stable) < 300*time.Millisecond; {
		if time.Now().After(deadline) {
			t.Fatal("the calls and the nominator did not settle within 30s")
		}
		time.Sleep(20 * time.Millisecond)
		now := read()
		now.inFlight = inFlight
		if !cmp.Equal(now, last, cmp.AllowUnexported(nominationOutcome{})) {
			last, stable = now, time.Now()
		}
	}
	return last
}

func (o nominationOutcome) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  in flight, the nominator answers: %s\n", strings.Join(o.inFlight, "; "))
	for _, name := range slices.Sorted(maps.Keys(o.calls)) {
		fmt.Fprintf(&b, "  %s: %s\n", name, strings.Join(o.calls[name], "; "))
	}
	fmt.Fprintf(&b, "  API nominatedNodeName %v; nominator %v", o.api, o.nominator)
	return b.String()
}

// pendingPod is a pending pgPod of the default scheduler nominated to
// node ("" for none).
func pendingPod(name, group string, prio int32, cpu, node string) *testobj.PodWrapper {
	// the scheduler queues only its profiles' pods
	return pgPod(name, "", group, prio, cpu).SchedulerName(v1.DefaultSchedulerName).NominatedNodeName(node)
}

// Question: a preemptor nominated to n1 by an earlier attempt preempts
// again on n1. The executor clears the nominations of the pods of lower
// priority nominated to n1 (getLowerPriorityNominatedPods: the
// nominator's pods for n1 below the preemptor's priority). The nominator
// answers for the preemptor itself, in flight, with a stub of priority 0
// and no status (nominatedPodToInfo, podRef.toPod). Does the cycle clear
// the preemptor's own nomination?
//
// n1 (1 CPU) runs v (priority 0, 1 CPU); low (priority 5) and p
// (priority 10), 1 CPU each, are pending and nominated to n1.
func TestSchedulerPreemptorKeepsItsOwnNomination(t *testing.T) {
	objects := func() []runtime.Object {
		return []runtime.Object{pgNode("n1", "1"), pgPod("v", "n1", "", 0, "1").Obj(),
			pendingPod("low", "", 5, "1", "n1").Obj(), pendingPod("p", "", 10, "1", "n1").Obj()}
	}
	want := nominationOutcome{
		// The preemptor itself, in flight, is a stub: priority 0 (below
		// its own 10, so the executor takes it for a pod to clear), no
		// status, so clearNominatedNodeName sends nothing for it (no
		// patch without the APICacher; a call with no effect, dropped,
		// with it).
		inFlight: []string{`low on n1: priority 5, 1 containers, nominatedNodeName "n1"`,
			`p on n1: priority 0, 0 containers, nominatedNodeName ""`},
		calls: map[string][]string{
			"v":   {"patch default/v/status conditions[DisruptionTarget]", "delete default/v"},
			"low": {"patch default/low/status nominatedNodeName=null"},
			// The failure handler's patch: the condition only, the
			// nomination is n1 already.
			"p": {"patch default/p/status conditions[PodScheduled]"},
		},
		api: map[string]string{"low": "", "p": "n1"},
		// low's cleared nomination reached the nominator through
		// the informer.
		nominator: map[string]string{"p": "n1"},
	}
	for _, tc := range []struct {
		name  string
		gates map[string]bool
		hold  bool
	}{
		{name: "synchronous", gates: map[string]bool{"SchedulerAsyncPreemption": false}},
		{name: "asynchronous", gates: map[string]bool{"SchedulerAsyncPreemption": true}},
		{name: "synchronous, APICacher", gates: map[string]bool{"SchedulerAsyncPreemption": false, "SchedulerAsyncAPICalls": true}},
		{name: "asynchronous, APICacher", gates: map[string]bool{"SchedulerAsyncPreemption": true, "SchedulerAsyncAPICalls": true}},
		{name: "synchronous, APICacher behind", gates: map[string]bool{"SchedulerAsyncPreemption": false, "SchedulerAsyncAPICalls": true}, hold: true},
		{name: "asynchronous, APICacher behind", gates: map[string]bool{"SchedulerAsyncPreemption": true, "SchedulerAsyncAPICalls": true}, hold: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := nominationCycle{gates: tc.gates, objects: objects(), entity: "default/p", victims: 1, holdDispatcher: tc.hold}.run(t)
			t.Logf("%s:\n%s", tc.name, got)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(nominationOutcome{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The same question for a gang (GenericWorkload, PodGroupPostFilter): the
// executor clears the nominations of lower priority to the candidate's
// node, and the gang's candidate is named "cluster"
// (PodGroupEvaluator.Preempt), so it reads NominatedPodsForNode("cluster").
// Gang g (priority 10, minCount 2): m0 pinned to n1 and nominated there by
// an earlier attempt, m1 pinned to n2; n1 and n2 (1 CPU) each run a
// victim of 600m at priority 0; low (priority 5) is pending, nominated to
// n1. With a node named cluster instead of n1, m0 and low are nominated
// there.
func TestSchedulerGangKeepsItsOwnNominations(t *testing.T) {
	objects := func(first string) []runtime.Object {
		return []runtime.Object{pgNode(first, "1"), pgNode("n2", "1"),
			pgPod("v1", first, "", 0, "600m").Obj(), pgPod("v2", "n2", "", 0, "600m").Obj(),
			pendingPod("low", "", 5, "600m", first).Obj(), gang("g", 10, 2),
			pendingPod("m0", "g", 10, "600m", first).HostnameSelector(first).Obj(), pendingPod("m1", "g", 10, "600m", "").HostnameSelector("n2").Obj()}
	}
	calls := func() map[string][]string {
		return map[string][]string{
			"v1": {"patch default/v1/status conditions[DisruptionTarget]", "delete default/v1"},
			"v2": {"patch default/v2/status conditions[DisruptionTarget]", "delete default/v2"},
			// The failure handler's patches: m0 is nominated to n1
			// already, m1 newly to n2.
			"m0": {"patch default/m0/status conditions[PodScheduled]"},
			"m1": {"patch default/m1/status conditions[PodScheduled] nominatedNodeName=n2"},
		}
	}
	// No node is named cluster: nothing is cleared, not low's nomination
	// to the node the gang takes, and not m0's own.
	noClusterNode := nominationOutcome{
		// The members, in flight, are stubs as the single preemptor is.
		inFlight:  []string{`low on n1: priority 5, 1 containers, nominatedNodeName "n1"`, `m0 on n1: priority 0, 0 containers, nominatedNodeName ""`},
		calls:     calls(),
		api:       map[string]string{"low": "n1", "m0": "n1", "m1": "n2"},
		nominator: map[string]string{"low": "n1", "m0": "n1", "m1": "n2"},
	}
	// A node named cluster: low's nomination there is cleared; m0's stub
	// is below the gang's priority too, but has no nominated node, and
	// clearNominatedNodeName sends nothing for it.
	clusterNode := nominationOutcome{
		inFlight: []string{`low on cluster: priority 5, 1 containers, nominatedNodeName "cluster"`, `m0 on cluster: priority 0, 0 containers, nominatedNodeName ""`},
		calls:    calls(),
		api:      map[string]string{"low": "", "m0": "cluster", "m1": "n2"},
		// low's cleared nomination reached the nominator through the
		// informer.
		nominator: map[string]string{"m0": "cluster", "m1": "n2"},
	}
	clusterNode.calls["low"] = []string{"patch default/low/status nominatedNodeName=null"}
	for _, tc := range []struct {
		name  string
		gates map[string]bool
		hold  bool
	}{
		{name: "synchronous", gates: map[string]bool{"SchedulerAsyncPreemption": false}},
		{name: "asynchronous", gates: map[string]bool{"SchedulerAsyncPreemption": true}},
		{name: "synchronous, APICacher", gates: map[string]bool{"SchedulerAsyncPreemption": false, "SchedulerAsyncAPICalls": true}},
		{name: "asynchronous, APICacher", gates: map[string]bool{"SchedulerAsyncPreemption": true, "SchedulerAsyncAPICalls": true}},
		{name: "synchronous, APICacher behind", gates: map[string]bool{"SchedulerAsyncPreemption": false, "SchedulerAsyncAPICalls": true}, hold: true},
		{name: "asynchronous, APICacher behind", gates: map[string]bool{"SchedulerAsyncPreemption": true, "SchedulerAsyncAPICalls": true}, hold: true},
	} {
		gates := maps.Clone(tc.gates)
		gates["GenericWorkload"] = true
		for _, first := range []string{"n1", "cluster"} {
			t.Run(tc.name+", "+first, func(t *testing.T) {
				got := nominationCycle{gates: gates, objects: objects(first), entity: "default/g", victims: 2, holdDispatcher: tc.hold}.run(t)
				t.Logf("%s, %s:\n%s", tc.name, first, got)
				want := noClusterNode
				if first == "cluster" {
					want = clusterNode
				}
				if diff := cmp.Diff(want, got, cmp.AllowUnexported(nominationOutcome{})); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	}
}
