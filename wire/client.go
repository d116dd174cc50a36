package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/preemptbench/preemptbench/internal/actuation"
	"github.com/preemptbench/preemptbench/preempt"
)

// Client is a preempt.Implementation served by a child process. Its
// methods are safe for concurrent use; calls go to the child one at a
// time.
type Client struct {
	args    []string
	timeout time.Duration
	// maxLine is the longest line read from the child (MaxLineBytes).
	maxLine int

	mu       sync.Mutex
	proc     *process // nil before the first call and after the child died
	name     string   // the child's, from its Hello
	gen      int      // counts the children started
	lastErr  error    // why the last child died
	startErr error    // why a child failed its handshake: no other is started
	released []int64  // evaluators to release in the next request
	lastID   int64
}

var _ preempt.Implementation = (*Client)(nil)
var _ preempt.Limited = (*Client)(nil)

// Command returns the implementation served by the child args[0] with
// args[1:], started on first use (again after it died), which may take
// at most timeout (DefaultTimeout when 0) for its handshake (starting and
// saying Hello) and for each answer (reading the request and answering
// it). A child that fails its handshake is not started again: every call
// answers that failure at once.
func Command(timeout time.Duration, args ...string) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{args: args, timeout: timeout, maxLine: MaxLineBytes}
}

// Name is the name the child gives in its Hello, cut to maxNameBytes
// ("exec:ARGS" when it cannot be started).
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

// Close stops the child, its process group and its temporary directory,
// and returns once they are gone.
func (c *Client) Close() error {
	c.mu.Lock()
	p := c.proc
	c.proc = nil
	c.mu.Unlock()
	if p != nil {
		p.kill()
		<-p.gone
	}
	return nil
}

// maxNameBytes is the longest child's name the client keeps: a name is
// printed in every message about the child.
const maxNameBytes = 100

// clipName cuts a name longer than maxNameBytes, on a character
// boundary, saying how long it was.
func clipName(name string) string {
	if len(name) <= maxNameBytes {
		return name
	}
	cut := maxNameBytes
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", name[:cut], len(name))
}

// start starts a child and reads its Hello, within the timeout. A child
// that fails this handshake is the client's answer from then on. c.mu is
// held.
func (c *Client) start() (*process, error) {
	if c.startErr != nil {
		return nil, c.startErr
	}
	p, err := c.handshake()
	if err != nil {
		c.startErr = err
		return nil, err
	}
	return p, nil
}

func (c *Client) handshake() (*process, error) {
	if len(c.args) == 0 {
		return nil, errors.New("wire: no command")
	}
	p, err := startProcess(c.args, c.maxLine)
	if err != nil {
		return nil, err
	}
	c.gen++
	c.proc = p
	c.released = nil
	line, err := c.read(p, "its Hello", time.Now().Add(c.timeout))
	if err != nil {
		return nil, err
	}
	var h Hello
	if err := json.Unmarshal(line, &h); err != nil || h.Protocol != Protocol {
		return nil, c.die(p, fmt.Errorf("wire: %s said %q first, want a Hello of protocol %s", c.args[0], clip(line), Protocol))
	}
	c.name = clipName(h.Name)
	return p, nil
}

// read waits for the child's next line until deadline; what names the
// awaited line in the errors.
func (c *Client) read(p *process, what string, deadline time.Time) ([]byte, error) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	timeout := func() error {
		return c.die(p, fmt.Errorf("wire: %s did not answer within %v (awaiting %s); killed", c.args[0], c.timeout, what))
	}
	select {
	case line := <-p.lines:
		return line, nil
	case <-p.done:
	case <-p.reaped:
		// Its last lines may still be on their way; a grandchild holding
		// its output is not waited for longer than grace.
		select {
		case line := <-p.lines:
			return line, nil
		case <-p.done:
		case <-time.After(grace):
		case <-timer.C:
			return nil, timeout()
		}
	case <-timer.C:
		return nil, timeout()
	}
	select {
	case line := <-p.lines:
		return line, nil
	default:
	}
	var tooLong errLineTooLong
	if errors.As(p.outErr, &tooLong) {
		return nil, c.die(p, fmt.Errorf("wire: %s %v (awaiting %s); killed", c.args[0], tooLong, what))
	}
	return nil, c.die(p, p.exitError(c.args[0]))
}

// die kills p and records why: the next call starts a new child.
func (c *Client) die(p *process, err error) error {
	p.kill()
	if c.proc == p {
		c.proc = nil
	}
	c.lastErr = err
	return err
}

// write sends v to the child, within deadline (a child that does not
// read its input is not waited on forever).
func (c *Client) write(p *process, v any, what string, deadline time.Time) error {
	if err := p.stdin.SetWriteDeadline(deadline); err != nil {
		return c.die(p, fmt.Errorf("wire: writing to %s: %w", c.args[0], err))
	}
	if _, err := p.stdin.Write(append(marshal(v), '\n')); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return c.die(p, fmt.Errorf("wire: %s did not read %s within %v; killed", c.args[0], what, c.timeout))
		}
		return c.die(p, fmt.Errorf("wire: writing to %s: %w", c.args[0], err))
	}
	return nil
}

// call sends req to the child (starting it when restart allows), answers
// its API calls on cs, and returns its answer. gen, when not 0, is the
// child the request's evaluator lives in. The request and its answer take
// at most the timeout, which starts again after each API call answered.
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
	what := fmt.Sprintf("request %d, %s", req.ID, req.Method)
	if req.Evaluator != 0 {
		what += fmt.Sprintf(" on evaluator %d", req.Evaluator)
	}
	deadline := time.Now().Add(c.timeout)
	if err := c.write(p, req, what, deadline); err != nil {
		return Response{}, err
	}
	for {
		line, err := c.read(p, "the answer to "+what, deadline)
		if err != nil {
			return Response{}, err
		}
		var resp Response
		if err := json.Unmarshal(line, &resp); err != nil {
			return Response{}, c.die(p, fmt.Errorf("wire: %s answered %q, not the protocol: %v", c.args[0], clip(line), err))
		}
		if resp.Call != nil {
			res := apiCall(cs, resp.Call)
			deadline = time.Now().Add(c.timeout)
			if err := c.write(p, res, "the result of its API call", deadline); err != nil {
				return Response{}, err
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
	now       *time.Time
	// filterErr is why the last filter phase failed in the child, until
	// the next Preempt reports it or a filter phase succeeds.
	filterErr error
}

var (
	_ preempt.GateSetter      = (*evaluator)(nil)
	_ preempt.BehaviourSetter = (*evaluator)(nil)
	_ preempt.ClockSetter     = (*evaluator)(nil)
)

// SetNow sets the clock the child's evaluator filters with, when it is a
// preempt.ClockSetter.
func (ev *evaluator) SetNow(now time.Time) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.now = &now
}

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
	req := &Request{Method: method, Pod: pod, FeatureGates: ev.gates, Behaviour: ev.behaviour, Now: ev.now}
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
