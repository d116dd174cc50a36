package wire

import (
	"encoding/json"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/preemptbench/preemptbench/internal/actuation"
	"github.com/preemptbench/preemptbench/preempt"
)

// Protocol is the version the child says in its Hello; the client refuses
// any other. A change that a child of the previous version would misread,
// or ignore and answer differently, is a new version (a child decodes
// unknown fields as absent): /2 sends the filter phase's feature gates and
// release behaviour, which a /1 child would ignore, filtering with its
// defaults.
const Protocol = "preemptbench-wire/2"

// Hello is the child's first line.
type Hello struct {
	Protocol string `json:"protocol"`
	Name     string `json:"name"`
}

// Methods of a Request.
const (
	MethodUnmodelled                 = "Unmodelled"
	MethodNewEvaluator               = "NewEvaluator"
	MethodUpdate                     = "Update"
	MethodFilter                     = "Filter"
	MethodFilterCodes                = "FilterCodes"
	MethodPodEligibleToPreemptOthers = "PodEligibleToPreemptOthers"
	MethodFindCandidates             = "FindCandidates"
	MethodDryRunPreemption           = "DryRunPreemption"
	MethodSelectVictimsOnNode        = "SelectVictimsOnNode"
	MethodSelectCandidate            = "SelectCandidate"
	MethodPrepareCandidate           = "PrepareCandidate"
	MethodPreempt                    = "Preempt"
)

// Request is one call of the parent. Which fields are set depends on the
// method.
type Request struct {
	ID     int64  `json:"id"`
	Method string `json:"method"`
	// Release names evaluators the parent no longer holds.
	Release []int64 `json:"release,omitempty"`

	Evaluator     int64               `json:"evaluator,omitempty"`
	Cluster       *preempt.Cluster    `json:"cluster,omitempty"`
	Change        *preempt.Change     `json:"change,omitempty"`
	Pod           *v1.Pod             `json:"pod,omitempty"`
	Request       *preempt.Request    `json:"request,omitempty"`
	Potential     []string            `json:"potential"`
	Offset        int32               `json:"offset,omitempty"`
	NumCandidates int32               `json:"numCandidates,omitempty"`
	Node          string              `json:"node,omitempty"`
	Candidates    []preempt.Candidate `json:"candidates"`
	Candidate     *preempt.Candidate  `json:"candidate,omitempty"`
	// FeatureGates and Behaviour, with Filter and FilterCodes, are what
	// the parent's evaluator was last given for its filter phase
	// (preempt.GateSetter, preempt.BehaviourSetter), which the child sets
	// on its evaluator before it filters. Absent when never given, so
	// that the child's evaluator keeps its defaults; gates given as none
	// are {}.
	FeatureGates map[string]bool    `json:"featureGates,omitzero"`
	Behaviour    *preempt.Behaviour `json:"behaviour,omitempty"`
	// Now is the clock the filter phase reads (preempt.ClockSetter),
	// with Filter and FilterCodes; nil until the parent sets one.
	Now *time.Time `json:"now,omitempty"`
	// StartTimes are the start times of Cluster's and Change's pods to the
	// nanosecond (namespace/name: RFC 3339), which their JSON, as the
	// API's, gives to the second only: victims are ordered by them.
	StartTimes map[string]string `json:"startTimes,omitempty"`
}

// startTimes collects the start times of pods that have sub-second parts.
func startTimes(into map[string]string, pods []*v1.Pod) map[string]string {
	for _, p := range pods {
		if st := p.Status.StartTime; st != nil && st.Nanosecond() != 0 {
			if into == nil {
				into = map[string]string{}
			}
			into[preempt.Key(p.Namespace, p.Name)] = st.UTC().Format(time.RFC3339Nano)
		}
	}
	return into
}

// restoreStartTimes puts the precise start times back on the decoded
// pods.
func restoreStartTimes(times map[string]string, pods []*v1.Pod) error {
	if len(times) == 0 {
		return nil
	}
	for _, p := range pods {
		if s, ok := times[preempt.Key(p.Namespace, p.Name)]; ok {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return fmt.Errorf("start time of %s: %w", preempt.Key(p.Namespace, p.Name), err)
			}
			mt := metav1.NewTime(t)
			p.Status.StartTime = &mt
		}
	}
	return nil
}

// Response is the child's answer to the Request of the same ID.
type Response struct {
	ID int64 `json:"id"`
	// Error is the call's error, "" for none; Background is set when the
	// error is an *actuation.BackgroundError.
	Error      string                     `json:"error,omitempty"`
	Background *actuation.BackgroundError `json:"background,omitempty"`
	// ErrorStatus is the API's Status the error wraps, if any, so that
	// apierrors.IsForbidden and the like answer as in process.
	ErrorStatus *metav1.Status `json:"errorStatus,omitempty"`

	Unmodelled   *preempt.Unmodelled   `json:"unmodelled,omitempty"`
	Evaluator    int64                 `json:"evaluator,omitempty"`
	Updater      bool                  `json:"updater,omitempty"`
	CodeFilter   bool                  `json:"codeFilter,omitempty"`
	Filter       *preempt.FilterResult `json:"filter,omitempty"`
	Codes        []preempt.Code        `json:"codes"`
	Eligible     bool                  `json:"eligible,omitempty"`
	Message      string                `json:"message,omitempty"`
	DryRun       *preempt.DryRun       `json:"dryRun,omitempty"`
	Victims      []preempt.Victim      `json:"victims"`
	NumViolating int                   `json:"numViolating,omitempty"`
	Status       *preempt.Status       `json:"status,omitempty"`
	// Selected is the index SelectCandidate chose, -1 for none or for
	// Chosen, a candidate that is not one of the list's.
	Selected int                `json:"selected"`
	Chosen   *preempt.Candidate `json:"chosen,omitempty"`
	Decision *preempt.Decision  `json:"decision,omitempty"`

	// Call, when set, is an API call of the child's implementation and
	// not the answer yet (the parent answers it with a CallResult).
	Call *Call `json:"call,omitempty"`
}

// Call is an API call on a pod: get, patch (with its type, body and
// subresource) or delete.
type Call struct {
	Verb        string `json:"verb"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	Subresource string `json:"subresource,omitempty"`
	PatchType   string `json:"patchType,omitempty"`
	Patch       []byte `json:"patch,omitempty"`
	// Preconditions of a delete (UID, resourceVersion), as sent.
	Delete *metav1.DeleteOptions `json:"delete,omitempty"`
}

// CallResult answers a Call: the pod the API server returned, or the
// error, as the API's Status when it is one.
type CallResult struct {
	Pod    *v1.Pod        `json:"pod,omitempty"`
	Status *metav1.Status `json:"status,omitempty"`
	Error  string         `json:"error,omitempty"`
}

// DefaultTimeout is how long the client waits for one answer of the
// child (API calls answered in between restart it).
const DefaultTimeout = 60 * time.Second

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the protocol's own types always marshal
	}
	return b
}
