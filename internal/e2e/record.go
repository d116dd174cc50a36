package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// A Record is what one scheduler_perf workload did, read from its API
// server: every preemption (the victims of each preemptor, from the
// scheduler's "Preempted" events) and the cluster it ended with. Pods
// and nodes are named by their class, not their generated names, so
// that two runs of a workload compare: scheduler_perf makes every node
// of a workload from one template, and upstream picks among tied nodes
// by map order (pickOneNodeForPreemption) and among tied scores at
// random (selectHost), so a run is upstream's answer up to a
// permutation of equal nodes.
type Record struct {
	Workload string `json:"workload"`
	// Failed is the benchmark's own verdict (a workload that timed out
	// or failed to create its objects).
	Failed bool `json:"failed,omitempty"`
	// Preemptions are one line per preemptor (Preemption.String),
	// sorted.
	Preemptions []string `json:"preemptions"`
	// Final is the cluster at the end: one line per node, its class and
	// the classes of the pods bound to it, sorted.
	Final []string `json:"final"`
	// Unexplained counts the pods deleted with the scheduler's
	// DisruptionTarget condition whose "Preempted" event never came.
	Unexplained int `json:"unexplained,omitempty"`
	// Plugin is what the preemptbench plugin counted in this run
	// (decisions and fallbacks by result and reason); empty for stock.
	Plugin map[string]float64 `json:"plugin,omitempty"`
}

// Preemption is one preemptor's victims.
type Preemption struct {
	Preemptor string
	Node      string
	Victims   []string
	// Nodes is the number of nodes the victims ran on (more than one
	// when a pod group in mode All is a victim).
	Nodes int
}

func (p Preemption) String() string {
	v := slices.Clone(p.Victims)
	sort.Strings(v)
	return fmt.Sprintf("%s on %s evicts [%s] from %d node(s)", p.Preemptor, p.Node, strings.Join(v, " "), p.Nodes)
}

// PodClass names a pod by what scheduler_perf's template made of it: its
// namespace, generateName, priority and requests, and its pod group's
// mode when it has one.
func PodClass(p *v1.Pod) string {
	name := p.GenerateName
	if name == "" {
		name = p.Name
	}
	// A template's index in the name ("pod-gang-1-") is not a class:
	// the pods of one template are alike but for it.
	name = templateIndex.ReplaceAllString(name, "-")
	prio := int32(0)
	if p.Spec.Priority != nil {
		prio = *p.Spec.Priority
	}
	var req []string
	for _, c := range p.Spec.Containers {
		for _, r := range slices.Sorted(maps.Keys(c.Resources.Requests)) {
			q := c.Resources.Requests[r]
			req = append(req, string(r)+"="+q.String())
		}
	}
	group := ""
	if p.Spec.SchedulingGroup != nil {
		group = " in-group"
	}
	return fmt.Sprintf("%s/%s(prio=%d %s%s)", p.Namespace, name, prio, strings.Join(req, ","), group)
}

var templateIndex = regexp.MustCompile(`-[0-9]+-$`)

// NodeClass names a node by its labels (the hostname left out) and
// allocatable resources.
func NodeClass(n *v1.Node) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(n.Labels)) {
		if k == v1.LabelHostname {
			continue
		}
		parts = append(parts, k+"="+n.Labels[k])
	}
	for _, r := range slices.Sorted(maps.Keys(n.Status.Allocatable)) {
		q := n.Status.Allocatable[r]
		parts = append(parts, string(r)+"="+q.String())
	}
	return "node(" + strings.Join(parts, ",") + ")"
}

// Recorder watches a workload's API server while it runs (scheduler_perf's
// prepare hook starts it) and writes the Record when it ends.
type Recorder struct {
	cs     kubernetes.Interface
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu sync.Mutex
	// pods are every pod seen, by UID, deleted ones included.
	pods map[types.UID]*v1.Pod
	// disrupted are the pods deleted with the scheduler's
	// DisruptionTarget condition.
	disrupted map[types.UID]bool
	// preempted maps each victim to its preemptor and node, from the
	// scheduler's events.
	preempted map[types.UID]preempted
}

type preempted struct {
	by   types.UID
	node string
	// group names a preemptor that is not a pod (a pod group), by the
	// event's related object.
	group string
}

