package wire

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/preemptbench/preemptbench/actuation"
	"github.com/preemptbench/preemptbench/preempt"
)

// Client is a preempt.Implementation served by a child process. Its
// methods are safe for concurrent use; calls go to the child one at a
// time.
type Client struct {
	args    []string
	timeout time.Duration

	mu       sync.Mutex
	proc     *process // nil before the first call and after the child died
	name     string   // the child's, from its Hello
	gen      int      // counts the children started
	lastErr  error    // why the last child died
	released []int64  // evaluators to release in the next request
	lastID   int64
}

var _ preempt.Implementation = (*Client)(nil)
var _ preempt.Limited = (*Client)(nil)

// Command returns the implementation served by the child args[0] with
// args[1:], started on first use (again after it died), whose answers it
// waits for at most timeout each (DefaultTimeout when 0).
func Command(timeout time.Duration, args ...string) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{args: args, timeout: timeout}
}

// Name is the name the child gives in its Hello ("exec:ARGS" when it
// cannot be started).
func (c *Client) Name() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.name == "" {
		if _, err := c.start(); err != nil {
			return "exec:" + strings.Join(c.args, " ")
		}
	}
	return c.name
}

// Close stops the child.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc != nil {
		c.proc.kill(errors.New("closed"))
		c.proc = nil
	}
	return nil
}

// process is one running child.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	done   chan struct{} // closed when its output ends
	outErr error         // why its output ended
	stderr *tail
}

func (p *process) kill(why error) {
	_ = p.cmd.Process.Kill()
	_ = p.stdin.Close()
	go func() { _ = p.cmd.Wait() }()
	_ = why
}

// tail keeps the last bytes a child wrote on stderr, for the message of
// its death.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > 2048 {
		t.buf = t.buf[len(t.buf)-2048:]
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// start starts a child and reads its Hello. c.mu is held.
func (c *Client) start() (*process, error) {
	if len(c.args) == 0 {
		return nil, errors.New("wire: no command")
	}
	// The child gets its standard input, output and error only.
	closeInheritedOnExec()
	cmd := exec.Command(c.args[0], c.args[1:]...)
	p := &process{cmd: cmd, lines: make(chan []byte, 1), done: make(chan struct{}), stderr: &tail{}}
	cmd.Stderr = p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.stdin = stdin
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("wire: starting %s: %w", c.args[0], err)
	}
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				p.lines <- line
			}
			if err != nil {
				p.outErr = err
				close(p.done)
				return
			}
		}
	}()
	c.gen++
	c.proc = p
	c.released = nil
	line, err := c.read(p, "its Hello")
	if err != nil {
		return nil, err
	}
	var h Hello
	if err := json.Unmarshal(line, &h); err != nil || h.Protocol != Protocol {
		return nil, c.die(p, fmt.Errorf("wire: %s said %q first, want a Hello of protocol %s", c.args[0], clip(line), Protocol))
	}
	c.name = h.Name
	return p, nil
}

// read waits for the child's next line, at most the timeout; what names
// the awaited line in the errors.
func (c *Client) read(p *process, what string) ([]byte, error) {
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	select {
	case line := <-p.lines:
		return line, nil
	case <-p.done:
		select {
		case line := <-p.lines:
			return line, nil
		default:
		}
		_ = p.cmd.Wait()
		msg := fmt.Sprintf("wire: %s exited (%v)", c.args[0], p.cmd.ProcessState)
		if s := p.stderr.String(); s != "" {
			msg += ": " + s
		}
		return nil, c.die(p, errors.New(msg))
	case <-timer.C:
		return nil, c.die(p, fmt.Errorf("wire: %s did not answer within %v (awaiting %s); killed", c.args[0], c.timeout, what))
	}
}

// die kills p and records why: the next call starts a new child.
func (c *Client) die(p *process, err error) error {
	p.kill(err)
	if c.proc == p {
		c.proc = nil
	}
	c.lastErr = err
	return err
}

