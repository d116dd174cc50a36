package upstream_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"
	"sigs.k8s.io/yaml"

	"github.com/preemptbench/preemptbench/internal/conformance"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/upstream"
)

// The adapter decides as kube-scheduler decides on the random problems
// the differential properties draw with volumes (GenVolumes) and with
// resource claims (GenClaims), not only on the table cases: the filter
// phase is kube-scheduler's field by field, and so is what its PostFilter
// chain (DefaultPreemption, then DynamicResources) answers, status and
// message, the nominated node and the pods its asynchronous preemption
// deletes. kube-scheduler's dry run starts at a random offset and its
// goroutines order the candidates, so its node may be any candidate that
// ties the adapter's on all five of pickOneNodeForPreemption's criteria
// (reference.Pick). Nominated pods are dropped (the scheduler here has
// no queue that would nominate them); each problem is run through a
// scheduler.New of its own.
func TestRandomVolumesAsKubeScheduler(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a kube-scheduler per problem")
	}
	for name, gen := range map[string]*rapid.Generator[conformance.Input]{
		"volumes": conformance.GenVolumes(4),
		"claims":  conformance.GenClaims(4),
	} {
		t.Run(name, func(t *testing.T) {
			outcomes := map[string]int{}
			defer func() { t.Logf("outcomes: %v", outcomes) }()
			rapid.Check(t, func(rt *rapid.T) {
				in := gen.Draw(rt, "input")
				c, p := withoutNominations(in.Cluster, in.Request.Pod)
				if u := (upstream.Impl{}).Unmodelled(c, p); u != nil {
					outcomes["refused"]++
					rt.Skipf("refused: %v", u)
				}
				if list, err := synth.ListYAML(c); err == nil {
					pod, _ := yaml.Marshal(p)
					rt.Logf("cluster:\n%s\npod:\n%s", list, pod)
				}
				outcomes[checkPreemptionAsKubeScheduler(rt, c, p)]++
			})
		})
	}
}

// checkPreemptionAsKubeScheduler checks the adapter's filter phase and
// decision on c and p against kube-scheduler's (TestRandomVolumesAsKubeScheduler).
// It returns the outcome: "fits", or the decision's status.
func checkPreemptionAsKubeScheduler(t tb, c *preempt.Cluster, p *v1.Pod) string {
	t.Helper()
	ctx := context.Background()
	want, err := upstream.KubeSchedulerFilter(ctx, c, p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := harness.Decide(ctx, upstream.Impl{ListOrderTie: true}, c, p, preempt.DefaultConfig(), 0, volumeNow)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got.Filter); diff != "" {
		t.Fatalf("filter (-kube-scheduler +adapter):\n%s", diff)
	}
	if len(want.Feasible) > 0 {
		return "fits"
	}
	d := got.Decision
	// kube-scheduler sends no delete for a victim already terminating
	// (prepareCandidateAsync).
	terminating := map[string]bool{}
	for _, q := range c.Pods {
		if q.DeletionTimestamp != nil {
			terminating[q.Namespace+"/"+q.Name] = true
		}
	}
	deletes := func(vs []preempt.Victim) []string {
		var keys []string
		for _, v := range vs {
			if k := v.Namespace + "/" + v.Name; !terminating[k] {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		return keys
	}
	ks, err := upstream.KubeSchedulerPreempt(ctx, c, p, len(deletes(d.Victims)))
	if err != nil {
		t.Fatal(err)
	}
	// The decision's message is DefaultPreemption's without the
	// "preemption: " its PostFilter adds (preempt/messages.go).
	if ks.Status.Code().String() != string(d.Status) || strings.TrimPrefix(ks.Status.Message(), "preemption: ") != d.Message {
		t.Fatalf("PostFilter: kube-scheduler %s %q, adapter %s %q", ks.Status.Code(), ks.Status.Message(), d.Status, d.Message)
	}
	if ks.NominatedNode == "" {
		if d.NominatedNode != "" || len(ks.Deleted) != 0 {
			t.Fatalf("kube-scheduler nominated none and deleted %v; the adapter nominated %q", ks.Deleted, d.NominatedNode)
		}
		return string(d.Status)
	}
	at := slices.IndexFunc(d.Candidates, func(cand preempt.Candidate) bool { return cand.Node == ks.NominatedNode })
	if at < 0 {
		t.Fatalf("kube-scheduler nominated %s, not among the adapter's candidates %v", ks.NominatedNode, d.Candidates)
	}
	winner, losses := reference.Pick(d.Candidates, reference.PickCriteria(c, volumeNow))
	if d.Candidates[winner].Node != d.NominatedNode {
		t.Fatalf("the adapter nominated %s, its candidates' pick is %s", d.NominatedNode, d.Candidates[winner].Node)
	}
	if at != winner && losses[at].Criterion != len(reference.PickCriteria(c, volumeNow)) {
		t.Fatalf("kube-scheduler nominated %s, which loses to %s on criterion %d", ks.NominatedNode, d.NominatedNode, losses[at].Criterion)
	}
	if diff := cmp.Diff(deletes(d.Candidates[at].Victims), ks.Deleted); diff != "" {
		t.Fatalf("victims on %s (-adapter +kube-scheduler deleted):\n%s", ks.NominatedNode, diff)
	}
	if ks.NominatedNode != d.NominatedNode {
		return "Success, a tie"
	}
	return string(d.Status)
}

// withoutNominations is c without its pods that are not bound, and p not
// nominated.
func withoutNominations(c *preempt.Cluster, p *v1.Pod) (*preempt.Cluster, *v1.Pod) {
	c = c.DeepCopy()
	var pods []*v1.Pod
	for _, q := range c.Pods {
		if preempt.IsBound(q) {
			pods = append(pods, q)
		}
	}
	c.Pods = pods
	p = p.DeepCopy()
	p.Status.NominatedNodeName = ""
	return c, p
}
