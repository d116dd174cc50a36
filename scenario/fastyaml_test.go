package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// fastYAMLCorpus holds YAML in kubectl's style, and just past it.
var fastYAMLCorpus = []string{
	"a: b\nc:\n- d\n- e: f\n  g: [ ]\n",
	"a: b\nc:\n- d\n- e: f\n  g: []\n",
	"b: 1\na: 2\nc: {}\n",
	"a: 1\na: 2\n",
	"k:{\"uid\":\"0a1b2c3d\"}: {}\nf:metadata: {}\n",
	"msg: this is a long\n  message on two lines\n\n  and a paragraph\nnext: x\n",
	"- a\n",
	"q: \"double \\\"quoted\\\" \\u00e9 \\x41\\n\\\n  continued  \"\nr: 'it''s\n\n  folded'\n",
	"lit: |\n  line 1\n    more\n\n  line 3\nstrip: |-\n  x\n  y\nafter: z\n",
	"n: [1]\n",
	"a: yes\nb: No\nc: ~\nd: null\ne: 0x1F\nf: 017\ng: 1_000\nh: +5\ni: -0\nj: 1e3\nk: 2001-12-14\nl: 9223372036854775808\nm: 10.0.0.1\nn: .5\no: .x\np: -x\n",
	"yes: 1\n1: 2\n0x10: 3\n",
	"a: yes\nb: No\nc: ~\nd: null\ne: 0x1F\nf: 017\ng: 1_000\nh: +5\ni: -0\nk: 2001-12-14\nl: 9223372036854775808\nm: 10.0.0.1\no: .x\np: -x\nq: 2001-12-14 21:59:43.10\n",
	"a:\n  b:\n    c: d\n  e:\n  - f\n  -\n    g: h\n  - i: |\n      j\n    k: l\n",
	"a:\n  b:\n    c: d\n  e:\n  - f\n  -\n    g: h\n  - - i\n",
	"a: <b> & \"c\"\n",
	"top:\n  - x\n  y: z\n",
	"a: b #c\n",
	"a: 'x' y\n",
	"a:\tb\n",
	"a: b\n  c\n",
	"a: b\n c: d\n",
	"- a: b\n  c: d\n",
	"items:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n1\nkind: List\n",
	// Flags, scripts, indentation indicators: what real pods hold.
	"args:\n- --config=/etc/x.yaml\n- -v=2\n- --\n- -- x\n",
	"s: |\n  #!/bin/sh\n  # a comment of the script\n    # deeper\n  exec x\nt: y\n",
	"s: |\n  x\n# a comment ending the scalar\nt: y\n",
	"# a comment line\na: b\n",
	"a:\n  # an indented comment line\n  b: c\n",
	"m: |2\n   leading space\n  next\nn: x\n",
	"m: |2-\n   a\n\n  b\nn: x\n",
	"- |2\n   a\n  b\n",
	"l:\n- m: |2\n     a\n    b\n  n: o\n",
	"m: |3\n    a\n   b\n",
	"m: |1\n  a\n",
	"m: |2+\n   a\n\n",
	// A long value (the key is short), a key go-yaml finds too long.
	"a: '{" + strings.Repeat(`"k":"v",`, 300) + "}'\n",
	strings.Repeat("k", 1100) + ": v\n",
	"\"" + strings.Repeat("k", 1100) + "\": v\n",
}

// fastYAML writes what readYAMLDocument writes, byte for byte, or gives
// up; never a document readYAMLDocument refuses or finds duplicates in.
func checkFastYAML(t *testing.T, doc []byte) {
	t.Helper()
	got, ok := fastYAML(doc, nil)
	if !ok {
		return
	}
	want, err := readYAMLDocument(doc, 1)
	if err != nil {
		t.Fatalf("fast path read %q as %s, go-yaml refuses it: %v", doc, got, err)
	}
	if len(want.dups) > 0 {
		t.Fatalf("fast path read %q as %s, with duplicates %v", doc, got, want.dups)
	}
	if !bytes.Equal(got, want.json) {
		t.Fatalf("fast path read %q as\n%s\nwant\n%s", doc, got, want.json)
	}
	// Streaming the items gives the same items and, around them, the
	// same document.
	var items []json.RawMessage
	skel, ok := fastYAML(doc, func(i int, raw []byte) {
		if i != len(items) {
			t.Fatalf("item %d after %d", i, len(items))
		}
		items = append(items, raw)
	})
	if !ok {
		t.Fatalf("fast path reads %q but not its items", doc)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(want.json, &m); err != nil {
		t.Fatal(err)
	}
	if raw, ok := m["items"]; ok && items != nil {
		var wantItems []json.RawMessage
		if err := json.Unmarshal(raw, &wantItems); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%s", wantItems) != fmt.Sprintf("%s", items) {
			t.Fatalf("items %s, want %s", items, wantItems)
		}
		m["items"] = json.RawMessage("[]")
		if want, _ := json.Marshal(m); !bytes.Equal(skel, want) {
			t.Fatalf("document around the items %s, want %s", skel, want)
		}
	} else if !bytes.Equal(skel, got) {
		t.Fatalf("without items: %s, want %s", skel, got)
	}
}

func TestFastYAMLMatches(t *testing.T) {
	taken := 0
	for _, doc := range append(append([]string(nil), yamlCorpus...), fastYAMLCorpus...) {
		checkFastYAML(t, []byte(doc))
		if _, ok := fastYAML([]byte(doc), nil); ok {
			taken++
		}
	}
	for _, shape := range Shapes() {
		list, err := ListYAML(MustBuild(shape, 3, 1).Cluster)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := fastYAML(list, nil); !ok {
			t.Errorf("shape %s: not on the fast path", shape)
		}
		checkFastYAML(t, list)
	}
	s := MustBuild("basic", 20, 1)
	realistic(s.Cluster)
	list, err := ListYAML(s.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fastYAML(list, nil); !ok {
		t.Errorf("realistic dump: not on the fast path")
	}
	checkFastYAML(t, list)
	t.Logf("%d of the corpus on the fast path", taken)
}

func FuzzFastYAML(f *testing.F) {
	for _, doc := range append(append([]string(nil), yamlCorpus...), fastYAMLCorpus...) {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if len(doc) > 1<<16 {
			return
		}
		checkFastYAML(t, doc)
	})
}