// call sends req to the child (starting it when restart allows), answers
// its API calls on cs, and returns its answer. gen, when not 0, is the
// child the request's evaluator lives in.
func (c *Client) call(req *Request, cs kubernetes.Interface, gen int) (Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != 0 && gen != c.gen || gen != 0 && c.proc == nil {
		return Response{}, fmt.Errorf("wire: the child holding this evaluator is gone: %v", c.lastErr)
	}
	p := c.proc
	if p == nil {
		var err error
		if p, err = c.start(); err != nil {
			return Response{}, err
		}
	}
	c.lastID++
	req.ID = c.lastID
	if req.Cluster != nil {
		req.StartTimes = startTimes(req.StartTimes, req.Cluster.Pods)
	}
	if req.Change != nil {
		req.StartTimes = startTimes(req.StartTimes, req.Change.Added)
	}
	req.Release, c.released = c.released, nil
	if _, err := p.stdin.Write(append(marshal(req), '\n')); err != nil {
		return Response{}, c.die(p, fmt.Errorf("wire: writing to %s: %w", c.args[0], err))
	}
	what := fmt.Sprintf("the answer to request %d, %s", req.ID, req.Method)
	if req.Evaluator != 0 {
		what += fmt.Sprintf(" on evaluator %d", req.Evaluator)
	}
	for {
		line, err := c.read(p, what)
		if err != nil {
			return Response{}, err
		}
		var resp Response
		if err := json.Unmarshal(line, &resp); err != nil {
			return Response{}, c.die(p, fmt.Errorf("wire: %s answered %q, not the protocol: %v", c.args[0], clip(line), err))
		}
		if resp.Call != nil {
			res := apiCall(cs, resp.Call)
			if _, err := p.stdin.Write(append(marshal(res), '\n')); err != nil {
				return Response{}, c.die(p, fmt.Errorf("wire: writing to %s: %w", c.args[0], err))
			}
			continue
		}
		if resp.ID != req.ID {
			return Response{}, c.die(p, fmt.Errorf("wire: %s answered request %d to request %d", c.args[0], resp.ID, req.ID))
		}
		return resp, nil
	}
}

func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// apiCall makes call on cs.
func apiCall(cs kubernetes.Interface, call *Call) CallResult {
	if cs == nil {
		return CallResult{Error: "wire: no clientset for this call"}
	}
	ctx := context.Background()
	pods := cs.CoreV1().Pods(call.Namespace)
	var pod *v1.Pod
	var err error
	var sub []string
	if call.Subresource != "" {
		sub = []string{call.Subresource}
	}
	switch call.Verb {
	case "get":
		pod, err = pods.Get(ctx, call.Name, metav1.GetOptions{})
	case "patch":
		pod, err = pods.Patch(ctx, call.Name, types.PatchType(call.PatchType), call.Patch, metav1.PatchOptions{}, sub...)
	case "delete":
		opts := metav1.DeleteOptions{}
		if call.Delete != nil {
			opts = *call.Delete
		}
		err = pods.Delete(ctx, call.Name, opts)
	default:
		return CallResult{Error: fmt.Sprintf("wire: verb %q is not forwarded", call.Verb)}
	}
	if err != nil {
		var st apierrors.APIStatus
		if errors.As(err, &st) {
			s := st.Status()
			return CallResult{Status: &s}
		}
		return CallResult{Error: err.Error()}
	}
	return CallResult{Pod: pod}
}

// Unmodelled asks the child's implementation (preempt.Limited). A child
// that cannot answer refuses nothing: NewEvaluator, next, says what is
// wrong with it.
func (c *Client) Unmodelled(cl *preempt.Cluster, pod *v1.Pod) *preempt.Unmodelled {
	resp, err := c.call(&Request{Method: MethodUnmodelled, Cluster: cl, Pod: pod}, nil, 0)
	if err != nil || resp.Error != "" {
		return nil
	}
	return resp.Unmodelled
}

// NewEvaluator prepares cl in the child.
func (c *Client) NewEvaluator(cl *preempt.Cluster) (preempt.Evaluator, error) {
	resp, err := c.call(&Request{Method: MethodNewEvaluator, Cluster: cl}, nil, 0)
	if err != nil {
		return nil, err
	}
	if resp.Error != "" {
		return nil, errors.New(resp.Error)
	}
	c.mu.Lock()
	ev := &evaluator{c: c, id: resp.Evaluator, gen: c.gen}
	c.mu.Unlock()
	// The child keeps the evaluator until this one is collected. A child
	// started since numbers its evaluators from 1 again: the id is
	// released only to the child that gave it.
	type idOf struct {
		id  int64
		gen int
	}
	runtime.AddCleanup(ev, func(e idOf) {
		c.mu.Lock()
		if e.gen == c.gen && c.proc != nil {
			c.released = append(c.released, e.id)
		}
		c.mu.Unlock()
	}, idOf{ev.id, ev.gen})
	switch {
	case resp.Updater && resp.CodeFilter:
		return &updaterCodeFilter{ev}, nil
	case resp.Updater:
		return &updater{ev}, nil
	case resp.CodeFilter:
		return &codeFilter{ev}, nil
	}
	return ev, nil
}

