package agreement

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
)

// Upstream reads an extender's answer in map order: an error naming
// another bad node than the reference's is explained, one naming a node
// that is not bad is not.
func TestExtenderLookupOrder(t *testing.T) {
	c := &preempt.Cluster{
		Nodes: []*v1.Node{testobj.MakeNode().Name("n1").Obj(), testobj.MakeNode().Name("n2").Obj()},
		Pods: []*v1.Pod{testobj.MakePod().Namespace("default").Name("a").UID("uid-a").Node("n1").Obj(),
			testobj.MakePod().Namespace("default").Name("b").UID("uid-b").Node("n2").Obj()},
	}
	// n1's candidate evicts a (on n1) and b (its group's member on n2);
	// n2's evicts b and a.
	cands := []preempt.Candidate{
		{Node: "n1", Victims: []preempt.Victim{{Namespace: "default", Name: "a"}, {Namespace: "default", Name: "b"}}},
		{Node: "n2", Victims: []preempt.Victim{{Namespace: "default", Name: "b"}, {Namespace: "default", Name: "a"}}},
	}
	claim := func(ext, uid, node string) string {
		return "extender: " + ext + " claims to preempt pod (UID: &{" + uid + "}) on node: " + node + ", but the pod is not found on that node"
	}
	ref := preempt.Decision{Status: preempt.Error, Message: claim("http://x/keep", "uid-b", "n1"), Candidates: cands}
	for _, tc := range []struct {
		name string
		msg  string
		want bool
	}{
		{"another node's remote member", claim("http://x/keep", "uid-a", "n2"), true},
		{"a node not in the cluster", `nodeinfo not found for node name "ghost"`, true},
		{"a node of the cluster as not found", `nodeinfo not found for node name "n2"`, false},
		{"a pod that is on that node", claim("http://x/keep", "uid-b", "n2"), false},
		{"another extender", claim("http://x/other", "uid-a", "n2"), false},
		{"a node without a candidate", claim("http://x/keep", "uid-a", "n3"), false},
		{"another error", "some other error", false},
	} {
		got := ref
		got.Message = tc.msg
		if _, ok := ExtenderAnswerOrder(c, ref, got); ok != tc.want {
			t.Errorf("%s: explained %v, want %v", tc.name, ok, tc.want)
		}
	}
	empty := func(node string) preempt.Decision {
		return preempt.Decision{Status: preempt.Error, Message: `expected at least one victim pod on node "` + node + `"`}
	}
	if _, ok := ExtenderAnswerOrder(c, empty("n1"), empty("n2")); !ok {
		t.Error("two nodes answered without victims: not explained")
	}
	if _, ok := ExtenderAnswerOrder(c, empty("n1"), preempt.Decision{Status: preempt.Error, Message: claim("http://x/keep", "uid-a", "n2")}); ok {
		t.Error("an empty node against a reading error: explained")
	}
}
