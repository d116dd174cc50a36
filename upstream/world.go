package upstream

import (
	"context"
	"fmt"
	policy "k8s.io/api/policy/v1"
	"reflect"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/preemptbench/preemptbench/preempt"
)

// schedulerFeatures are the plugins' features: the process's feature gates,
// with SchedulerAsyncPreemption off (the synchronous prepareCandidate).
func schedulerFeatures() feature.Features {
	fts := feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	fts.EnableAsyncPreemption = false
	return fts
}

// The scheduler's metrics must exist before a scheduling queue is built
// (upstream's tests call metrics.Register too), and one metrics recorder
// serves every framework this package builds: a framework built without one
// starts its own goroutine that only stops with the context given to
// NewFramework, and evaluators have no Close. Plugin metrics are never
// recorded anyway (the cycle states have recordPluginMetrics off).
var (
	setupOnce sync.Once
	recorder  *metrics.MetricAsyncRecorder
)

// StartShared starts the package's process-wide state now (the
// scheduler's metrics and the metrics recorder every framework shares,
// whose goroutine runs as long as the process) rather than with the first
// evaluator: for a process that checks for goroutines started after a
// point, as scheduler_perf's leak check does around each workload.
func StartShared() { sharedRecorder() }

func sharedRecorder() *metrics.MetricAsyncRecorder {
	setupOnce.Do(func() {
		metrics.Register()
		recorder = metrics.NewMetricsAsyncRecorder(1000, time.Second, nil)
	})
	return recorder
}

// quiet returns ctx with a logger that drops everything: upstream logs
// errors it recovers from (and the contract reports them in the Decision).
func quiet(ctx context.Context) context.Context {
	return klog.NewContext(ctx, logr.Discard())
}

// proxyClient is the framework's ClientSet. Its delegate is the client a
// request actuates through (Preempt, PrepareCandidate), otherwise an
// internal fake clientset.
type proxyClient struct {
	kubernetes.Interface
}

// worldKey is what a world depends on besides the cluster: the start time
// given to pods without one, and the UID left out of the nominator (the
// preemptor's, when a nominated pod of the cluster has it).
type worldKey struct {
	now       time.Time
	exclude   types.UID
	extenders []configv1.Extender
	// gates are the feature gates set away from their defaults (gateKey).
	gates string
	// gateMap is the gates themselves (not compared).
	gateMap map[string]bool
}

func (k worldKey) equal(o worldKey) bool {
	return k.now.Equal(o.now) && k.exclude == o.exclude && reflect.DeepEqual(k.extenders, o.extenders) && k.gates == o.gates
}

// world is a scheduler framework over one prepared copy of the cluster, the
// way upstream's default_preemption_test.go builds it.
type world struct {
	key      worldKey
	fh       framework.Framework
	snapshot *internalcache.Snapshot
	// lister is the framework's view of the snapshot (newSnapshot); its
	// log (the current release's orderedSnapshot) is on during a gang's
	// PodGroupPostFilter.
	lister   snapshotLister
	podStore cache.Store
	proxy    *proxyClient
	internal kubernetes.Interface
	// podByKey holds every pod of the cluster (with its start time set).
	podByKey map[string]*v1.Pod
	// nodes are the node names in name order.
	nodes []string
	// activated counts the framework's Activate calls (asynchronous
	// preemption activates the preemptor when its background work fails).
	activated *activator
	// extenders are upstream's HTTPExtenders of key.extenders.
	extenders []*extender
	// nodeObjects are the nodes the snapshot was built from; cache is the
	// scheduler cache Update keeps the snapshot in step with (nil until
	// the first Update).
	nodeObjects []*v1.Node
	cache       internalcache.Cache
	// queue is the scheduling queue, the framework's pod nominator.
	queue internalqueue.SchedulingQueue
	// initial are the bound pods the world was built with, in the
	// cluster's order (the scheduler cache gets them in that order).
	initial []*v1.Pod
	// fts are the evaluator's features (the scheduler cache's
	// GenericWorkload and CompositePodGroup switches), read from the
	// process's gate while the world was built.
	fts feature.Features
	// gates are the feature gates the world was built under.
	gates map[string]bool
}

// activator is the framework's PodActivator: it counts the calls.
type activator struct {
	mu sync.Mutex
	n  int
}

func (a *activator) Activate(_ klog.Logger, _ map[string]*v1.Pod) {
	a.mu.Lock()
	a.n++
	a.mu.Unlock()
}

// waitAbove waits until more than n calls were made.
func (a *activator) waitAbove(ctx context.Context, n int) error {
	deadline := time.Now().Add(asyncWait)
	for a.count() <= n {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the asynchronous preemption's goroutine did not activate the preemptor within %v", asyncWait)
		}
		time.Sleep(50 * time.Microsecond)
	}
	return nil
}

