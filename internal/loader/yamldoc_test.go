package loader

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/preemptbench/preemptbench/internal/synth"
	goyaml "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

// yamlCorpus holds YAML documents of every scalar type and structure
// go-yaml v2 reads.
var yamlCorpus = []string{
	nodeDoc, podA, podB,
	"[]\n", "- {key: a, value: b}\n", "[{key: 1}, {value: 2}]\n", "- []\n", "&x []\n",
	"a: [yes, no, on, off, y, n, Yes, NO, true, False, ~, null, Null, '']\n",
	"a: [0x1F, 0o17, 017, 1_000, +5, -0, 1e3, 1.5, .5, 9223372036854775807, 9223372036854775808, 18446744073709551615, 18446744073709551616]\n",
	"a: [2001-12-14t21:59:43.10-05:00, 2001-12-14, !!str 1, !!binary aGVsbG8=, !!float 1, \"1\", '2']\n",
	"1: a\n2.5: b\ntrue: c\nno: d\n0x10: e\n",
	"a: &x {b: 1, c: [1, 2, {d: e}]}\nf: *x\ng: [*x, *x]\n",
	"base: &b {x: 1, y: 2}\nm: {<<: *b, z: 3}\nn: {<<: [*b, {w: 4}]}\n",
	"s: |\n  line 1\n  line 2\nf: >\n  folded\n  text\nq: \"esc \\t \\u00e9 \\\" \"\n",
	"a: {}\nb: []\nc: [[], [{}], {d: []}]\n",
	"[1, 2, {a: b}]\n",
	"just a string\n",
	"'1': a\n",
	"a: b\n# comment\nc: \"<html> & </html>\"\n",
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	for _, p := range []struct {
		data []byte
		v    *any
	}{{a, &x}, {b, &y}} {
		dec := json.NewDecoder(bytes.NewReader(p.data))
		dec.UseNumber()
		if err := dec.Decode(p.v); err != nil {
			t.Fatalf("%s: %v", p.data, err)
		}
	}
	return reflect.DeepEqual(x, y)
}

// readYAMLDocument reads as sigs.k8s.io/yaml.YAMLToJSON does.
func TestYAMLMatchesSigsYAML(t *testing.T) {
	corpus := append([]string(nil), yamlCorpus...)
	for _, shape := range synth.Shapes() {
		list, err := synth.ListYAML(synth.MustBuild(shape, 4, 1).Cluster)
		if err != nil {
			t.Fatal(err)
		}
		corpus = append(corpus, string(list))
	}
	for _, doc := range corpus {
		want, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		got, err := readYAMLDocument([]byte(doc), 1)
		if err != nil {
			t.Errorf("%q: %v", doc, err)
			continue
		}
		if len(got.dups) > 0 {
			t.Errorf("%q: duplicates %v", doc, got.dups)
		}
		if !sameJSON(t, want, got.json) {
			t.Errorf("%q:\n got %s\nwant %s", doc, got.json, want)
		}
	}
}

func TestYAMLDuplicatesAndCollisions(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		dups []string
		json string
	}{
		{"a: 1\nb: {c: 1, c: 2}\na: 3\n", []string{"b.c", "a"}, `{"a":3,"b":{"c":2}}`},
		{"l: [{x: 1}, {z: 1, z: 2}]\n", []string{"l[1].z"}, `{"l":[{"x":1},{"z":2}]}`},
		// Keys that differ in YAML but not in JSON: the last in the
		// document wins, never the last in Go's map order.
		{"m: {1: a, \"1\": b}\n", []string{"m.1"}, `{"m":{"1":"b"}}`},
		{"m: {\"1\": b, 1: a}\n", []string{"m.1"}, `{"m":{"1":"a"}}`},
		{"m: {yes: a, \"true\": b}\n", []string{"m.true"}, `{"m":{"true":"b"}}`},
	} {
		for range 20 { // map order varies from run to run
			got, err := readYAMLDocument([]byte(tc.doc), 1)
			if err != nil {
				t.Fatalf("%q: %v", tc.doc, err)
			}
			var paths []string
			for _, d := range got.dups {
				paths = append(paths, d.path)
			}
			if !reflect.DeepEqual(paths, tc.dups) || !sameJSON(t, got.json, []byte(tc.json)) {
				t.Fatalf("%q: duplicates %q, JSON %s; want %q, %s", tc.doc, paths, got.json, tc.dups, tc.json)
			}
		}
	}
}

