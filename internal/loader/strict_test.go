package loader

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"
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
		"plain":                 nodeDoc + "---\n" + podA + "---\n" + podB,
		"leading marker":        "---\n" + nodeDoc + "---\n" + podA + "---\n" + podB,
		"comment on marker":     nodeDoc + "--- # the pods\n" + podA + "---   # b\n" + podB,
		"trailing spaces":       nodeDoc + "---   \n" + podA + "---\t\n" + podB,
		"end markers":           nodeDoc + "...\n---\n" + podA + "...\n" + podB + "...\n",
		"end markers only":      nodeDoc + "...\n" + podA + "...\n" + podB,
		"directives":            "%YAML 1.2\n---\n" + nodeDoc + "---\n" + podA + "---\n" + podB,
		"CRLF":                  strings.ReplaceAll(nodeDoc+"---\n"+podA+"--- # x\n"+podB, "\n", "\r\n"),
		"content on marker":     nodeDoc + "--- {apiVersion: v1, kind: Pod, metadata: {name: a, namespace: default, uid: a}, spec: {nodeName: n1, priority: 1, containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}}\n---\n" + podB,
		"comment on end marker": nodeDoc + "... # the pods\n" + podA + "...\t\n---\n" + podB + "... # end\n",
		"CR only":               strings.ReplaceAll(nodeDoc+"---\n"+podA+"...\n"+podB, "\n", "\r"),
		"NEL":                   strings.ReplaceAll(nodeDoc+"---\n"+podA+"---\n"+podB, "\n", "\u0085"),
		"byte order mark":       "\ufeff" + nodeDoc + "---\n" + podA + "---\n" + podB,
		"UTF-16LE":              utf16le(nodeDoc + "---\n" + podA + "--- # b\n" + podB),
		"no final line break":   nodeDoc + "---\n" + podA + "---\n" + strings.TrimSuffix(podB, "\n"),
		"empty documents":       "---\n---\n# nothing\n---\n" + nodeDoc + "---\n" + podA + "---\n---\n" + podB + "---\n",
		"JSON documents":        jsonOf(t, nodeDoc) + "\n---\n" + jsonOf(t, podA) + "\n--- # b\n" + jsonOf(t, podB) + "\n",
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

func utf16le(s string) string {
	out := []byte{0xFF, 0xFE}
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u), byte(u>>8))
	}
	return string(out)
}

func jsonOf(t *testing.T, doc string) string {
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}

// A document go-yaml would read as two, which a splitter on plain line
// breaks cannot split, is refused rather than half read.
func TestLoadRefusesDocumentsItCannotSplit(t *testing.T) {
	data := strings.ReplaceAll(nodeDoc+"---\n"+podA, "\n", "\u2028")
	_, _, err := LoadCluster("ls.yaml", []byte(data))
	if err == nil || !strings.Contains(err.Error(), "ls.yaml: holds 2 YAML documents") {
		t.Errorf("error %v, want the two documents named", err)
	}
}

// A YAML error's line is the file's, not the document's.
func TestLoadYAMLErrorsNameFileLines(t *testing.T) {
	data := "# a comment\n---\n" + nodeDoc + "---\n" + podA + "--- # b\napiVersion: v1\nkind: Pod\nmetadata: {name: b\n"
	_, _, err := LoadCluster("lines.yaml", []byte(data))
	want := "lines.yaml: document 3: malformed YAML: line 15: did not find expected ',' or '}'"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	// Merge keys ("<<"), which go-yaml applies only in its maps: go-yaml
	// names a duplicate by its line.
	merging := nodeDoc + "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n2\n  labels: {<<: {x: \"1\"}, z: \"1\", z: \"2\"}\n"
	c, notes, err := LoadCluster("merge.yaml", []byte(merging))
	if want := `merge.yaml: document 2: node n2: duplicate field: line 10: key "z" already set in map`; err != nil || !strings.Contains(strings.Join(notes, "\n"), want) {
		t.Errorf("notes %q, %v, want %q", notes, err, want)
	} else if got := c.Nodes[1].Labels; got["x"] != "1" || got["z"] != "2" {
		t.Errorf("labels %v, want x=1 (merged) and z=2 (the last)", got)
	}
}