func (a *activator) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// withStartTime returns p, or a deep copy of p with status.startTime = now
// when p has none.
func withStartTime(p *v1.Pod, now time.Time) *v1.Pod {
	if p.Status.StartTime != nil {
		return p
	}
	c := p.DeepCopy()
	t := metav1.NewTime(now)
	c.Status.StartTime = &t
	return c
}

// worldPod is p as a world holds it: p itself, which the framework
// only reads, as kube-scheduler reads its informer's objects; a shallow
// copy with status.startTime = now when p has none; a deep copy when
// computing its requests would change it (ownObject). The evaluator's
// pods may be its caller's: a copy of each would double what the
// cluster's pods take (at 200,000 pods, 0.5 GB more).
func worldPod(p *v1.Pod, now time.Time) *v1.Pod {
	c := ownObject(p)
	if c.Status.StartTime != nil {
		return c
	}
	if c == p {
		shallow := *p
		c = &shallow
	}
	t := metav1.NewTime(now)
	c.Status.StartTime = &t
	return c
}

// ownObject returns p, or a copy of it when computing its requests would
// change it: component-helpers' PodRequests adds the overhead into
// pod-level requests in place. Each world then reads its own object once,
// as kube-scheduler's cache computes the requests of each informer object
// once (PodInfo caches them).
func ownObject(p *v1.Pod) *v1.Pod {
	if p.Spec.Resources == nil || len(p.Spec.Resources.Requests) == 0 || p.Spec.Overhead == nil {
		return p
	}
	return p.DeepCopy()
}

// newWorld builds the framework for the evaluator's cluster under key.
func (ev *evaluator) newWorld(key worldKey) (*world, error) {
	// NewFramework starts a default metrics recorder (replaced by the
	// shared one) that runs until its context is done: cancel it once built.
	ctx, cancel := context.WithCancel(quiet(context.Background()))
	defer cancel()
	logger := klog.FromContext(ctx)
	metricsRecorder := sharedRecorder()

	internal := fake.NewClientset()
	informerFactory := informers.NewSharedInformerFactory(internal, 0)
	podInformer := informerFactory.Core().V1().Pods().Informer()
	informerFactory.InformerFor(&policy.PodDisruptionBudget{}, newSortedPDBInformer)
	informerFactory.InformerFor(&v1.PersistentVolume{}, newSortedPVInformer)
	pdbInformer := informerFactory.Policy().V1().PodDisruptionBudgets().Informer()

	w := &world{
		activated: &activator{},
		key:       key,
		podStore:  podInformer.GetStore(),
		proxy:     &proxyClient{Interface: internal},
		internal:  internal,
		podByKey:  make(map[string]*v1.Pod, len(ev.pods)),
		// Built under the world's gates (evaluator.lock).
		fts:   schedulerFeatures(),
		gates: key.gateMap,
	}
	var bound, nominated []*v1.Pod
	for _, p := range ev.pods {
		p = worldPod(p, key.now)
		w.podByKey[preempt.Key(p.Namespace, p.Name)] = p
		switch {
		case preempt.IsBound(p):
			bound = append(bound, p)
		case preempt.IsNominated(p):
			if key.exclude != "" && p.UID == key.exclude {
				continue
			}
			nominated = append(nominated, p)
		default:
			continue
		}
		if err := w.podStore.Add(p); err != nil {
			return nil, fmt.Errorf("pod informer: %w", err)
		}
	}
	if err := ev.volumeObjects.addTo(informerFactory); err != nil {
		return nil, err
	}
	for _, pdb := range ev.pdbs {
		if err := pdbInformer.GetStore().Add(pdb); err != nil {
			return nil, fmt.Errorf("poddisruptionbudget informer: %w", err)
		}
	}
	for _, n := range ev.nodes {
		w.nodes = append(w.nodes, n.Name)
	}
	sort.Strings(w.nodes)

	sortPlugin := &queuesort.PrioritySort{}
	queue := internalqueue.NewSchedulingQueue(sortPlugin.Less, informerFactory)
	w.queue = queue
	for _, p := range nominated {
		// The queue holds the pod (NominatedPodsForNode reads pods from the
		// queue) and nominates it; the explicit nomination pins the node.
		addToQueue(ctx, queue, p)
		pi, err := framework.NewPodInfo(p)
		if err != nil {
			return nil, fmt.Errorf("pod %s: %w", preempt.Key(p.Namespace, p.Name), err)
		}
		queue.AddNominatedPod(logger, pi, &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: p.Status.NominatedNodeName})
	}

	w.nodeObjects = ev.nodes
	w.initial = bound
	listers, err := w.newSnapshot(logger, ev, bound, nominated)
	if err != nil {
		return nil, err
	}
	exts, err := ev.newExtenders(key.extenders)
	if err != nil {
		return nil, err
	}
	w.extenders = exts
	fexts := make([]fwk.Extender, len(exts))
	for i, e := range exts {
		fexts[i] = e
	}
	profile, err := profileFor(key.gates)
	if err != nil {
		return nil, err
	}
	dra, err := newDRAManager(ctx, informerFactory, ev.volumeObjects)
	if err != nil {
		return nil, err
	}
	f, err := frameworkruntime.NewFramework(ctx, plugins.NewInTreeRegistry(), profile, append([]frameworkruntime.Option{
		frameworkruntime.WithClientSet(w.proxy),
		frameworkruntime.WithEventRecorder(&events.FakeRecorder{}),
		frameworkruntime.WithInformerFactory(informerFactory),
		frameworkruntime.WithPodNominator(queue),
		frameworkruntime.WithSharedDRAManager(dra),
		// NodeVolumeLimits reads CSINodes through the CSI manager.
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(informerFactory.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithParallelism(ev.parallelism),
		frameworkruntime.WithMetricsRecorder(metricsRecorder),
		frameworkruntime.WithLogger(logger),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
		frameworkruntime.WithPodActivator(w.activated),
		frameworkruntime.WithExtenders(fexts),
	}, append(listers, w.releaseOptions()...)...)...)
	if err != nil {
		return nil, fmt.Errorf("building the framework: %w", err)
	}
	w.fh = f
	return w, nil
}

