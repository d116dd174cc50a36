package wire

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/preemptbench/preemptbench/internal/actuation"
	"github.com/preemptbench/preemptbench/preempt"
)

// Main serves impl on the process's standard input and output and returns
// the exit code: a child's whole main is
//
//	func main() { os.Exit(wire.Main(myimpl.Impl{})) }
func Main(impl preempt.Implementation) int {
	if err := Serve(impl, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", impl.Name(), err)
		return 1
	}
	return 0
}

// Serve says Hello on w, then answers the requests read from r until r
// ends (nil) or is not the protocol (an error).
func Serve(impl preempt.Implementation, r io.Reader, w io.Writer) error {
	s := &server{impl: impl, in: json.NewDecoder(bufio.NewReaderSize(r, 1<<20)), out: bufio.NewWriter(w), evaluators: map[int64]preempt.Evaluator{}}
	if err := s.send(Hello{Protocol: Protocol, Name: impl.Name()}); err != nil {
		return err
	}
	for {
		var req Request
		if err := s.in.Decode(&req); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading a request: %w", err)
		}
		for _, id := range req.Release {
			delete(s.evaluators, id)
		}
		var pods []*v1.Pod
		if req.Cluster != nil {
			pods = req.Cluster.Pods
		}
		if req.Change != nil {
			pods = append(append([]*v1.Pod(nil), pods...), req.Change.Added...)
		}
		if err := restoreStartTimes(req.StartTimes, pods); err != nil {
			return err
		}
		resp := s.answer(&req)
		resp.ID = req.ID
		if err := s.send(resp); err != nil {
			return err
		}
	}
}

type server struct {
	impl       preempt.Implementation
	in         *json.Decoder
	mu         sync.Mutex // one call of the implementation's on the wire at a time
	out        *bufio.Writer
	evaluators map[int64]preempt.Evaluator
	next       int64
}

func (s *server) send(v any) error {
	if _, err := s.out.Write(append(marshal(v), '\n')); err != nil {
		return err
	}
	return s.out.Flush()
}

// answer runs req on the implementation; a panic of the implementation is
// an error answer, as a crash in process would be a test failure.
func (s *server) answer(req *Request) (resp Response) {
	resp.Selected = -1
	defer func() {
		if r := recover(); r != nil {
			resp = Response{Selected: -1, Error: fmt.Sprintf("%s panicked in %s: %v", s.impl.Name(), req.Method, r)}
		}
	}()
	ctx := context.Background()
	if req.Method == MethodUnmodelled {
		if l, ok := s.impl.(preempt.Limited); ok {
			resp.Unmodelled = l.Unmodelled(req.Cluster, req.Pod)
		}
		return resp
	}
	if req.Method == MethodNewEvaluator {
		ev, err := s.impl.NewEvaluator(req.Cluster)
		if err != nil {
			resp.Error = err.Error()
			return resp
		}
		s.next++
		s.evaluators[s.next] = ev
		resp.Evaluator = s.next
		_, resp.Updater = ev.(preempt.Updater)
		_, resp.CodeFilter = ev.(preempt.CodeFilter)
		return resp
	}
	ev := s.evaluators[req.Evaluator]
	if ev == nil {
		resp.Error = fmt.Sprintf("no evaluator %d", req.Evaluator)
		return resp
	}
	switch req.Method {
	case MethodUpdate:
		u, ok := ev.(preempt.Updater)
		if !ok {
			resp.Error = "the evaluator is not a preempt.Updater"
			return resp
		}
		if err := u.Update(req.Cluster, *req.Change); err != nil {
			resp.Error = err.Error()
		}
	case MethodFilter:
		setFilterConfig(ev, req)
		fr := ev.Filter(ctx, req.Pod)
		resp.Filter = &fr
	case MethodFilterCodes:
		cf, ok := ev.(preempt.CodeFilter)
		if !ok {
			resp.Error = "the evaluator is not a preempt.CodeFilter"
			return resp
		}
		setFilterConfig(ev, req)
		resp.Codes = cf.FilterCodes(ctx, req.Pod, nil)
	case MethodPodEligibleToPreemptOthers:
		resp.Eligible, resp.Message = ev.PodEligibleToPreemptOthers(req.Request)
	case MethodFindCandidates:
		dr, err := ev.FindCandidates(ctx, req.Request)
		resp.DryRun = &dr
		setError(&resp, err)
	case MethodDryRunPreemption:
		dr := ev.DryRunPreemption(ctx, req.Request, req.Potential, req.Offset, req.NumCandidates)
		resp.DryRun = &dr
	case MethodSelectVictimsOnNode:
		victims, n, st := ev.SelectVictimsOnNode(ctx, req.Request, req.Node)
		resp.Victims, resp.NumViolating, resp.Status = victims, n, &st
	case MethodSelectCandidate:
		if c := ev.SelectCandidate(req.Candidates, req.Request); c != nil {
			if resp.Selected = indexOf(req.Candidates, c); resp.Selected < 0 {
				resp.Chosen = c // not one of the list's: sent whole
			}
		}
	case MethodPrepareCandidate:
		setError(&resp, ev.PrepareCandidate(ctx, s.clientset(), req.Candidate, req.Request))
	case MethodPreempt:
		d := ev.Preempt(ctx, s.clientset(), req.Request)
		resp.Decision = &d
	default:
		resp.Error = fmt.Sprintf("unknown method %q", req.Method)
	}
	return resp
}