// StartRecorder starts watching pods and events through cs until Stop.
func StartRecorder(cs kubernetes.Interface) (*Recorder, error) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &Recorder{cs: cs, cancel: cancel, pods: map[types.UID]*v1.Pod{}, disrupted: map[types.UID]bool{}, preempted: map[types.UID]preempted{}}
	f := informers.NewSharedInformerFactory(cs, 0)
	pods := f.Core().V1().Pods().Informer()
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.pod(obj, false) },
		UpdateFunc: func(_, obj any) { r.pod(obj, false) },
		DeleteFunc: func(obj any) { r.pod(obj, true) },
	}); err != nil {
		cancel()
		return nil, err
	}
	events := f.Events().V1().Events().Informer()
	if _, err := events.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    r.event,
		UpdateFunc: func(_, obj any) { r.event(obj) },
	}); err != nil {
		cancel()
		return nil, err
	}
	r.done.Add(1)
	go func() {
		defer r.done.Done()
		f.Start(ctx.Done())
		<-ctx.Done()
		f.Shutdown()
	}()
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced, events.HasSynced) {
		r.Stop()
		return nil, fmt.Errorf("recorder: informers did not sync")
	}
	return r, nil
}

func (r *Recorder) pod(obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pods[p.UID] = p
	if !deleted {
		return
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.DisruptionTarget && c.Reason == v1.PodReasonPreemptionByScheduler && c.Status == v1.ConditionTrue {
			r.disrupted[p.UID] = true
		}
	}
}

// event takes the scheduler's "Preempted" event of a victim: its note is
// "Preempted by <type> <uid> on node <node>" (the Executor's message).
func (r *Recorder) event(obj any) {
	e, ok := obj.(*eventsv1.Event)
	if !ok || e.Reason != "Preempted" || e.Regarding.Kind != "Pod" {
		return
	}
	var kind, uid, node string
	if n, err := fmt.Sscanf(e.Note, "Preempted by %s %s on node %s", &kind, &uid, &node); err != nil || n != 3 {
		return
	}
	pr := preempted{by: types.UID(uid), node: node}
	if rel := e.Related; rel != nil && rel.Kind != "Pod" {
		pr.group = rel.Kind + " " + rel.Namespace + "/" + rel.Name
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.preempted[e.Regarding.UID] = pr
}

// Stop stops the informers.
func (r *Recorder) Stop() {
	r.cancel()
	r.done.Wait()
}

// Finish waits (up to wait) for the event of every disrupted pod, reads
// the cluster's end state, and stops.
func (r *Recorder) Finish(ctx context.Context, workload string, wait time.Duration) (*Record, error) {
	defer r.Stop()
	deadline := time.Now().Add(wait)
	for {
		r.mu.Lock()
		missing := r.unexplained()
		r.mu.Unlock()
		if missing == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	nodes, err := r.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	pods, err := r.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := &Record{Workload: workload}

	classOf := map[string]string{}
	on := map[string][]string{}
	for i := range nodes.Items {
		classOf[nodes.Items[i].Name] = NodeClass(&nodes.Items[i])
	}
	for i := range pods.Items {
		if p := &pods.Items[i]; p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			on[p.Spec.NodeName] = append(on[p.Spec.NodeName], PodClass(p))
		}
	}
	for name, class := range classOf {
		ps := on[name]
		sort.Strings(ps)
		rec.Final = append(rec.Final, class+": ["+strings.Join(ps, " ")+"]")
	}
	sort.Strings(rec.Final)

	byPreemptor := map[types.UID]*Preemption{}
	victimNodes := map[types.UID]map[string]bool{}
	for victim, pr := range r.preempted {
		pre := byPreemptor[pr.by]
		if pre == nil {
			class := pr.group
			if p := r.pods[pr.by]; p != nil {
				class = PodClass(p)
			} else if class == "" {
				class = "unknown preemptor " + string(pr.by)
			}
			node := pr.node
			if c, ok := classOf[node]; ok {
				node = c
			}
			pre = &Preemption{Preemptor: class, Node: node}
			byPreemptor[pr.by] = pre
			victimNodes[pr.by] = map[string]bool{}
		}
		if p := r.pods[victim]; p != nil {
			pre.Victims = append(pre.Victims, PodClass(p))
			victimNodes[pr.by][p.Spec.NodeName] = true
		} else {
			pre.Victims = append(pre.Victims, "unknown pod "+string(victim))
		}
	}
	for uid, pre := range byPreemptor {
		pre.Nodes = len(victimNodes[uid])
		rec.Preemptions = append(rec.Preemptions, pre.String())
	}
	sort.Strings(rec.Preemptions)
	rec.Unexplained = r.unexplained()
	return rec, nil
}

// unexplained counts the disrupted pods without a Preempted event yet
// (r.mu held).
func (r *Recorder) unexplained() int {
	n := 0
	for uid := range r.disrupted {
		if _, ok := r.preempted[uid]; !ok {
			n++
		}
	}
	return n
}

// WriteRecord appends rec to file as one JSON line.
func WriteRecord(file string, rec *Record) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadRecords reads the Records WriteRecord appended to file, by workload.
func ReadRecords(file string) (map[string]*Record, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string]*Record{}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var rec Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, i+1, err)
		}
		out[rec.Workload] = &rec
	}
	return out, nil
}