func TestLoadFieldsAsTheAPIServer(t *testing.T) {
	tests := []struct {
		name, data string
		note       string // the note without -strict, the error with it
	}{
		{"wrong case", nodeDoc + "---\n" + strings.Replace(podA, "nodeName: n1", "nodeName: n1, NODENAME: n2", 1),
			`multi.yaml: document 2: pod default/a: unknown field "spec.NODENAME" (the field is "nodeName": field names are case-sensitive)`},
		{"wrong case in a list", nodeDoc + "---\n" + strings.Replace(podA, "{name: c,", "{NAME: x, name: c,", 1),
			`multi.yaml: document 2: pod default/a: unknown field "spec.containers[0].NAME" (the field is "name": field names are case-sensitive)`},
		{"unknown field", nodeDoc + "---\n" + strings.Replace(podA, "priority: 1", "priority: 1, prioritee: 3", 1),
			`multi.yaml: document 2: pod default/a: unknown field "spec.prioritee"`},
		{"duplicate YAML key", nodeDoc + "---\n" + strings.Replace(podA, "priority: 1", "priority: 1, priority: 7", 1),
			`multi.yaml: document 2: pod default/a: duplicate field "spec.priority"`},
		{"duplicate JSON field", `[{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "name": "n2"}}]`,
			`multi.yaml: node n2: duplicate field "metadata.name"`},
		{"duplicate YAML key in a list item", "apiVersion: v1\nkind: List\nitems:\n" + indent(nodeDoc) + indent(strings.Replace(podA, "priority: 1", "priority: 1, priority: 7", 1)),
			`multi.yaml: item 1: pod default/a: duplicate field "spec.priority"`},
		{"duplicate YAML key in a typed list item", "apiVersion: v1\nkind: NodeList\nitems:\n- metadata: {name: n1}\n  metadata: {name: n1}\n",
			`multi.yaml: item 0: node n1: duplicate field "metadata"`},
		{"YAML keys that are one JSON key", strings.Replace(nodeDoc, "metadata: {name: n1}", "metadata: {name: n1, labels: {1: a, \"1\": b}}", 1),
			`multi.yaml: node n1: duplicate field "metadata.labels.1"`},
		{"duplicate JSON kind", `{"apiVersion": "v1", "kind": "Pod", "kind": "Node", "metadata": {"name": "n1"}}`,
			`multi.yaml: node n1: duplicate field "kind"`},
		{"unknown list field", `{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}], "ITEMS": []}`,
			`multi.yaml: list: unknown field "ITEMS" (the field is "items": field names are case-sensitive)`},
		{"duplicate list items", `{"apiVersion": "v1", "kind": "NodeList", "items": [], "items": [{"metadata": {"name": "n1"}}]}`,
			`multi.yaml: nodelist: duplicate field "items"`},
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
	// The wrong case is never taken as the right field, nor a wrong-case
	// "ITEMS" as a list's items.
	c, _, err := LoadCluster("x.yaml", []byte(nodeDoc+"---\n"+strings.Replace(podA, "nodeName: n1", "NODENAME: n1", 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" {
			t.Errorf("NODENAME was taken as nodeName: %q", p.Spec.NodeName)
		}
	}
	c, _, err = LoadCluster("x.yaml", []byte("apiVersion: v1\nkind: List\nITEMS:\n"+indent(nodeDoc)))
	if err != nil || len(c.Nodes) != 0 {
		t.Errorf("ITEMS was taken as items: %v, %d nodes", err, len(c.Nodes))
	}
	// Duplicates: the last value is taken, as the API server takes it.
	c, _, err = LoadCluster("x.yaml", []byte(nodeDoc+"---\n"+strings.Replace(podA, "priority: 1", "priority: 1, priority: 7", 1)))
	if err != nil || *c.Pods[0].Spec.Priority != 7 {
		t.Errorf("duplicate priority: %v, want the last value, 7", err)
	}
}

// goType matches what Go type names look like in encoding/json's and
// go-yaml's messages.
var goType = regexp.MustCompile(`Go (struct field|value) |typeMeta|interface \{\}|map\[(string|interface)|json\.RawMessage|yaml\.Map(Slice|Item)|\bv1(beta1)?\.[A-Z]`)

// namesGoType reports whether msg holds a Go type name that the input
// does not: a message may quote the user's own text (an unknown kind is
// echoed in the "skipped" note), and a kind spelt like a Go type is the
// user's, not a leak (the libFuzzer find "kind: PodDisrufunc(*v1beta1.SingleComp").
func namesGoType(msg string, data []byte) bool {
	for _, m := range goType.FindAllString(msg, -1) {
		if !bytes.Contains(data, []byte(m)) {
			return true
		}
	}
	return false
}

func TestLoadMessagesNameFieldsNotGoTypes(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{nodeDoc + "---\n" + strings.Replace(podA, "priority: 1", "priority: high", 1), `pod default/a: field spec.priority: a string where a number is wanted`},
		{nodeDoc + "---\n" + strings.Replace(podA, "priority: 1", "priority: 2147483648", 1), `pod default/a: field spec.priority: 2147483648 is out of range (a 32-bit int)`},
		{nodeDoc + "---\n" + strings.Replace(podA, "priority: 1", "priority: 1.5", 1), `x.yaml: document 2: pod default/a: field spec.priority: 1.5 is not an integer (a 32-bit int is wanted)`},
		{`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"priority": 2.0, "containers": [{"name": "c"}]}}`, `x.yaml: pod a: field spec.priority: 2.0 is not written as an integer (a 32-bit int is wanted: write 2)`},
		{nodeDoc + "---\n" + strings.Replace(podA, "containers: [", "containers: {x: [", 1) + "}", "field spec.containers: an object where a list is wanted"},
		{"apiVersion: v1\nkind: [Pod]\n", "malformed"},
		{nodeDoc + "---\n" + strings.Replace(podA, `cpu: "1"`, `cpu: "1 core"`, 1), `pod default/a: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' (field spec.containers[0].resources.requests.cpu)`},
		{strings.Replace(nodeDoc, "{name: n1}", "{name: n1, creationTimestamp: yesterday}", 1), `node n1: "yesterday" is not a time in RFC 3339 form (2006-01-02T15:04:05Z) (field metadata.creationTimestamp)`},
		// A YAML sequence's items are documents, as a JSON array's are.
		{"- a\n- b\n", "x.yaml: document 1: malformed: a string where an object is wanted"},
		{`["a", "b"]`, "x.yaml: document 1: malformed: a string where an object is wanted"},
		{"[[1]]", "x.yaml: malformed: an array where an object is wanted"},
		{nodeDoc + "---\njust text\n", "x.yaml: document 2: malformed: a string where an object is wanted"},
		{`{"apiVersion": "v1", "kind": "List", "items": {}}`, "x.yaml: list: malformed: field items: an object where a list is wanted"},
		{"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {~: a}}}\n", "x.yaml: item 0: node n1: field metadata.labels: a null key"},
		{"apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {[a]: b}}\n", "x.yaml: node n1: field metadata.labels: a list or a mapping used as a key"},
		{"apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {a: .inf}}\n", "x.yaml: node n1: field metadata.labels.a: +Inf is not a JSON number"},
	} {
		_, _, err := LoadCluster("x.yaml", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) || namesGoType(err.Error(), []byte(tc.data)) {
			t.Errorf("error %v, want one with %q and no Go type", err, tc.want)
		}
	}
}

func TestLoadLimits(t *testing.T) {
	big := nodeDoc + strings.Repeat("# padding\n", 200)
	if _, _, err := LoadClusterWith("big.yaml", []byte(big), Options{MaxBytes: 100}); err == nil || !strings.Contains(err.Error(), "big.yaml: larger than 100 bytes") {
		t.Errorf("error %v, want the limit named", err)
	}
	file := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(file, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadPathsWith([]string{file}, Options{MaxBytes: 100}); err == nil || !strings.Contains(err.Error(), file+": larger than 100 bytes") {
		t.Errorf("error %v, want the file and the limit named", err)
	}
	if _, _, err := LoadPathsWith([]string{file}, Options{MaxBytes: int64(len(big))}); err != nil {
		t.Errorf("a file of exactly the limit: %v", err)
	}
	if _, _, err := LoadPathsWith([]string{"-"}, Options{MaxBytes: 100, Stdin: strings.NewReader(big)}); err == nil || !strings.Contains(err.Error(), "standard input: larger than 100 bytes") {
		t.Errorf("error %v, want standard input and the limit named", err)
	}
	if _, err := readAll("zero", strings.NewReader(strings.Repeat("\x00", 10000)), 1<<20, 0); err == nil || !strings.Contains(err.Error(), "zero: binary data") {
		t.Errorf("error %v, want binary data refused", err)
	}
	// An endless reader stops at the limit.
	if _, err := readAll("endless", endless{}, 1<<16, 0); err == nil || !strings.Contains(err.Error(), "larger than 65536 bytes") {
		t.Errorf("error %v, want the limit", err)
	}
	// UTF-16 holds NUL bytes, and is no binary data.
	if _, err := readAll("utf16", strings.NewReader(utf16le(nodeDoc)), 1<<20, 0); err != nil {
		t.Errorf("UTF-16: %v", err)
	}
}

// -cluster /dev/zero ends at once with an error, whatever the limit.
func TestLoadDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	start := time.Now()
	_, _, err := LoadPathsWith([]string{"/dev/zero"}, Options{})
	if err == nil || !strings.Contains(err.Error(), "/dev/zero: binary data") {
		t.Errorf("error %v, want binary data refused", err)
	}
	if d := time.Since(start); d > 5*raceScale*time.Second {
		t.Errorf("took %v", d)
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
	// Standard input and files together.
	file := filepath.Join(t.TempDir(), "pods.yaml")
	if err := os.WriteFile(file, []byte(podB), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _, err = LoadPathsWith([]string{"-", file}, Options{Stdin: strings.NewReader(nodeDoc + "---\n" + podA)})
	if err != nil || len(c.Nodes) != 1 || len(c.Pods) != 2 {
		t.Fatalf("stdin and a file: %v, %+v", err, c)
	}
	for name, tc := range map[string]struct {
		paths []string
		stdin string
		want  string
	}{
		"empty List":         {[]string{"-"}, "apiVersion: v1\nkind: List\nitems: []\n", "no nodes in standard input"},
		"List without items": {[]string{"-"}, `{"apiVersion": "v1", "kind": "List", "metadata": {}}`, "no nodes in standard input"},
		"pods only":          {[]string{file, "-"}, "apiVersion: v1\nkind: PodList\nitems: null\n", "no nodes in " + file + ", standard input"},
		"stdin twice":        {[]string{"-", "-"}, nodeDoc, "standard input (-) named 2 times"},
		"no paths":           {nil, "", "no input"},
	} {
		_, _, err = LoadPathsWith(tc.paths, Options{Stdin: strings.NewReader(tc.stdin)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// A YAML sequence of objects is read as the JSON array of them is; a
// duplicate key in a flow mapping in it is named, a note or, strict, an
// error.
func TestLoadYAMLSequence(t *testing.T) {
	list := "apiVersion: v1\nkind: List\nitems:\n" + indent(nodeDoc) + indent(podA)
	want, _, err := LoadCluster("list.yaml", []byte(list))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"YAML": indent(nodeDoc) + indent(podA),
		"JSON": "[" + jsonOf(t, nodeDoc) + ", " + jsonOf(t, podA) + "]",
	} {
		got, notes, err := LoadCluster("seq.yaml", []byte(data))
		if err != nil || len(notes) > 0 || !equality.Semantic.DeepEqual(want, got) {
			t.Errorf("%s: %v, %q; cluster differs: %s", name, err, notes, cmp.Diff(want, got))
		}
	}
	dup := indent(nodeDoc) + "- {apiVersion: v1, kind: Namespace, metadata: {name: p, name: q}}\n"
	_, notes, err := LoadCluster("seq.yaml", []byte(dup))
	wantNote := `seq.yaml: document 2: namespace q: duplicate field "metadata.name"`
	if err != nil || !reflect.DeepEqual(notes, []string{wantNote}) {
		t.Errorf("notes %q, %v; want %q", notes, err, wantNote)
	}
	if _, _, err := LoadClusterWith("seq.yaml", []byte(dup), Options{Strict: true}); err == nil || err.Error() != wantNote {
		t.Errorf("strict: error %v, want %q", err, wantNote)
	}
}

// Kinds are case-sensitive: an object of a kind in the wrong case is
// ignored with a note naming it and the right kind, an error under
// Options.Strict; a cluster of such objects only is an error naming the
// inputs.
func TestLoadMisCasedKinds(t *testing.T) {
	list := "apiVersion: v1\nkind: List\nitems:\n" + indent(nodeDoc) +
		indent(strings.Replace(nodeDoc, "kind: Node\nmetadata: {name: n1}", "kind: node\nmetadata: {name: n2}", 1)) +
		indent(strings.Replace(podA, "kind: Pod", "kind: POD", 1))
	for _, data := range []string{list, string(jsonDump(t, []byte(list)))} {
		c, notes, err := LoadCluster("cased.yaml", []byte(data))
		want := []string{
			`cased.yaml: item 1: node n2: kind "node" is not "Node": kinds are case-sensitive; the object is ignored`,
			`cased.yaml: item 2: pod default/a: kind "POD" is not "Pod": kinds are case-sensitive; the object is ignored`,
		}
		if err != nil || !reflect.DeepEqual(notes, want) || len(c.Nodes) != 1 || len(c.Pods) != 0 {
			t.Errorf("notes %q, %v; want %q and one node", notes, err, want)
		}
		if _, _, err := LoadClusterWith("cased.yaml", []byte(data), Options{Strict: true}); err == nil || err.Error() != want[0] {
			t.Errorf("strict: error %v, want %q", err, want[0])
		}
	}
	dir := t.TempDir()
	only := filepath.Join(dir, "only.yaml")
	if err := os.WriteFile(only, []byte(strings.Replace(nodeDoc, "kind: Node", "kind: NODE", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadPaths([]string{only})
	if want := "nothing read from " + only + ": every object was ignored: " + only + `: node n1: kind "NODE" is not "Node": kinds are case-sensitive; the object is ignored`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	_, err = LoadPod("pod.yaml", []byte(strings.Replace(podB, "kind: Pod", "kind: pod", 1)))
	if want := `pod.yaml: pod default/b: kind "pod" is not "Pod": kinds are case-sensitive; the object is ignored`; err == nil || err.Error() != want {
		t.Errorf("pod: error %v, want %q", err, want)
	}
	_, notes, err := LoadCluster("list.yaml", []byte("apiVersion: v1\nkind: nodelist\nitems: []\n"))
	if want := `list.yaml: nodelist: kind "nodelist" is not "NodeList": kinds are case-sensitive; the object is ignored`; err != nil || !reflect.DeepEqual(notes, []string{want}) {
		t.Errorf("notes %q, %v; want %q", notes, err, want)
	}
}

// A cluster without nodes because its nodes' kind is mis-cased says so in
// its error, naming the ignored objects.
func TestNoNodesNamesIgnored(t *testing.T) {
	f := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(f, []byte("apiVersion: v1\nkind: node\nmetadata: {name: n1}\n---\n"+podA), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadPaths([]string{f})
	if err == nil || !strings.Contains(err.Error(), "no nodes in ") || !strings.Contains(err.Error(), `ignored: `+f+`: document 1: node n1: kind "node" is not "Node"`) {
		t.Errorf("error %v, want one naming the mis-cased kind", err)
	}
}