// evaluator is an evaluator of the child's. A call that fails answers as
// the contract lets each stage fail: an error, an Error status or
// decision, nothing found.
type evaluator struct {
	c   *Client
	id  int64
	gen int

	mu sync.Mutex
	// gates and behaviour are what the filter phase runs with, sent with
	// every Filter and FilterCodes: nil until set.
	gates     map[string]bool
	behaviour *preempt.Behaviour
	// filterErr is why the last filter phase failed in the child, until
	// the next Preempt reports it or a filter phase succeeds.
	filterErr error
}

var (
	_ preempt.GateSetter      = (*evaluator)(nil)
	_ preempt.BehaviourSetter = (*evaluator)(nil)
)

// SetFeatureGates sets the gates the child's evaluator filters with, when
// it is a preempt.GateSetter.
func (ev *evaluator) SetFeatureGates(gates map[string]bool) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.gates = maps.Clone(gates)
	if ev.gates == nil {
		ev.gates = map[string]bool{} // set, to none: sent as {}
	}
}

// SetBehaviour sets the release behaviour the child's evaluator filters
// with, when it is a preempt.BehaviourSetter.
func (ev *evaluator) SetBehaviour(b preempt.Behaviour) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.behaviour = &b
}

// filter runs a filter phase (Filter or FilterCodes) in the child with
// the gates and behaviour set, and keeps its failure for the next
// Preempt.
func (ev *evaluator) filter(method string, pod *v1.Pod) (Response, error) {
	ev.mu.Lock()
	req := &Request{Method: method, Pod: pod, FeatureGates: ev.gates, Behaviour: ev.behaviour}
	ev.mu.Unlock()
	resp, err := ev.do(req, nil)
	if err == nil && method == MethodFilter && resp.Filter == nil {
		err = errors.New("wire: the child answered Filter with no result")
	}
	if err != nil {
		err = fmt.Errorf("wire: the filter phase (%s) failed in the child: %w", method, err)
	}
	ev.mu.Lock()
	ev.filterErr = err
	ev.mu.Unlock()
	return resp, err
}

type updater struct{ *evaluator }
type codeFilter struct{ *evaluator }
type updaterCodeFilter struct{ *evaluator }

func (u *updater) Update(cl *preempt.Cluster, ch preempt.Change) error { return u.update(cl, ch) }
func (u *updaterCodeFilter) Update(cl *preempt.Cluster, ch preempt.Change) error {
	return u.update(cl, ch)
}
func (f *codeFilter) FilterCodes(ctx context.Context, pod *v1.Pod, dst []preempt.Code) []preempt.Code {
	return f.filterCodes(pod, dst)
}
func (f *updaterCodeFilter) FilterCodes(ctx context.Context, pod *v1.Pod, dst []preempt.Code) []preempt.Code {
	return f.filterCodes(pod, dst)
}

func (ev *evaluator) do(req *Request, cs kubernetes.Interface) (Response, error) {
	req.Evaluator = ev.id
	resp, err := ev.c.call(req, cs, ev.gen)
	if err == nil && resp.Error != "" {
		err = &remoteError{msg: resp.Error}
		if resp.ErrorStatus != nil {
			err = &remoteError{msg: resp.Error, status: &apierrors.StatusError{ErrStatus: *resp.ErrorStatus}}
		}
	}
	return resp, err
}

