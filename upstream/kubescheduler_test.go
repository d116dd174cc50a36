package upstream

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
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
	ks, err := startKubeScheduler(ctx, c)
	if err != nil {
		return preempt.FilterResult{}, err
	}
	defer ks.stop()
	res, _, _ := ks.filter(pod.DeepCopy())
	return res, nil
}

// KubeSchedulerPreEnqueue runs the default profile's PreEnqueue plugins
// on pod as kube-scheduler's queue does before it lets a pod in: the
// first status that is not a success (the pod waits, no scheduling cycle
// runs), nil when every plugin admits it.
func KubeSchedulerPreEnqueue(ctx context.Context, c *preempt.Cluster, pod *v1.Pod) (*fwk.Status, error) {
	ks, err := startKubeScheduler(ctx, c)
	if err != nil {
		return nil, err
	}
	defer ks.stop()
	for _, pl := range ks.fh.PreEnqueuePlugins() {
		if st := pl.PreEnqueue(ks.ctx, pod.DeepCopy()); !st.IsSuccess() {
			return st.WithPlugin(pl.Name()), nil
		}
	}
	return nil, nil
}

// KubeSchedulerPostFilter runs pod's scheduling cycle as kube-scheduler
// does up to PostFilter: the filter phase on every node, then the default
// profile's PostFilter plugins (DefaultPreemption, then DynamicResources)
// with the nodes' statuses. It returns PostFilter's status and the writes
// to ResourceClaims it made through the API, as "verb[/subresource]
// namespace/name". The pod is in the API, as a pending pod is.
func KubeSchedulerPostFilter(ctx context.Context, c *preempt.Cluster, pod *v1.Pod) (*fwk.Status, []string, error) {
	ks, err := startKubeScheduler(ctx, c, pod)
	if err != nil {
		return nil, nil, err
	}
	defer ks.stop()
	pod = pod.DeepCopy()
	res, statuses, state := ks.filter(pod)
	if len(res.Feasible) > 0 {
		return nil, nil, fmt.Errorf("pod %s fits %v: PostFilter does not run", pod.Name, res.Feasible)
	}
	ks.client.ClearActions()
	_, status := ks.fh.RunPostFilterPlugins(ks.ctx, state, pod, statuses)
	var writes []string
	for _, a := range ks.client.Actions() {
		if a.GetResource().Resource != "resourceclaims" || a.GetVerb() == "get" || a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		verb := a.GetVerb()
		if sub := a.GetSubresource(); sub != "" {
			verb += "/" + sub
		}
		name := ""
		switch a := a.(type) {
		case k8stesting.UpdateAction:
			name = a.GetObject().(metav1.Object).GetName()
		case k8stesting.DeleteAction:
			name = a.GetName()
		case k8stesting.PatchAction:
			name = a.GetName()
		}
		writes = append(writes, verb+" "+a.GetNamespace()+"/"+name)
	}
	return status, writes, nil
}

// kubeScheduler is scheduler.New over a fake clientset holding a cluster,
// its informers started and synced and its cache's snapshot taken.
type kubeScheduler struct {
	ctx      context.Context
	client   *fake.Clientset
	fh       framework.Framework
	snapshot *internalcache.Snapshot
	nodes    []string // in name order
	stop     func()
}