// Aliases cannot make a document's JSON form explode: not by nesting
// ("billion laughs"), not by repeating a long string.
func TestYAMLAliasBombs(t *testing.T) {
	var laughs strings.Builder
	laughs.WriteString("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 10; i++ {
		laughs.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				laughs.WriteString(", ")
			}
			laughs.WriteString("*a" + string(rune('0'+i-1)))
		}
		laughs.WriteString("]\n")
	}
	long := "pad: [" + strings.Repeat("0, ", 2000) + "0]\n" + // below go-yaml's own alias ratio
		"s: &s " + strings.Repeat("x", 100000) + "\nl: [" + strings.Repeat("*s, ", 2000) + "*s]\n"
	// Five levels after enough plain nodes that go-yaml's own bound (99
	// aliased nodes to a plain one) lets them through: 123000 nodes, some
	// 600 KB of JSON, from 10 KB.
	diluted := "pad: [" + strings.Repeat("0, ", 3000) + "0]\n" + strings.Join(strings.Split(laughs.String(), "\n")[:5], "\n") + "\n"
	for name, doc := range map[string]string{"laughs": laughs.String(), "diluted laughs": diluted, "long string": long} {
		start := time.Now()
		_, err := readYAMLDocument([]byte(doc), 1)
		if err == nil || !(strings.Contains(err.Error(), "alias bomb") || strings.Contains(err.Error(), "excessive aliasing")) {
			t.Errorf("%s: error %v, want the aliases refused", name, err)
		}
		t.Logf("%s: %v", name, err)
		if d := time.Since(start); d > 2*raceScale*time.Second {
			t.Errorf("%s: took %v", name, d)
		}
	}
	// A few aliases, as a hand-written file has them, are read.
	got, err := readYAMLDocument([]byte("l: &l {app: web, tier: front}\na: {labels: *l}\nb: {labels: *l}\n"), 1)
	if err != nil || !sameJSON(t, got.json, []byte(`{"l":{"app":"web","tier":"front"},"a":{"labels":{"app":"web","tier":"front"}},"b":{"labels":{"app":"web","tier":"front"}}}`)) {
		t.Errorf("aliases: %s, %v", got.json, err)
	}
}

// FuzzYAMLDocument: any document reads as sigs.k8s.io/yaml.YAMLToJSON
// reads it, but for duplicate keys (named, the last one taken) and alias
// bombs (refused).
func FuzzYAMLDocument(f *testing.F) {
	for _, doc := range yamlCorpus {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if len(doc) > 1<<16 {
			return
		}
		got, err := readYAMLDocument(doc, 1)
		if err != nil {
			if strings.Contains(err.Error(), "interface {}") || strings.Contains(err.Error(), "Go ") {
				t.Fatalf("message names a Go type: %v", err)
			}
			return
		}
		if len(got.dups) > 0 {
			return
		}
		want, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			t.Fatalf("sigs.k8s.io/yaml refuses what was read as %s: %v", got.json, err)
		}
		if got.json == nil {
			got.json = []byte("null")
		}
		if !sameJSON(t, want, got.json) {
			t.Fatalf("got %s, sigs.k8s.io/yaml %s", got.json, want)
		}
	})
}

// The documents are go-yaml's, read from the whole stream: a literal
// block ending a document keeps its line break.
func TestSplitYAMLAsGoYAML(t *testing.T) {
	data := "a: |\n  x\n---\nb: |+\n  y\n\n--- # c\nc: |\n  z\n"
	pieces, err := splitYAML([]byte(data))
	if err != nil || len(pieces) != 3 {
		t.Fatalf("%v, %v", pieces, err)
	}
	dec := goyaml.NewDecoder(strings.NewReader(data))
	for i, p := range pieces {
		var want map[string]string
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		got, err := readYAMLDocument(p.data, p.line)
		w, _ := json.Marshal(want)
		if err != nil || string(got.json) != string(w) {
			t.Errorf("document %d: %s, %v; want %s", i+1, got.json, err, w)
		}
	}
	if lines := []int{pieces[0].line, pieces[1].line, pieces[2].line}; !reflect.DeepEqual(lines, []int{1, 4, 8}) {
		t.Errorf("first lines %v", lines)
	}
	_, _, err = LoadCluster("dashes.yaml", []byte(nodeDoc+"----\n"))
	if want := "dashes.yaml: malformed YAML: line 5 starts with --- but is not a document marker (--- then a space, a tab or nothing)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
