package upstream_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
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
	want, got := filterAsKubeScheduler(t, c, p)
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
	// "preemption: " its PostFilter adds (preempt/messages.go); a
	// Success's names its node, which may be another of a tie (below).
	msg := strings.TrimPrefix(ks.Status.Message(), "preemption: ")
	if ks.NominatedNode != "" && d.NominatedNode != "" {
		msg = strings.Replace(msg, "on node "+ks.NominatedNode+",", "on node "+d.NominatedNode+",", 1)
	}
	if ks.Status.Code().String() != string(d.Status) || msg != d.Message {
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

// A ReadWriteOncePod claim is counted once at PreFilter however many pods
// use it (IsPVCUsedByPods), and RemovePod subtracts one for each pod it
// removes that uses it: on n1, two pods use the claim; evicting one of
// them brings the count to zero, so the preemptor is nominated there with
// one victim while the other still holds the claim (the reprieve puts it
// back: the count is zero again, and zero is no conflict). On n3, evicting
// its one user (of priority 1) would do as well, at a higher cost. kube-scheduler decides
// the same: checkPreemptionAsKubeScheduler.
func TestRWOPCountedOnceRemovedPerPod(t *testing.T) {
	c := volumeCluster()
	c.PVs = append(c.PVs, volume("pv-data", "csi", "data", "", v1.ReadWriteOncePod))
	c.PVCs = append(c.PVCs, claim("data", "csi", "pv-data", v1.ReadWriteOncePod))
	uses := []v1.Volume{claimVolume("data", "data")}
	c.Pods[0].Spec.Volumes = uses              // low-n1
	c.Pods[2].Spec.Volumes = uses              // low-n3
	c.Pods[2].Spec.Priority = ptr.To[int32](1) // so that n1 wins, not a tie
	c.Pods = append(c.Pods, pod("user-n1", "n1", 5, "100m", "1Gi").Volumes(uses).Obj())
	p := volumePod(claimVolume("data", "data"))()
	d := checkPreemptionAsKubeScheduler(t, c, p)
	got, err := harness.Decide(context.Background(), upstream.Impl{ListOrderTie: true}, c, p, preempt.DefaultConfig(), 0, volumeNow)
	if err != nil {
		t.Fatal(err)
	}
	var victims []string
	for _, v := range got.Decision.Victims {
		victims = append(victims, v.Name)
	}
	if d != "Success" || got.Decision.NominatedNode != "n1" || !slices.Equal(victims, []string{"low-n1"}) {
		t.Errorf("decision %s on %q, victims %v; want Success on n1, victims [low-n1] (user-n1 keeps the claim)", d, got.Decision.NominatedNode, victims)
	}
}