// startKubeScheduler starts it over c's objects and the pending pods.
func startKubeScheduler(ctx context.Context, c *preempt.Cluster, pending ...*v1.Pod) (*kubeScheduler, error) {
	sharedRecorder() // the scheduler's metrics exist
	ctx, cancel := context.WithCancel(quiet(ctx))
	ok := false
	var stops []func()
	stop := func() {
		cancel() // before the informers' Shutdown, which waits for them
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	defer func() {
		if !ok {
			stop()
		}
	}()
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
	for _, p := range pending {
		objects = append(objects, withSchedulerName(p))
	}
	for _, pdb := range c.PDBs {
		objects = append(objects, pdb)
	}
	objects = append(objects, volumeObjects(c).all()...)
	for _, o := range objects {
		if err := client.Tracker().Add(o.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	informerFactory := scheduler.NewInformerFactory(client, 0, nil)
	informerFactory.InformerFor(&v1.PersistentVolume{}, newSortedPVInformer)
	cfg, err := schedulerconfig.Default()
	if err != nil {
		return nil, err
	}
	snapshot := internalcache.NewEmptySnapshot()
	recorder := func(string) events.EventRecorderLogger { return &events.FakeRecorder{} }
	sched, err := scheduler.New(ctx, client, informerFactory, nil, recorder,
		scheduler.WithProfiles(cfg.Profiles[0]), scheduler.WithNodeInfoSnapshot(snapshot))
	if err != nil {
		return nil, fmt.Errorf("building the scheduler: %w", err)
	}
	stops = append(stops, sched.SchedulingQueue.Close)
	informerFactory.Start(ctx.Done())
	stops = append(stops, informerFactory.Shutdown)
	informerFactory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return nil, err
	}
	if err := sched.Cache.UpdateSnapshot(klogFrom(ctx), snapshot); err != nil {
		return nil, err
	}
	var names []string
	for _, n := range c.Nodes {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	ok = true
	return &kubeScheduler{ctx: ctx, client: client, fh: sched.Profiles[v1.DefaultSchedulerName], snapshot: snapshot, nodes: names, stop: stop}, nil
}

// filter runs the PreFilter plugins on pod and the Filter plugins on each
// node, as the contract's result, kube-scheduler's statuses and the
// cycle's state.
func (ks *kubeScheduler) filter(pod *v1.Pod) (preempt.FilterResult, *framework.NodeToStatus, fwk.CycleState) {
	state := framework.NewCycleState()
	state.SetRecordPluginMetrics(false)
	_, status, _ := ks.fh.RunPreFilterPlugins(ks.ctx, state, pod)
	res := preempt.FilterResult{Feasible: []string{}, NodeStatuses: []preempt.NodeStatus{}}
	statuses := framework.NewDefaultNodeToStatus()
	for _, name := range ks.nodes {
		st := status
		if st.IsSuccess() {
			ni, err := ks.snapshot.NodeInfos().Get(name)
			if err != nil {
				st = fwk.AsStatus(err)
			} else {
				st = ks.fh.RunFilterPluginsWithNominatedPods(ks.ctx, state, pod, ni)
			}
		}
		if st.IsSuccess() {
			res.Feasible = append(res.Feasible, name)
			continue
		}
		statuses.Set(name, st)
		res.NodeStatuses = append(res.NodeStatuses, nodeStatus(name, st))
	}
	if status.Code() == fwk.UnschedulableAndUnresolvable {
		// A plugin before DynamicResources stopped the PreFilters when its
		// state is missing: its PostFilter, first in the chain, then fails
		// (checkAsKubeScheduler runs the chain on such a case:
		// KubeSchedulerPostFilter).
		_, err := state.Read(fwk.StateKey(pluginnames.DynamicResources))
		res.PreFilterRejected = err != nil
	}
	return res, statuses, state
}

// KubeSchedulerPreemption is what kube-scheduler's PostFilter chain did
// to a pod (KubeSchedulerPreempt).
type KubeSchedulerPreemption struct {
	Status *fwk.Status
	// NominatedNode is the PostFilterResult's node, "" if none.
	NominatedNode string
	// Deleted are the pods deleted through the API, "namespace/name",
	// sorted.
	Deleted []string
}

// KubeSchedulerPreempt runs pod's scheduling cycle as kube-scheduler does
// up to and through PostFilter (KubeSchedulerPostFilter), then waits for
// the victims its asynchronous preemption deletes: until want pods are
// deleted and no more come for a moment, or for at most 10 seconds. The
// dry run's offset is kube-scheduler's own, at random.
func KubeSchedulerPreempt(ctx context.Context, c *preempt.Cluster, pod *v1.Pod, want int) (KubeSchedulerPreemption, error) {
	ks, err := startKubeScheduler(ctx, c, pod)
	if err != nil {
		return KubeSchedulerPreemption{}, err
	}
	defer ks.stop()
	pod = pod.DeepCopy()
	res, statuses, state := ks.filter(pod)
	if len(res.Feasible) > 0 {
		return KubeSchedulerPreemption{}, fmt.Errorf("pod %s fits %v: PostFilter does not run", pod.Name, res.Feasible)
	}
	ks.client.ClearActions()
	result, status := ks.fh.RunPostFilterPlugins(ks.ctx, state, pod, statuses)
	out := KubeSchedulerPreemption{Status: status}
	if result != nil && result.NominatingInfo != nil {
		out.NominatedNode = result.NominatedNodeName
	}
	deleted := func() []string {
		var names []string
		for _, a := range ks.client.Actions() {
			if d, ok := a.(k8stesting.DeleteAction); ok && a.GetResource().Resource == "pods" {
				names = append(names, d.GetNamespace()+"/"+d.GetName())
			}
		}
		sort.Strings(names)
		return names
	}
	deadline := time.Now().Add(10 * time.Second)
	for out.Deleted = deleted(); time.Now().Before(deadline); out.Deleted = deleted() {
		if len(out.Deleted) >= want {
			time.Sleep(100 * time.Millisecond) // any more?
			out.Deleted = deleted()
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return out, nil
}
