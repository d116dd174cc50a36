package scenario

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
)

const (
	nodeDoc = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"2\", memory: 1Gi, pods: \"10\"}}\n"
	podA    = "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: default, uid: a}\nspec: {nodeName: n1, priority: 1, containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}\n"
	podB    = "apiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: default, uid: b}\nspec: {nodeName: n1, priority: 2, containers: [{name: c}]}\n"
)

func indent(doc string) string {
	var out []string
	for i, l := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
		if i == 0 {
			out = append(out, "- "+l)
		} else {
			out = append(out, "  "+l)
		}
	}
	return strings.Join(out, "\n") + "\n"
}

// Every separator style gives the objects of the same List.
func TestLoadEverySeparatorStyle(t *testing.T) {
	list := "apiVersion: v1\nkind: List\nitems:\n" + indent(nodeDoc) + indent(podA) + indent(podB)
	want, _, err := LoadCluster("list.yaml", []byte(list))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"plain":             nodeDoc + "---\n" + podA + "---\n" + podB,
		"leading marker":    "---\n" + nodeDoc + "---\n" + podA + "---\n" + podB,
		"comment on marker": nodeDoc + "--- # the pods\n" + podA + "---   # b\n" + podB,
		"trailing spaces":   nodeDoc + "---   \n" + podA + "---\t\n" + podB,
		"end markers":       nodeDoc + "...\n---\n" + podA + "...\n" + podB + "...\n",
		"end markers only":  nodeDoc + "...\n" + podA + "...\n" + podB,
		"directives":        "%YAML 1.2\n---\n" + nodeDoc + "---\n" + podA + "---\n" + podB,
		"CRLF":              strings.ReplaceAll(nodeDoc+"---\n"+podA+"--- # x\n"+podB, "\n", "\r\n"),
		"content on marker": nodeDoc + "--- {apiVersion: v1, kind: Pod, metadata: {name: a, namespace: default, uid: a}, spec: {nodeName: n1, priority: 1, containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}}\n---\n" + podB,
	} {
		t.Run(name, func(t *testing.T) {
			got, _, err := LoadCluster("multi.yaml", []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(want, got) {
				t.Errorf("cluster differs from the List's:\n%s", cmp.Diff(want, got))
			}
		})
	}
}

func TestLoadFieldsAsTheAPIServer(t *testing.T) {
	tests := []struct {
		name, data string
		note       string // the note without -strict, the error with it
	}{
		{"wrong case", nodeDoc + "---\n" + strings.Replace(podA, "nodeName: n1", "nodeName: n1, NODENAME: n2", 1),
			`multi.yaml: document 2: pod default/a: unknown field "spec.NODENAME"`},
		{"unknown field", nodeDoc + "---\n" + strings.Replace(podA, "priority: 1", "priority: 1, prioritee: 3", 1),
			`multi.yaml: document 2: pod default/a: unknown field "spec.prioritee"`},
		{"duplicate YAML key", nodeDoc + "---\n" + strings.Replace(podA, "priority: 1", "priority: 1, priority: 7", 1),
			`multi.yaml: document 2 (pod default/a): duplicate field: line 4: key "priority" already set in map`},
		{"duplicate JSON field", `[{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "name": "n2"}}]`,
			`multi.yaml: node n2: duplicate field "metadata.name"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, notes, err := LoadClusterWith("multi.yaml", []byte(tt.data), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Nodes) != 1 || !strings.Contains(strings.Join(notes, "\n"), tt.note) {
				t.Errorf("notes %q, want %q", notes, tt.note)
			}
			_, _, err = LoadClusterWith("multi.yaml", []byte(tt.data), Options{Strict: true})
			if err == nil || !strings.Contains(err.Error(), tt.note) {
				t.Errorf("strict: error %v, want %q", err, tt.note)
			}
		})
	}
	// The wrong case is never taken as the right field.
	c, _, err := LoadCluster("x.yaml", []byte(nodeDoc+"---\n"+strings.Replace(podA, "nodeName: n1", "NODENAME: n1", 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" {
			t.Errorf("NODENAME was taken as nodeName: %q", p.Spec.NodeName)
		}
	}
}

func TestLoadMessagesNameFieldsNotGoTypes(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{nodeDoc + "---\n" + strings.Replace(podA, "priority: 1", "priority: high", 1), `pod default/a: field spec.priority: a string where a number is wanted`},
		{nodeDoc + "---\n" + strings.Replace(podA, "priority: 1", "priority: 2147483648", 1), `pod default/a: field spec.priority: 2147483648 is out of range (a 32-bit int)`},
		{nodeDoc + "---\n" + strings.Replace(podA, "containers: [", "containers: {x: [", 1) + "}", "field spec.containers: an object where a list is wanted"},
		{"apiVersion: v1\nkind: [Pod]\n", "malformed"},
	} {
		_, _, err := LoadCluster("x.yaml", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "typeMeta") {
			t.Errorf("error %v, want one with %q and no Go type", err, tc.want)
		}
	}
}

func TestLoadLimits(t *testing.T) {
	big := nodeDoc + strings.Repeat("# padding\n", 200)
	if _, _, err := LoadClusterWith("big.yaml", []byte(big), Options{MaxBytes: 100}); err == nil || !strings.Contains(err.Error(), "big.yaml: larger than 100 bytes") {
		t.Errorf("error %v, want the limit named", err)
	}
	if _, err := readAll("zero", strings.NewReader(strings.Repeat("\x00", 10000)), 1<<20); err == nil || !strings.Contains(err.Error(), "zero: binary data") {
		t.Errorf("error %v, want binary data refused", err)
	}
	// An endless reader stops at the limit.
	if _, err := readAll("endless", endless{}, 1<<16); err == nil || !strings.Contains(err.Error(), "larger than 65536 bytes") {
		t.Errorf("error %v, want the limit", err)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

func TestLoadStdinAndNoNodes(t *testing.T) {
	c, _, err := LoadPathsWith([]string{"-"}, Options{Stdin: strings.NewReader(nodeDoc + "---\n" + podA)})
	if err != nil || len(c.Nodes) != 1 || len(c.Pods) != 1 {
		t.Fatalf("stdin: %v, %+v", err, c)
	}
	_, _, err = LoadPathsWith([]string{"-"}, Options{Stdin: strings.NewReader("apiVersion: v1\nkind: List\nitems: []\n")})
	if err == nil || !strings.Contains(err.Error(), "-: no nodes") {
		t.Errorf("empty List: %v, want no nodes named", err)
	}
}
