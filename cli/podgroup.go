package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/preemptbench/preemptbench/harness"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/scenario"
)

// PodGroupDecisionJSON is `decide -pod-group`'s output for one
// implementation.
type PodGroupDecisionJSON struct {
	Implementation string       `json:"implementation"`
	Status         preempt.Code `json:"status"`
	// Message is PodGroupPostFilter's, "pod group preemption: " prefix
	// included.
	Message                string               `json:"message"`
	Nominations            []preempt.Nomination `json:"nominations"`
	NumPDBViolations       int                  `json:"numPDBViolations"`
	NumPodGroupDisruptions int                  `json:"numPodGroupDisruptions"`
	Victims                []preempt.Victim     `json:"victims"`
	Actions                []preempt.Action     `json:"actions,omitempty"`
}

// loadPodGroup reads -pod-group: one PodGroup and its unscheduled member
// pods, in the file's order.
func loadPodGroup(opts decideOptions) (*preempt.PodGroupRequest, error) {
	data, err := scenario.ReadInput(opts.podGroupFile, opts.loadOpts)
	if err != nil {
		return nil, badf("%v", err)
	}
	g, _, err := scenario.LoadClusterWith(opts.podGroupFile, data, opts.loadOpts)
	if err != nil {
		return nil, badf("-pod-group: %v", err)
	}
	switch {
	case len(g.CompositePodGroups) > 0:
		return nil, badf("-pod-group %s: a CompositePodGroup preemptor is not supported yet", opts.podGroupFile)
	case len(g.PodGroups) != 1:
		return nil, badf("-pod-group %s: want one PodGroup, found %d", opts.podGroupFile, len(g.PodGroups))
	case len(g.Pods) == 0:
		return nil, badf("-pod-group %s: no member pods", opts.podGroupFile)
	}
	req := &preempt.PodGroupRequest{PodGroup: g.PodGroups[0], Pods: g.Pods, Config: opts.cfg, Now: opts.now}
	if err := req.Validate(); err != nil {
		return nil, badf("-pod-group %s: %v", opts.podGroupFile, err)
	}
	return req, nil
}

// decidePodGroup runs `decide -pod-group`: each implementation's gang
// preemption, through a fake clientset of the cluster.
func decidePodGroup(opts decideOptions, stdout, stderr io.Writer) error {
	if opts.sched != nil || opts.explain || len(opts.faults) > 0 || opts.text || opts.all {
		return badf("-pod-group takes none of -config, -explain, -fail, -o text or several implementations yet")
	}
	cluster, opts, err := opts.loadCluster(stderr)
	if err != nil {
		return err
	}
	req, err := loadPodGroup(opts)
	if err != nil {
		return err
	}
	impl := opts.impls[0]
	ev, err := impl.NewEvaluator(cluster)
	if err != nil {
		return err
	}
	pg, ok := ev.(preempt.PodGroupPreempter)
	if !ok {
		return badf("%s does not model gang preemption (pod groups, %s=true)", impl.Name(), preempt.GenericWorkloadGate)
	}
	cs := harness.NewClientset(cluster, nil)
	for _, p := range req.Pods {
		_ = cs.Tracker().Add(p)
	}
	before := len(cs.Actions())
	d := pg.PreemptPodGroup(context.Background(), cs, req)
	out := PodGroupDecisionJSON{Implementation: impl.Name(), Status: d.Status, Message: d.Message, Nominations: d.Nominations,
		NumPDBViolations: d.NumPDBViolations, NumPodGroupDisruptions: d.NumPodGroupDisruptions, Victims: d.Victims}
	if opts.actions {
		out.Actions = harness.Actions(cs.Actions()[before:])
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("writing the decision: %w", err)
	}
	return nil
}
