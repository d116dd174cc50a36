package upstream

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	pluginnames "k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"

	"github.com/preemptbench/preemptbench/internal/schedulerconfig"
	"github.com/preemptbench/preemptbench/preempt"
)

// KubeSchedulerFilter is the filter phase of pod on c as kube-scheduler
// itself runs it: scheduler.New (which builds the framework with its CSI
// manager, DRA manager, informer factory and volume listers) over a fake
// clientset holding the cluster, its informers started and synced, then
// the default profile's PreFilter and Filter plugins on every node of the
// scheduler cache's snapshot. It shares no code with the adapter's world
// but two pins: PersistentVolumes listed in name order (sortedPVInformer;
// kube-scheduler's order is its informer map's) and the statuses turned
// into the contract's (nodeStatus). Nominated pods are left out: the
// volume tests have none.
func KubeSchedulerFilter(ctx context.Context, c *preempt.Cluster, pod *v1.Pod) (preempt.FilterResult, error) {
	sharedRecorder() // the scheduler's metrics exist
	ctx, cancel := context.WithCancel(quiet(ctx))
	defer cancel()
	client := fake.NewClientset()
	var objects []runtime.Object
	for _, n := range c.Nodes {
		objects = append(objects, n)
	}
	for _, p := range c.Pods {
		if preempt.IsBound(p) {
			objects = append(objects, withSchedulerName(p))
		}
	}
	for _, pdb := range c.PDBs {
		objects = append(objects, pdb)
	}
	objects = append(objects, volumeObjects(c).all()...)
	for _, o := range objects {
		if err := client.Tracker().Add(o.DeepCopyObject()); err != nil {
			return preempt.FilterResult{}, err
		}
	}
	informerFactory := scheduler.NewInformerFactory(client, 0, nil)
	informerFactory.InformerFor(&v1.PersistentVolume{}, newSortedPVInformer)
	cfg, err := schedulerconfig.Default()
	if err != nil {
		return preempt.FilterResult{}, err
	}
	snapshot := internalcache.NewEmptySnapshot()
	recorder := func(string) events.EventRecorderLogger { return &events.FakeRecorder{} }
	sched, err := scheduler.New(ctx, client, informerFactory, nil, recorder,
		scheduler.WithProfiles(cfg.Profiles[0]), scheduler.WithNodeInfoSnapshot(snapshot))
	if err != nil {
		return preempt.FilterResult{}, fmt.Errorf("building the scheduler: %w", err)
	}
	defer sched.SchedulingQueue.Close()
	informerFactory.Start(ctx.Done())
	defer informerFactory.Shutdown()
	defer cancel() // before Shutdown, which waits for the informers
	informerFactory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return preempt.FilterResult{}, err
	}
	if err := sched.Cache.UpdateSnapshot(klogFrom(ctx), snapshot); err != nil {
		return preempt.FilterResult{}, err
	}
	fh := sched.Profiles[v1.DefaultSchedulerName]
	pod = pod.DeepCopy()
	state := framework.NewCycleState()
	state.SetRecordPluginMetrics(false)
	_, status, _ := fh.RunPreFilterPlugins(ctx, state, pod)
	var names []string
	for _, n := range c.Nodes {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	res := preempt.FilterResult{Feasible: []string{}, NodeStatuses: []preempt.NodeStatus{}}
	for _, name := range names {
		st := status
		if st.IsSuccess() {
			ni, err := snapshot.NodeInfos().Get(name)
			if err != nil {
				return preempt.FilterResult{}, err
			}
			st = fh.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
		}
		if st.IsSuccess() {
			res.Feasible = append(res.Feasible, name)
			continue
		}
		res.NodeStatuses = append(res.NodeStatuses, nodeStatus(name, st))
	}
	if status.Code() == fwk.UnschedulableAndUnresolvable {
		// kube-scheduler's answer to a PreFilter rejection: its PostFilter
		// chain, over every node with the PreFilter's status (findNodesThatFitPod's
		// SetAbsentNodesStatus). It ends in DynamicResources' Error when a
		// plugin before it stopped the PreFilters; otherwise DefaultPreemption
		// runs (on the fake clientset, thrown away with this scheduler).
		m := framework.NewDefaultNodeToStatus()
		m.SetAbsentNodesStatus(status)
		_, pst := fh.RunPostFilterPlugins(ctx, state, pod, m)
		res.PreFilterRejected = pst.Code() == fwk.Error && pst.Plugin() == pluginnames.DynamicResources && pst.Message() == "not found"
	}
	return res, nil
}