// remoteError is an error of the child's implementation: its text as it
// was, and the API Status it wrapped, if any.
type remoteError struct {
	msg    string
	status *apierrors.StatusError
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error {
	if e.status == nil {
		return nil
	}
	return e.status
}

func (ev *evaluator) update(cl *preempt.Cluster, ch preempt.Change) error {
	_, err := ev.do(&Request{Method: MethodUpdate, Cluster: cl, Change: &ch}, nil)
	return err
}

// filterCodes answers no code when the child failed (the next Preempt
// says why).
func (ev *evaluator) filterCodes(pod *v1.Pod, dst []preempt.Code) []preempt.Code {
	resp, err := ev.filter(MethodFilterCodes, pod)
	if err != nil {
		return dst[:0]
	}
	return append(dst[:0], resp.Codes...)
}

// Filter answers nothing found when the child failed (the next Preempt
// says why).
func (ev *evaluator) Filter(_ context.Context, pod *v1.Pod) preempt.FilterResult {
	resp, err := ev.filter(MethodFilter, pod)
	if err != nil {
		return preempt.FilterResult{}
	}
	return *resp.Filter
}

func (ev *evaluator) PodEligibleToPreemptOthers(req *preempt.Request) (bool, string) {
	resp, err := ev.do(&Request{Method: MethodPodEligibleToPreemptOthers, Request: req}, nil)
	if err != nil {
		return false, err.Error()
	}
	return resp.Eligible, resp.Message
}

func (ev *evaluator) FindCandidates(_ context.Context, req *preempt.Request) (preempt.DryRun, error) {
	resp, err := ev.do(&Request{Method: MethodFindCandidates, Request: req}, nil)
	var dr preempt.DryRun
	if resp.DryRun != nil {
		dr = *resp.DryRun
	}
	return dr, err
}

func (ev *evaluator) DryRunPreemption(_ context.Context, req *preempt.Request, potential []string, offset, numCandidates int32) preempt.DryRun {
	resp, err := ev.do(&Request{Method: MethodDryRunPreemption, Request: req, Potential: potential, Offset: offset, NumCandidates: numCandidates}, nil)
	if err != nil || resp.DryRun == nil {
		return preempt.DryRun{Errors: []string{fmt.Sprint(err)}}
	}
	return *resp.DryRun
}

func (ev *evaluator) SelectVictimsOnNode(_ context.Context, req *preempt.Request, node string) ([]preempt.Victim, int, preempt.Status) {
	resp, err := ev.do(&Request{Method: MethodSelectVictimsOnNode, Request: req, Node: node}, nil)
	if err != nil || resp.Status == nil {
		return nil, 0, preempt.Status{Code: preempt.Error, Reasons: []string{fmt.Sprint(err)}}
	}
	return resp.Victims, resp.NumViolating, *resp.Status
}

func (ev *evaluator) SelectCandidate(candidates []preempt.Candidate, req *preempt.Request) *preempt.Candidate {
	resp, err := ev.do(&Request{Method: MethodSelectCandidate, Candidates: candidates, Request: req}, nil)
	switch {
	case err != nil:
		return nil
	case resp.Chosen != nil:
		return resp.Chosen
	case resp.Selected >= 0 && resp.Selected < len(candidates):
		return &candidates[resp.Selected]
	}
	return nil
}

func (ev *evaluator) PrepareCandidate(_ context.Context, cs kubernetes.Interface, cand *preempt.Candidate, req *preempt.Request) error {
	resp, err := ev.do(&Request{Method: MethodPrepareCandidate, Candidate: cand, Request: req}, cs)
	if resp.Background != nil {
		return resp.Background
	}
	return err
}

// Preempt is an Error decision, without asking the child, right after a
// filter phase that failed in it: the request's filter codes are then not
// the filter phase's (upstream's scheduling cycle would have ended in the
// filter's error, before PostFilter).
func (ev *evaluator) Preempt(_ context.Context, cs kubernetes.Interface, req *preempt.Request) preempt.Decision {
	ev.mu.Lock()
	err := ev.filterErr
	ev.filterErr = nil
	ev.mu.Unlock()
	var resp Response
	if err == nil {
		resp, err = ev.do(&Request{Method: MethodPreempt, Request: req}, cs)
	}
	if err != nil || resp.Decision == nil {
		return preempt.Decision{Status: preempt.Error, Message: fmt.Sprint(err), Victims: []preempt.Victim{}, Candidates: []preempt.Candidate{}, NodeStatuses: []preempt.NodeStatus{}}
	}
	return *resp.Decision
}

// Background errors keep their type across the wire.
var _ error = (*actuation.BackgroundError)(nil)
