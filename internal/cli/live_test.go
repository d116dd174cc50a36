package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/preemptbench/preemptbench/internal/controlplane"
	"github.com/preemptbench/preemptbench/internal/synth"
)

// putCluster creates the objects of a built scenario in the API server as
// a cluster holds them: nodes, PDBs with their status, pods bound to their nodes with their
// status (phase, start time), and the preemptor pending, marked
// unschedulable as the scheduler marks it after a failed cycle.
func putCluster(t *testing.T, cs kubernetes.Interface, s *synth.Scenario) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range namespacesOf(s) {
		if ns == "default" {
			continue
		}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range s.Cluster.Nodes {
		got, err := cs.CoreV1().Nodes().Create(ctx, n.DeepCopy(), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got.Status = n.Status
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, pdb := range s.Cluster.PDBs {
		// The status is the disruption controller's, which does not run
		// here: it is written as the dump has it.
		got, err := cs.PolicyV1().PodDisruptionBudgets(pdb.Namespace).Create(ctx, pdb.DeepCopy(), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got.Status = pdb.Status
		if _, err := cs.PolicyV1().PodDisruptionBudgets(pdb.Namespace).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put := func(p *v1.Pod, status v1.PodStatus) {
		p = p.DeepCopy()
		p.ResourceVersion, p.UID = "", ""
		got, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got.Status = status
		if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range s.Cluster.Pods {
		put(p, p.Status)
	}
	put(s.Pod, v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{{
		Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonUnschedulable,
		LastTransitionTime: metav1.NewTime(s.Now), Message: "0/5 nodes are available",
	}}})
}

func namespacesOf(s *synth.Scenario) []string {
	seen := map[string]bool{s.Pod.Namespace: true}
	out := []string{s.Pod.Namespace}
	for _, p := range s.Cluster.Pods {
		if !seen[p.Namespace] {
			seen[p.Namespace] = true
			out = append(out, p.Namespace)
		}
	}
	return out
}

// podVersions is every pod's resourceVersion: a dry run changes none.
func podVersions(t *testing.T, cs kubernetes.Interface) map[string]string {
	t.Helper()
	list, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range list.Items {
		out[p.Namespace+"/"+p.Name] = p.ResourceVersion
	}
	return out
}

// TestDecideKubeconfig runs decide against a real kube-apiserver (and
// etcd) in this process, holding the pdb shape's cluster:
//   - -kubeconfig -pod NS/NAME gives, field by field and for every
//     implementation, the decision -cluster and -pod give on the files the
//     objects were created from;
//   - -apply=server-dry-run sends the decision's calls with dryRun=All:
//     the API server accepts each, and no pod changes;
//   - -pending finds the preemptor (marked unschedulable) and decides it.
func TestDecideKubeconfig(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kube-apiserver and etcd")
	}
	cp := controlplane.StartT(t)
	cs, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	if _, _, code := runCLI(t, "scenario", "-shape", "pdb", "-nodes", "5", "-dir", dir); code != ExitOK {
		t.Fatalf("scenario: exit %d", code)
	}
	s := synth.MustBuild("pdb", 5, 1)
	putCluster(t, cs, s)
	pod := s.Pod.Namespace + "/" + s.Pod.Name
	now := "-now=" + s.Now.Format("2006-01-02T15:04:05Z07:00")

	fromFiles, errFiles, code := runCLI(t, "decide", "-cluster", filepath.Join(dir, "cluster.yaml"), "-pod", filepath.Join(dir, "pod.yaml"), "-impl", "all", now)
	if code != ExitOK {
		t.Fatalf("decide -cluster: exit %d\n%s", code, errFiles)
	}
	live, errLive, code := runCLI(t, "decide", "-kubeconfig", kubeconfig, "-pod", pod, "-impl", "all", now)
	if code != ExitOK {
		t.Fatalf("decide -kubeconfig: exit %d\n%s", code, errLive)
	}
	var want, got []DecisionJSON
	if err := json.Unmarshal([]byte(fromFiles), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(live), &got); err != nil {
		t.Fatal(err)
	}
	if len(want) != 3 || want[0].Status != "Success" || len(want[0].Victims) == 0 {
		t.Fatalf("the files' decision is not a preemption by three implementations: %s", fromFiles)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decide -kubeconfig differs from decide -cluster on the same objects (-files +live):\n%s", diff)
	}

	before := podVersions(t, cs)
	out, stderr, code := runCLI(t, "decide", "-kubeconfig", kubeconfig, "-pod", pod, "-impl", "upstream", "-apply=server-dry-run", "-actions", now)
	if code != ExitOK {
		t.Fatalf("-apply=server-dry-run: exit %d\n%s", code, stderr)
	}
	var d DecisionJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.ServerDryRun) == 0 || len(d.ServerDryRun) != len(d.Actions) {
		t.Fatalf("server dry run sent %d calls for the decision's %d: %+v", len(d.ServerDryRun), len(d.Actions), d.ServerDryRun)
	}
	deletes := 0
	for i, a := range d.ServerDryRun {
		if a.Error != "" {
			t.Errorf("the API server refused %s: %s", a, a.Error)
		}
		if a.Verb != d.Actions[i].Verb || a.Name != d.Actions[i].Name || a.Subresource != d.Actions[i].Subresource {
			t.Errorf("call %d sent as %s, the decision made %s", i, a, d.Actions[i])
		}
		if a.Verb == "delete" {
			deletes++
		}
	}
	if deletes != len(d.Victims) {
		t.Errorf("%d deletions sent for %d victims", deletes, len(d.Victims))
	}
	if diff := cmp.Diff(before, podVersions(t, cs)); diff != "" {
		t.Errorf("a dry run changed pods (-before +after):\n%s", diff)
	}

	text, stderr, code := runCLI(t, "decide", "-kubeconfig", kubeconfig, "-pending", "-impl", "reference", "-o", "text", now)
	if code != ExitOK || !strings.Contains(text, "compare decide: pod "+pod+" (priority ") || !strings.Contains(text, "status:         Success") {
		t.Errorf("-pending: exit %d\n%s\n%s", code, text, stderr)
	}
}

// Bad -kubeconfig input is named, exit 2, before any API call.
func TestDecideKubeconfigBadInput(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-kubeconfig", missing, "-pod", "default/p"}, "-kubeconfig " + missing},
		{[]string{"-kubeconfig", missing, "-pod", "p"}, "-pod \"p\": with -kubeconfig, -pod is NAMESPACE/NAME"},
		{[]string{"-kubeconfig", missing}, "-kubeconfig needs -pod NAMESPACE/NAME"},
		{[]string{"-kubeconfig", missing, "-pending", "-pod", "a/b"}, "-pending decides for every unschedulable pod: drop -pod"},
		{[]string{"-kubeconfig", missing, "-pod", "a/b", "-cluster", "c.yaml"}, "drop -cluster"},
		{[]string{"-kubeconfig", missing, "-pod", "a/b", "-apply", "yes"}, "the only mode is server-dry-run"},
		{[]string{"-cluster", "c.yaml", "-pod", "p.yaml", "-apply", "server-dry-run"}, "they need -kubeconfig"},
	} {
		_, stderr, code := runCLI(t, append([]string{"decide"}, tc.args...)...)
		if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("decide %q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