// world returns the world for key, rebuilding it when key changed.
func (ev *evaluator) world(key worldKey) (*world, error) {
	if ev.w != nil && ev.w.key.equal(key) {
		return ev.w, nil
	}
	w, err := ev.newWorld(key)
	if err != nil {
		return nil, err
	}
	ev.w = w
	return w, nil
}

// anyWorld returns the cached world built under gates, whatever the rest
// of its key (for stages whose outcome does not depend on start times).
func (ev *evaluator) anyWorld(gates map[string]bool) (*world, error) {
	key := worldKey{gates: gateKey(gates), gateMap: gates}
	if ev.w != nil && ev.w.key.gates == key.gates {
		return ev.w, nil
	}
	return ev.world(key)
}

// worldFor returns the world a request runs in.
func (ev *evaluator) worldFor(req *preempt.Request) (*world, error) {
	key := worldKey{now: req.Now, extenders: req.Config.Extenders, gates: gateKey(req.Config.FeatureGates), gateMap: req.Config.FeatureGates}
	if ev.nominatedUIDs[req.Pod.UID] {
		key.exclude = req.Pod.UID
	}
	return ev.world(key)
}

// preemptor returns the request's pod as it enters the listers: a deep copy
// with the request's start time when it has none.
func preemptorOf(req *preempt.Request) *v1.Pod {
	p := withStartTime(req.Pod, req.Now)
	if p == req.Pod {
		p = p.DeepCopy()
	}
	return p
}

// addPreemptor puts pod in the pod informer's store (Evaluator.Preempt gets
// the preemptor from the pod lister) and returns what restores the store.
func (w *world) addPreemptor(pod *v1.Pod) (restore func(), err error) {
	old, exists, err := w.podStore.Get(pod)
	if err != nil {
		return nil, err
	}
	if exists {
		err = w.podStore.Update(pod)
	} else {
		err = w.podStore.Add(pod)
	}
	if err != nil {
		return nil, err
	}
	return func() {
		if exists {
			_ = w.podStore.Update(old)
		} else {
			_ = w.podStore.Delete(pod)
		}
	}, nil
}

// prefilter runs the PreFilter plugins on a fresh cycle state.
func (w *world) prefilter(ctx context.Context, pod *v1.Pod) (fwk.CycleState, *fwk.Status) {
	state := framework.NewCycleState()
	state.SetRecordPluginMetrics(false)
	_, status, _ := w.fh.RunPreFilterPlugins(ctx, state, pod)
	return state, status
}

// nodeInfo is the snapshot's NodeInfo of node.
func (w *world) nodeInfo(node string) (fwk.NodeInfo, error) {
	return w.snapshot.NodeInfos().Get(node)
}

// withClient routes the framework's ClientSet to cs until the returned
// function runs.
func (w *world) withClient(cs kubernetes.Interface) func() {
	w.proxy.Interface = cs
	return func() { w.proxy.Interface = w.internal }
}

// annotate names each victim's PodGroup ("namespace/name") from the
// cluster's pod, whatever the gates (the pod names it).
func (w *world) annotate(vs []preempt.Victim) {
	for i := range vs {
		if p := w.podByKey[preempt.Key(vs[i].Namespace, vs[i].Name)]; p != nil {
			if name, ok := preempt.PodGroupName(p); ok {
				vs[i].PodGroup = preempt.Key(p.Namespace, name)
			}
		}
	}
}

// annotateDecision is annotate on every victim of d.
func (w *world) annotateDecision(d *preempt.Decision) {
	w.annotate(d.Victims)
	for i := range d.Candidates {
		w.annotate(d.Candidates[i].Victims)
	}
}

func klogFrom(ctx context.Context) klog.Logger { return klog.FromContext(ctx) }
