package upstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"

	"github.com/preemptbench/preemptbench/preempt"
)

// preEnqueue is DefaultPreemption's PreEnqueue for the request's pod, its
// executor holding the record req.Preempting describes.
//
// Upstream makes such a record only by running an asynchronous
// preemption, and so does this: a stand-in preemption (a
// preemption.Interface proposing one candidate, on the first node, whose
// victims are two stand-ins, or a stand-in and the record's last victim)
// runs through upstream's Evaluator.Preempt and its executor, whose
// PreemptPod holds the goroutine where the record says: at the first
// victim, or at the last one (after the executor registered it).
// PreEnqueue runs then, and the goroutine is released.
//
// The stand-in runs on a plugin of its own (its own executor: upstream
// keys records by pod UID, and a stand-in finishing late would delete the
// real preemption's record), through a client that accepts every call (no
// call fails, so nothing is activated, and the request's client sees
// none of them).
func (r *request) preEnqueue(ctx context.Context, req *preempt.Request) (*fwk.Status, error) {
	if len(r.w.nodes) == 0 {
		return nil, errors.New("a running preemption needs a node to be recorded on")
	}
	node := r.w.nodes[0]
	standIn := func(name string) *v1.Pod {
		p := &v1.Pod{}
		p.Namespace, p.Name, p.UID = r.pod.Namespace, "preemptbench-stand-in-"+name, types.UID("preemptbench-stand-in-"+name)
		return p
	}
	victims := []*v1.Pod{standIn("1"), standIn("2")}
	holdAt := victims[0]
	if last := req.Preempting.LastVictim; last != nil {
		lv := &v1.Pod{}
		lv.Namespace, lv.Name, lv.UID = last.Namespace, last.Name, types.UID("preemptbench-last-victim")
		victims[1], holdAt = lv, lv
	}

	dp, err := defaultpreemption.New(ctx, &r.pl.args, r.w.fh, r.pl.fts)
	if err != nil {
		return nil, err
	}
	executor := executorOf(dp)
	defer r.w.withClient(acceptAll())()
	reached, release, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	holdPreemptPod(executor, func(victim *v1.Pod) {
		if victim == holdAt {
			close(reached)
			<-release
			close(returned)
		}
	})
	for _, e := range r.w.extenders {
		e.skip = true
	}
	defer func() {
		for _, e := range r.w.extenders {
			e.skip = false
		}
	}()
	stub := &standInPreemption{DefaultPreemption: dp.CandidatesToVictimsMap, victims: victims}
	ev := newEvaluator(names.DefaultPreemption, r.w.fh, stub, executor)
	m := framework.NewDefaultNodeToStatus()
	m.Set(node, fwk.NewStatus(fwk.Unschedulable))
	result, status := ev.Preempt(ctx, r.state.Clone(), r.pod, m)
	if !status.IsSuccess() || result == nil || result.NominatedNodeName != node {
		return nil, fmt.Errorf("recording the running preemption: %v", status.AsError())
	}
	select {
	case <-reached:
	case <-time.After(asyncWait):
		return nil, fmt.Errorf("recording the running preemption: the executor did not reach the victim within %v", asyncWait)
	}
	st := dp.PreEnqueue(ctx, r.pod)
	close(release)
	<-returned // the goroutine makes no call after this one
	return st, nil
}

// acceptAll is a clientset whose every call succeeds.
func acceptAll() kubernetes.Interface {
	cs := fake.NewClientset()
	cs.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, nil })
	return cs
}

// standInPreemption proposes its victims on every node.
type standInPreemption struct {
	DefaultPreemption func([]preemption.Candidate) map[string]*extenderv1.Victims
	victims           []*v1.Pod
}

func (s *standInPreemption) GetOffsetAndNumCandidates(int32) (int32, int32) { return 0, 1 }

func (s *standInPreemption) CandidatesToVictimsMap(c []preemption.Candidate) map[string]*extenderv1.Victims {
	return s.DefaultPreemption(c)
}

func (s *standInPreemption) PodEligibleToPreemptOthers(context.Context, *v1.Pod, *fwk.Status) (bool, string) {
	return true, ""
}

func (s *standInPreemption) OrderedScoreFuncs(context.Context, map[string]*extenderv1.Victims) []func(string) int64 {
	return nil
}
