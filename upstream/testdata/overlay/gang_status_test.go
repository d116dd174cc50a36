// This file is not part of preemptbench's build: scripts/upstream-overlay.sh
// lays it over k8s.io/kubernetes v1.37.2's pkg/scheduler so that it runs
// inside that package. It runs the scheduler's own root pod-group
// algorithm (runRootSchedulingAlgorithm, what the function handed to
// PodGroupPostFilter returns) on failing gangs and composites, and checks
// the status messages the project's implementations reproduce
// (reference/gang.go, upstream/gang.go, optimized/gang.go).

package scheduler

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	clientsetfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/gangscheduling"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/topologyaware"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/profile"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
	"k8s.io/utils/ptr"
)

type gsMember struct{ group, name string }

type gsCase struct {
	name       string
	tas        bool
	composite  *schedulingv1alpha3.CompositePodGroup
	groups     []*schedulingv1beta1.PodGroup
	members    []gsMember
	wantStatus string
}

func gsGroup(name string, minCount int32, parent string) *schedulingv1beta1.PodGroup {
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("pg-" + name)},
		Spec: schedulingv1beta1.PodGroupSpec{Priority: ptr.To[int32](10),
			SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}}}}
	if parent != "" {
		pg.Spec.ParentCompositePodGroupName = ptr.To(parent)
	}
	return pg
}

func gsComposite(minGroupCount int32) *schedulingv1alpha3.CompositePodGroup {
	cpg := &schedulingv1alpha3.CompositePodGroup{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "default", UID: "job"},
		Spec: schedulingv1alpha3.CompositePodGroupSpec{Priority: ptr.To[int32](10)}}
	if minGroupCount > 0 {
		cpg.Spec.SchedulingPolicy.Gang = &schedulingv1alpha3.CompositeGangSchedulingPolicy{MinGroupCount: minGroupCount}
	} else {
		cpg.Spec.SchedulingPolicy.Basic = &schedulingv1alpha3.CompositeBasicSchedulingPolicy{}
	}
	return cpg
}

// Two empty nodes of 1 CPU; every member asks 600m, so two members fit.
func TestPreemptbenchGangStatuses(t *testing.T) {
	for _, tc := range []gsCase{
		{name: "gang fails in the loop", groups: []*schedulingv1beta1.PodGroup{gsGroup("g", 3, "")},
			members: []gsMember{{"g", "m0"}, {"g", "m1"}, {"g", "m2"}}, wantStatus: "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"},
		{name: "gang fails before the loop", groups: []*schedulingv1beta1.PodGroup{gsGroup("g", 4, "")},
			members: []gsMember{{"g", "m0"}, {"g", "m1"}, {"g", "m2"}}, wantStatus: "pod group is unschedulable, minCount (4) cannot be satisfied: 0 scheduled, 3 remaining"},
		{name: "gang fails in the loop, TAS", tas: true, groups: []*schedulingv1beta1.PodGroup{gsGroup("g", 3, "")},
			members: []gsMember{{"g", "m0"}, {"g", "m1"}, {"g", "m2"}}, wantStatus: "pod group is unschedulable, 0/1 placements are available, first placement status: minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"},
		{name: "gang fails before the loop, TAS", tas: true, groups: []*schedulingv1beta1.PodGroup{gsGroup("g", 4, "")},
			members: []gsMember{{"g", "m0"}, {"g", "m1"}, {"g", "m2"}}, wantStatus: "pod group is unschedulable, 0/1 placements are available, first placement status: pod group is unschedulable"},
		{name: "gang fits, TAS", tas: true, groups: []*schedulingv1beta1.PodGroup{gsGroup("g", 2, "")},
			members: []gsMember{{"g", "m0"}, {"g", "m1"}}, wantStatus: ""},
		{name: "composite gang fails", tas: true, composite: gsComposite(2),
			groups:  []*schedulingv1beta1.PodGroup{gsGroup("a", 1, "job"), gsGroup("b", 2, "job")},
			members: []gsMember{{"a", "a0"}, {"b", "b0"}, {"b", "b1"}}, wantStatus: "pod group is unschedulable, 0/1 placements are available, first placement status: minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"},
		{name: "composite gang too few children", tas: true, composite: gsComposite(3),
			groups:  []*schedulingv1beta1.PodGroup{gsGroup("a", 1, "job"), gsGroup("b", 1, "job")},
			members: []gsMember{{"a", "a0"}, {"b", "b0"}}, wantStatus: "pod group is unschedulable, 0/1 placements are available, first placement status: minCount (3) cannot be satisfied: 0 scheduled, 2 remaining"},
		{name: "composite basic succeeds with a failed child", tas: true, composite: gsComposite(0),
			groups:  []*schedulingv1beta1.PodGroup{gsGroup("a", 1, "job"), gsGroup("b", 2, "job")},
			members: []gsMember{{"a", "a0"}, {"b", "b0"}, {"b", "b1"}}, wantStatus: ""},
		{name: "composite gang stops at its first failed child", tas: true, composite: gsComposite(2),
			groups:  []*schedulingv1beta1.PodGroup{gsGroup("a", 3, "job"), gsGroup("b", 1, "job")},
			members: []gsMember{{"a", "a0"}, {"a", "a1"}, {"a", "a2"}, {"b", "b0"}}, wantStatus: "pod group is unschedulable, 0/1 placements are available, first placement status: minCount (2) cannot be satisfied: 0 scheduled, 1 remaining"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := gsRun(t, tc)
			t.Logf("%s: status %q", tc.name, got)
			if got != tc.wantStatus {
				t.Errorf("status %q, want %q", got, tc.wantStatus)
			}
		})
	}
}

