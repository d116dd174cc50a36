// This file is not part of preemptbench's build: scripts/upstream-overlay.sh
// lays it over k8s.io/kubernetes v1.37.2's pkg/scheduler (go test -overlay)
// so that it runs inside that package, against the scheduler's own
// podGroupCycle, with the real NodeResourcesFit, GangScheduling and
// DefaultPreemption plugins. docs/upstream-findings.md, "A
// CompositePodGroup evicts for the proposals of a failed child group".

package scheduler

import (
	"context"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

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
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/gangscheduling"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/profile"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
	"k8s.io/utils/ptr"
)

// Composite job (basic policy, priority 10) with children a (gang,
// minCount 1: a0) and b (gang, minCount 2: b0, b1), each member asking
// 600m; nodes n1 and n2 of 1 CPU, each full with a pod of priority 0.
// With both pods removed, a0 and b0 take one node each and b1 none: b
// fails, job succeeds with a. Evicting one pod would do; upstream evicts
// both, for b0, and nominates b0.
func TestPreemptbenchCompositeEvictsForFailedChild(t *testing.T) {
	featuregatetesting.SetFeatureGatesDuringTest(t, utilfeature.DefaultFeatureGate, featuregatetesting.FeatureOverrides{
		features.CompositePodGroup:               true,
		features.GenericWorkload:                 true,
		features.TopologyAwareWorkloadScheduling: true,
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := klog.FromContext(ctx)
	const ns = "default"

	cache := internalcache.New(ctx, nil, true, true)
	var objs []runtime.Object
	for _, name := range []string{"n1", "n2"} {
		n := st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "1", v1.ResourcePods: "10"}).Obj()
		cache.AddNode(logger, n)
		objs = append(objs, n)
	}
	for _, v := range []*v1.Pod{
		st.MakePod().Namespace(ns).Name("v1").UID("v1").Node("n1").Priority(0).Req(map[v1.ResourceName]string{v1.ResourceCPU: "600m"}).Obj(),
		st.MakePod().Namespace(ns).Name("v2").UID("v2").Node("n2").Priority(0).Req(map[v1.ResourceName]string{v1.ResourceCPU: "600m"}).Obj(),
	} {
		if err := cache.AddPod(logger, v); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, v)
	}
	job := &schedulingv1alpha3.CompositePodGroup{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: ns, UID: "job"},
		Spec: schedulingv1alpha3.CompositePodGroupSpec{Priority: ptr.To[int32](10),
			SchedulingPolicy: schedulingv1alpha3.CompositePodGroupSchedulingPolicy{Basic: &schedulingv1alpha3.CompositeBasicSchedulingPolicy{}}}}
	cache.AddCompositePodGroup(logger, job)
	objs = append(objs, job)
	group := func(name string, minCount int32) *schedulingv1beta1.PodGroup {
		pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("pg-" + name)},
			Spec: schedulingv1beta1.PodGroupSpec{Priority: ptr.To[int32](10), ParentCompositePodGroupName: ptr.To("job"),
				SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}}}}
		cache.AddPodGroup(pg)
		objs = append(objs, pg)
		return pg
	}
	a, b := group("a", 1), group("b", 2)
	queued := map[fwk.EntityKey][]*framework.QueuedPodInfo{}
	members := map[string][]*v1.Pod{}
	var all []*v1.Pod
	for _, m := range []struct{ group, name string }{{"a", "a0"}, {"b", "b0"}, {"b", "b1"}} {
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
	fts := feature.Features{EnableGenericWorkload: true, EnableCompositePodGroup: true, EnableTopologyAwareWorkloadScheduling: true}
	gang := func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return gangscheduling.New(ctx, obj, h, fts)
	}
	preemption := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return defaultpreemption.New(ctx, &config.DefaultPreemptionArgs{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}, h, fts)
	}
	registry := []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
		tf.RegisterPluginAsExtensions(noderesources.Name, frameworkruntime.FactoryAdapter(fts, noderesources.NewFit), "PreFilter", "Filter"),
		tf.RegisterPermitPlugin(gangscheduling.Name, gang),
		tf.RegisterPluginAsExtensions(gangscheduling.Name, gang, "PlacementFeasible"),
		func(reg *frameworkruntime.Registry, p *config.KubeSchedulerProfile) {
			_ = reg.Register(defaultpreemption.Name, preemption)
			p.Plugins.PostFilter.Enabled = append(p.Plugins.PostFilter.Enabled, config.Plugin{Name: defaultpreemption.Name})
			p.Plugins.PodGroupPostFilter.Enabled = append(p.Plugins.PodGroupPostFilter.Enabled, config.Plugin{Name: defaultpreemption.Name})
		},
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

	var mu sync.Mutex
	nominated := map[string]string{}
	sched := &Scheduler{
		Profiles:         profile.Map{"test-scheduler": schedFwk},
		SchedulingQueue:  internalqueue.NewTestQueue(ctx, nil),
		Cache:            cache,
		client:           client,
		nodeInfoSnapshot: snapshot,
		FailureHandler: func(_ context.Context, _ framework.Framework, p *framework.QueuedPodInfo, _ *fwk.Status, ni *fwk.NominatingInfo, _ time.Time) {
			mu.Lock()
			defer mu.Unlock()
			if ni != nil {
				nominated[p.Pod.Name] = ni.NominatedNodeName
			}
		},
	}
	sched.SchedulePod = sched.schedulePod
	info := &framework.QueuedPodGroupInfo{QueuedPodInfos: queued, PodGroupInfo: &framework.PodGroupInfo{
		Namespace: ns, Name: "job", Type: fwk.CompositePodGroupKeyType, UnscheduledPods: all, CompositePodGroup: job,
		Children: []*framework.PodGroupInfo{
			{Namespace: ns, Name: "a", Type: fwk.PodGroupKeyType, PodGroup: a, UnscheduledPods: members["a"]},
			{Namespace: ns, Name: "b", Type: fwk.PodGroupKeyType, PodGroup: b, UnscheduledPods: members["b"]},
		},
	}}
	if err := cache.UpdateSnapshot(logger, snapshot); err != nil {
		t.Fatal(err)
	}
	sched.podGroupCycle(ctx, schedFwk, framework.NewCycleState(), info, time.Now())

	var deleted []string
	for _, a := range client.Actions() {
		if a.GetVerb() == "delete" && a.GetResource().Resource == "pods" {
			deleted = append(deleted, a.(interface{ GetName() string }).GetName())
		}
	}
	sort.Strings(deleted)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("deleted %v; nominations %v", deleted, nominated)
	// b1 fits nowhere, so b fails its minCount of 2; v1 and v2 are both
	// evicted all the same and b0 nominated: what upstream does.
	if !slices.Equal(deleted, []string{"v1", "v2"}) || nominated["a0"] == "" || nominated["b0"] == "" || nominated["b1"] != "" {
		t.Errorf("deleted %v, nominations %v: want v1 and v2 deleted, a0 and b0 nominated, b1 not (upstream evicting for the failed child b)", deleted, nominated)
	}
}