// setFilterConfig gives ev the gates and the behaviour req carries for
// its filter phase, those the parent's evaluator was given; what the
// parent never set, ev keeps.
func setFilterConfig(ev preempt.Evaluator, req *Request) {
	if req.FeatureGates != nil {
		preempt.SetFeatureGates(ev, req.FeatureGates)
	}
	if s, ok := ev.(preempt.BehaviourSetter); ok && req.Behaviour != nil {
		s.SetBehaviour(*req.Behaviour)
	}
	if req.Now != nil {
		preempt.SetFilterNow(ev, *req.Now)
	}
}

// setError puts err in resp with what its type says: a background error
// of asynchronous preemption, an API Status.
func setError(resp *Response, err error) {
	if err == nil {
		return
	}
	resp.Error = err.Error()
	var bg *actuation.BackgroundError
	if errors.As(err, &bg) {
		resp.Background = bg
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		resp.ErrorStatus = &s
	}
}

// indexOf is the index of the element of cs that c points to, -1 when c
// points elsewhere.
func indexOf(cs []preempt.Candidate, c *preempt.Candidate) int {
	for i := range cs {
		if &cs[i] == c {
			return i
		}
	}
	return -1
}

// clientset is a fake clientset whose every pod call is made by the
// parent, on its own clientset: the child sends a Call and reads the
// CallResult.
func (s *server) clientset() *fake.Clientset {
	cs := fake.NewSimpleClientset()
	cs.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		call, err := callOf(a)
		if err != nil {
			return true, nil, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := s.send(Response{Selected: -1, Call: call}); err != nil {
			return true, nil, err
		}
		var res CallResult
		if err := s.in.Decode(&res); err != nil {
			return true, nil, fmt.Errorf("reading the result of %s %s/%s: %w", call.Verb, call.Namespace, call.Name, err)
		}
		switch {
		case res.Status != nil:
			return true, nil, &apierrors.StatusError{ErrStatus: *res.Status}
		case res.Error != "":
			return true, nil, errors.New(res.Error)
		case res.Pod != nil:
			return true, res.Pod, nil
		}
		return true, &v1.Pod{}, nil
	})
	return cs
}

// callOf is the Call of a, a call on a pod.
func callOf(a k8stesting.Action) (*Call, error) {
	if a.GetResource().Resource != "pods" {
		return nil, fmt.Errorf("wire: an API call on %s is not forwarded (pods only)", a.GetResource().Resource)
	}
	c := &Call{Verb: a.GetVerb(), Namespace: a.GetNamespace(), Subresource: a.GetSubresource()}
	// Patch and delete actions have GetName too: they come first.
	switch a := a.(type) {
	case k8stesting.PatchAction:
		c.Name, c.PatchType, c.Patch = a.GetName(), string(a.GetPatchType()), a.GetPatch()
	case k8stesting.DeleteAction:
		c.Name = a.GetName()
		opts := a.GetDeleteOptions()
		c.Delete = &opts
	case k8stesting.GetAction:
		c.Name = a.GetName()
	default:
		return nil, fmt.Errorf("wire: the API call %s on pods is not forwarded (get, patch and delete are)", a.GetVerb())
	}
	return c, nil
}
