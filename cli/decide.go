package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/agreement"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/scenario"
	"github.com/preemptbench/preemptbench/upstream"
)

// Implementations are the implementations decide can run, by name; the
// first is the one the others are compared with.
var Implementations = []preempt.Implementation{reference.Impl{}, upstream.Impl{}, optimized.Impl{}}

func implByName(name string) (preempt.Implementation, bool) {
	for _, impl := range Implementations {
		if impl.Name() == name {
			return impl, true
		}
	}
	return nil, false
}

func implNames() string {
	var names []string
	for _, impl := range Implementations {
		names = append(names, impl.Name())
	}
	return strings.Join(names, ", ")
}

// DecisionJSON is the JSON form of a decision, keys in this order.
type DecisionJSON struct {
	Implementation     string              `json:"implementation"`
	Status             preempt.Code        `json:"status"`
	Message            string              `json:"message"`
	FeasibleNodes      []string            `json:"feasibleNodes"`
	NominatedNode      string              `json:"nominatedNode"`
	NumPDBViolations   int                 `json:"numPDBViolations"`
	Victims            []preempt.Victim    `json:"victims"`
	Candidates         []preempt.Candidate `json:"candidates"`
	ClearedNominations []preempt.PodRef    `json:"clearedNominations"`
}

// ToJSON converts an outcome, with every list non-nil.
func ToJSON(o preempt.Outcome) DecisionJSON {
	d := o.Decision
	out := DecisionJSON{
		Implementation:     o.Implementation,
		Status:             d.Status,
		Message:            d.Message,
		FeasibleNodes:      append([]string{}, o.Feasible...),
		NominatedNode:      d.NominatedNode,
		NumPDBViolations:   d.NumPDBViolations,
		Victims:            append([]preempt.Victim{}, d.Victims...),
		Candidates:         []preempt.Candidate{},
		ClearedNominations: preempt.ClearedNominations(d.Actions),
	}
	sort.Strings(out.FeasibleNodes)
	for _, c := range d.Candidates {
		c.Victims = append([]preempt.Victim{}, c.Victims...)
		out.Candidates = append(out.Candidates, c)
	}
	return out
}

