package preempt

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func nodesNamed(names ...string) *Cluster {
	c := &Cluster{}
	for _, n := range names {
		c.Nodes = append(c.Nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	return c
}

// NodeOrder.Codes puts each node's code at its cluster position, whatever
// the cluster's order, with Success for feasible nodes and
// UnschedulableAndUnresolvable for nodes the result does not name.
func TestNodeOrderCodes(t *testing.T) {
	c := nodesNamed("c", "a", "d", "b", "e")
	f := FilterResult{
		Feasible: []string{"d"},
		NodeStatuses: []NodeStatus{
			{Node: "a", Code: Unschedulable},
			{Node: "c", Code: UnschedulableAndUnresolvable},
			{Node: "e", Code: Unschedulable},
			{Node: "zz", Code: Unschedulable}, // not a node of c
		},
	}
	got := NewNodeOrder(c).Codes(f, make([]Code, 1))
	want := []Code{UnschedulableAndUnresolvable, Unschedulable, Success, UnschedulableAndUnresolvable, Unschedulable}
	if !slices.Equal(got, want) {
		t.Fatalf("Codes = %v, want %v", got, want)
	}
}

// Codes and Filter say the same through FilterCodes; ValidateFor refuses
// Codes of the wrong length and Validate a code that is not a failure.
func TestRequestCodes(t *testing.T) {
	c := nodesNamed("b", "a")
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u"}}
	req := &Request{Pod: pod, Codes: []Code{Unschedulable, UnschedulableAndUnresolvable}, Config: DefaultConfig(), Filter: map[string]Code{"a": Unschedulable}}
	if err := req.ValidateFor(c); err != nil {
		t.Fatal(err)
	}
	m := req.FilterCodes(c)
	if m["b"] != Unschedulable || m["a"] != UnschedulableAndUnresolvable || len(m) != 2 {
		t.Fatalf("FilterCodes = %v: Codes must win over Filter", m)
	}
	short := *req
	short.Codes = []Code{Unschedulable}
	if err := short.ValidateFor(c); err == nil || !strings.Contains(err.Error(), "1 filter codes for 2 nodes") {
		t.Fatalf("ValidateFor(short codes) = %v", err)
	}
	bad := *req
	bad.Codes = []Code{Success, Unschedulable}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), `node #0 has filter code "Success"`) {
		t.Fatalf("Validate(Success code) = %v", err)
	}
}