func gsRun(t *testing.T, tc gsCase) string {
	featuregatetesting.SetFeatureGatesDuringTest(t, utilfeature.DefaultFeatureGate, featuregatetesting.FeatureOverrides{
		features.CompositePodGroup:               tc.tas,
		features.GenericWorkload:                 true,
		features.TopologyAwareWorkloadScheduling: tc.tas,
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := klog.FromContext(ctx)
	const ns = "default"
	cache := internalcache.New(ctx, nil, true, tc.tas)
	var objs []runtime.Object
	for _, name := range []string{"n1", "n2"} {
		n := st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "1", v1.ResourcePods: "10"}).Obj()
		cache.AddNode(logger, n)
		objs = append(objs, n)
	}
	if tc.composite != nil {
		cache.AddCompositePodGroup(logger, tc.composite)
		objs = append(objs, tc.composite)
	}
	byName := map[string]*schedulingv1beta1.PodGroup{}
	for _, pg := range tc.groups {
		cache.AddPodGroup(pg)
		objs = append(objs, pg)
		byName[pg.Name] = pg
	}
	queued := map[fwk.EntityKey][]*framework.QueuedPodInfo{}
	members := map[string][]*v1.Pod{}
	var all []*v1.Pod
	for _, m := range tc.members {
		p := st.MakePod().Namespace(ns).Name(m.name).UID(m.name).PodGroupName(m.group).Priority(10).Req(map[v1.ResourceName]string{v1.ResourceCPU: "600m"}).Obj()
		cache.AddPodGroupMember(p)
		key := fwk.PodGroupKey(ns, m.group)
		queued[key] = append(queued[key], &framework.QueuedPodInfo{PodInfo: &framework.PodInfo{Pod: p}})
		members[m.group] = append(members[m.group], p)
		all = append(all, p)
		objs = append(objs, p)
	}
	client := clientsetfake.NewSimpleClientset(objs...)
	informerFactory := informers.NewSharedInformerFactory(client, 0)
	snapshot := internalcache.NewEmptySnapshot()
	fts := feature.Features{EnableGenericWorkload: true, EnableCompositePodGroup: tc.tas, EnableTopologyAwareWorkloadScheduling: tc.tas}
	gang := func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return gangscheduling.New(ctx, obj, h, fts)
	}
	registry := []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
		tf.RegisterPluginAsExtensions(noderesources.Name, frameworkruntime.FactoryAdapter(fts, noderesources.NewFit), "PreFilter", "Filter"),
		tf.RegisterPermitPlugin(gangscheduling.Name, gang),
		tf.RegisterPluginAsExtensions(gangscheduling.Name, gang, "PlacementFeasible"),
	}
	if tc.tas {
		registry = append(registry, tf.RegisterPluginAsExtensions(topologyaware.Name, frameworkruntime.FactoryAdapter(fts, topologyaware.New), "PlacementGenerate"))
	}
	queue := internalqueue.NewSchedulingQueue(nil, informerFactory)
	schedFwk, err := tf.NewFramework(ctx, registry, "test-scheduler",
		frameworkruntime.WithInformerFactory(informerFactory),
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithMutableSnapshotLister(snapshot),
		frameworkruntime.WithPodNominator(queue),
		frameworkruntime.WithPodActivator(queue),
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithEventRecorder(events.NewFakeRecorder(100)),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
		frameworkruntime.WithPodsInPreBind(frameworkruntime.NewPodsInPreBindMap()),
		frameworkruntime.WithPodGroupManager(cache),
	)
	if err != nil {
		t.Fatal(err)
	}
	informerFactory.Start(ctx.Done())
	informerFactory.WaitForCacheSync(ctx.Done())
	sched := &Scheduler{
		Profiles:         profile.Map{"test-scheduler": schedFwk},
		SchedulingQueue:  internalqueue.NewTestQueue(ctx, nil),
		Cache:            cache,
		client:           client,
		nodeInfoSnapshot: snapshot,
	}
	sched.SchedulePod = sched.schedulePod
	var root *framework.PodGroupInfo
	if tc.composite != nil {
		root = &framework.PodGroupInfo{Namespace: ns, Name: tc.composite.Name, Type: fwk.CompositePodGroupKeyType, UnscheduledPods: all, CompositePodGroup: tc.composite}
		for _, pg := range tc.groups {
			root.Children = append(root.Children, &framework.PodGroupInfo{Namespace: ns, Name: pg.Name, Type: fwk.PodGroupKeyType, PodGroup: pg, UnscheduledPods: members[pg.Name]})
		}
	} else {
		pg := tc.groups[0]
		root = &framework.PodGroupInfo{Namespace: ns, Name: pg.Name, Type: fwk.PodGroupKeyType, PodGroup: pg, UnscheduledPods: members[pg.Name]}
	}
	info := &framework.QueuedPodGroupInfo{QueuedPodInfos: queued, PodGroupInfo: root}
	if err := cache.UpdateSnapshot(logger, snapshot); err != nil {
		t.Fatal(err)
	}
	results := sched.runRootSchedulingAlgorithm(ctx, schedFwk, framework.NewCycleState(), info)
	for key, res := range results {
		var placed []string
		for _, a := range makeProposedAssignments(res) {
			placed = append(placed, a.GetPod().Name+"@"+a.GetNodeName())
		}
		t.Logf("  result %v: code %v, %q, proposals %v", key, res.status.Code(), res.status.Message(), placed)
	}
	return results[pgKey(root)].status.Message()
}