func runDecide(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("decide", flag.ContinueOnError)
	fs.SetOutput(stderr)
	clusterFile := fs.String("cluster", "", "cluster file: a kubectl List of nodes, pods and pdbs (YAML or JSON)")
	podFile := fs.String("pod", "", "the preemptor pod (YAML or JSON)")
	implName := fs.String("impl", "reference", "implementation: "+implNames()+" or all")
	offset := fs.Int("offset", 0, "dry-run offset into the potential nodes (upstream draws it at random)")
	nowFlag := fs.String("now", "", "RFC3339 time used as start time of pods without one (default: the current time)")
	output := fs.String("o", "json", "output: json or text")
	pct := fs.Int("min-candidate-nodes-percentage", int(preempt.DefaultConfig().MinCandidateNodesPercentage), "DefaultPreemptionArgs.minCandidateNodesPercentage")
	abs := fs.Int("min-candidate-nodes-absolute", int(preempt.DefaultConfig().MinCandidateNodesAbsolute), "DefaultPreemptionArgs.minCandidateNodesAbsolute")
	if err := fs.Parse(args); err != nil {
		return ExitBadInput
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "compare decide: "+format+"\n", a...)
		return ExitBadInput
	}
	if fs.NArg() > 0 {
		return bad("unexpected arguments %q", fs.Args())
	}
	if *clusterFile == "" || *podFile == "" {
		return bad("-cluster and -pod are required")
	}
	if *output != "json" && *output != "text" {
		return bad("-o must be json or text, not %q", *output)
	}
	if *offset < 0 || *offset > 1<<31-1 {
		return bad("-offset %d out of range 0..%d", *offset, 1<<31-1)
	}
	if *pct < -1<<31 || *pct > 1<<31-1 || *abs < -1<<31 || *abs > 1<<31-1 {
		return bad("candidate settings out of int32 range")
	}
	cfg := preempt.Config{MinCandidateNodesPercentage: int32(*pct), MinCandidateNodesAbsolute: int32(*abs)}
	if err := cfg.Validate(); err != nil {
		return bad("invalid candidate settings: %v", err)
	}
	now := time.Now()
	if *nowFlag != "" {
		t, err := time.Parse(time.RFC3339, *nowFlag)
		if err != nil {
			return bad("-now: %v", err)
		}
		now = t
	}
	var impls []preempt.Implementation
	if *implName == "all" {
		impls = Implementations
	} else {
		impl, ok := implByName(*implName)
		if !ok {
			return bad("unknown implementation %q (known: %s, all)", *implName, implNames())
		}
		impls = []preempt.Implementation{impl}
	}

	clusterData, err := os.ReadFile(*clusterFile)
	if err != nil {
		return bad("%v", err)
	}
	cluster, err := scenario.LoadCluster(*clusterFile, clusterData)
	if err != nil {
		return bad("%v", err)
	}
	podData, err := os.ReadFile(*podFile)
	if err != nil {
		return bad("%v", err)
	}
	pod, err := scenario.LoadPod(*podFile, podData)
	if err != nil {
		return bad("%v", err)
	}
	cluster = withoutPod(cluster, pod)
	if err := cluster.Validate(); err != nil {
		return bad("%v", err)
	}
	for _, f := range scenario.Unmodelled(pod) {
		fmt.Fprintf(stderr, "compare decide: warning: pod %s uses %s, which the filters here do not model; the decision ignores it\n", preempt.Key(pod.Namespace, pod.Name), f)
	}

	var outcomes []preempt.Outcome
	for _, impl := range impls {
		o, err := preempt.Decide(context.Background(), impl, cluster, pod, cfg, int32(*offset), now)
		if err != nil {
			return bad("%s: %v", impl.Name(), err)
		}
		outcomes = append(outcomes, o)
	}
	var outs []DecisionJSON
	for _, o := range outcomes {
		outs = append(outs, ToJSON(o))
	}
	// The first implementation is the reference; the others are compared
	// with what it decided, the final tie of upstream reconciled.
	wants := make([]DecisionJSON, len(outs))
	for i := range wants {
		wants[i] = outs[0]
	}
	var diffErrs []string
	for i, o := range outcomes[1:] {
		ref := outcomes[0]
		if ref.Request == nil || o.Request == nil {
			continue
		}
		refEv, err := impls[0].NewEvaluator(cluster)
		if err != nil {
			return bad("%v", err)
		}
		want, note, err := agreement.Expected(context.Background(), refEv, cluster, ref.Request, ref.Decision, o.Decision, impls[i+1])
		if err != nil {
			diffErrs = append(diffErrs, err.Error())
			continue
		}
		if note != "" {
			fmt.Fprintf(stderr, "compare decide: note: %s\n", note)
			ref.Decision = want
			wants[i+1] = ToJSON(ref)
		}
	}

	var buf bytes.Buffer
	if *output == "json" {
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		var v any = outs[0]
		if *implName == "all" {
			v = outs
		}
		if err := enc.Encode(v); err != nil {
			return bad("%v", err)
		}
	} else {
		for _, o := range outs {
			writeText(&buf, o)
		}
	}
	code := ExitOK
	diffOut := io.Writer(&buf)
	if *output == "json" {
		diffOut = stderr
	}
	for _, e := range diffErrs {
		fmt.Fprintf(diffOut, "%s\n", e)
		code = ExitDiffer
	}
	for i, o := range outs[1:] {
		name := o.Implementation
		ref := wants[i+1]
		ref.Implementation, o.Implementation = "", ""
		if diff := cmp.Diff(ref, o); diff != "" {
			fmt.Fprintf(diffOut, "%s differs from %s (-%s +%s):\n%s", name, outs[0].Implementation, outs[0].Implementation, name, diff)
			code = ExitDiffer
		}
	}
	stdout.Write(buf.Bytes())
	return code
}

// withoutPod drops the preemptor's own copy from the cluster (a dump taken
// while it was pending holds it); a bound copy is an error Validate reports.
func withoutPod(c *preempt.Cluster, pod *v1.Pod) *preempt.Cluster {
	out := *c
	out.Pods = nil
	for _, p := range c.Pods {
		if p.Namespace == pod.Namespace && p.Name == pod.Name && !preempt.IsBound(p) {
			continue
		}
		out.Pods = append(out.Pods, p)
	}
	return &out
}

func writeText(w io.Writer, d DecisionJSON) {
	fmt.Fprintf(w, "implementation: %s\nstatus:         %s\n", d.Implementation, d.Status)
	if d.Message != "" {
		fmt.Fprintf(w, "message:        %s\n", d.Message)
	}
	if len(d.FeasibleNodes) > 0 {
		fmt.Fprintf(w, "feasible nodes: %s\n", strings.Join(d.FeasibleNodes, ", "))
	}
	if d.NominatedNode != "" {
		fmt.Fprintf(w, "nominated node: %s (%d PDB violations)\n", d.NominatedNode, d.NumPDBViolations)
		for _, v := range d.Victims {
			fmt.Fprintf(w, "  victim %s/%s priority %d\n", v.Namespace, v.Name, v.Priority)
		}
	}
	if len(d.Candidates) > 0 {
		fmt.Fprintf(w, "candidates:\n")
		for _, c := range d.Candidates {
			fmt.Fprintf(w, "  %s: %d victims, %d PDB violations\n", c.Node, len(c.Victims), c.NumPDBViolations)
		}
	}
	for _, p := range d.ClearedNominations {
		fmt.Fprintf(w, "cleared nomination: %s/%s\n", p.Namespace, p.Name)
	}
	fmt.Fprintln(w)
}
