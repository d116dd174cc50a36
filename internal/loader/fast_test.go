package loader

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/preemptbench/preemptbench/internal/synth"
	"k8s.io/apimachinery/pkg/api/equality"
)

// checkFast loads data on the fast path and the general one, which must
// find the same cluster, notes and error, strict or not; it reports
// whether the fast path took data.
func checkFast(t *testing.T, name string, data []byte) bool {
	t.Helper()
	taken := false
	for _, strict := range []bool{false, true} {
		opts := Options{Strict: strict, MaxBytes: 1 << 30}
		c, notes, err := loadClusterWith(name, data, opts, false)
		wc, wnotes, werr := loadClusterWith(name, data, opts, true)
		if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Fatalf("strict %v: error %v, want %v", strict, err, werr)
		}
		if !reflect.DeepEqual(notes, wnotes) {
			t.Fatalf("strict %v: notes\n%q\nwant\n%q", strict, notes, wnotes)
		}
		if !equality.Semantic.DeepEqual(c, wc) {
			t.Fatalf("strict %v: cluster differs (-general +fast):\n%s", strict, cmp.Diff(wc, c))
		}
		r := reader{opts: opts}
		if r.readFast(name, data) {
			taken = true
		}
	}
	return taken
}

// fastSeeds are the loader's seeds, the YAML corpora, and every shape,
// plain and realistic, as a List in YAML and JSON.
func fastSeeds(tb fataler) [][]byte {
	seeds := loadSeeds(tb)
	for _, doc := range append(append([]string(nil), yamlCorpus...), listItemCorpus...) {
		// doc as an unknown field of a Node, an item of a List.
		var x strings.Builder
		for _, l := range strings.SplitAfter(doc, "\n") {
			if l != "" {
				x.WriteString("  " + l)
			}
		}
		item := "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nx:\n" + x.String() + "\n"
		seeds = append(seeds, []byte(doc), []byte("apiVersion: v1\nkind: List\nitems:\n"+indent(item)+indent(podA)))
	}
	for _, l := range kubectlLists(tb) {
		seeds = append(seeds, l.yaml, l.json)
	}
	files, _ := filepath.Glob("testdata/fuzz/FuzzLoadCluster/*")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		// The corpus file format: a header line, then []byte("...").
		if v, ok := corpusBytes(data); ok {
			seeds = append(seeds, v)
		}
	}
	return append(seeds,
		// Typed lists, items without kind, skipped kinds, a v1beta1
		// PDB, unknown and duplicate fields, in both forms.
		[]byte("apiVersion: v1\nitems:\n- metadata:\n    name: a\n  status:\n    allocatable:\n      cpu: \"2\"\nkind: NodeList\nmetadata:\n  resourceVersion: \"1\"\n"),
		[]byte(`{"apiVersion":"v1","kind":"NodeList","items":[{"metadata":{"name":"a"},"status":{"allocatable":{"cpu":"2"}}}]}`),
		[]byte("apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: s\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: a\n  spec:\n    unknownField: 1\n- apiVersion: policy/v1beta1\n  kind: PodDisruptionBudget\n  metadata:\n    name: p\n  spec:\n    minAvailable: 1\nkind: List\nITEMS: []\n"),
		[]byte(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"a","name":"b"}},{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"nodeName":"a","containers":[{"name":"c"}]}}]}`),
		[]byte(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"},"items":[]}`),
		[]byte("apiVersion: v1\nkind: Node\nmetadata:\n  name: a\nitems:\n- x\n"),
		[]byte(`{"kind":"List","items":[{"kind":"Node","apiVersion":"v1","metadata":{"name":"a"}}],"items":[]}`),
	)
}

// corpusBytes reads a one-value []byte fuzz corpus file.
func corpusBytes(data []byte) ([]byte, bool) {
	lines := bytes.SplitN(data, []byte("\n"), 2)
	if len(lines) != 2 {
		return nil, false
	}
	v := bytes.TrimSpace(lines[1])
	if !bytes.HasPrefix(v, []byte("[]byte(")) || !bytes.HasSuffix(v, []byte(")")) {
		return nil, false
	}
	s, err := unquoteGo(string(v[len("[]byte(") : len(v)-1]))
	if err != nil {
		return nil, false
	}
	return []byte(s), true
}

func TestFastPathMatchesGeneral(t *testing.T) {
	taken, all := 0, 0
	for _, seed := range fastSeeds(t) {
		all++
		if checkFast(t, "seed.yaml", seed) {
			taken++
		}
	}
	t.Logf("fast path took %d of %d inputs", taken, all)
	if taken < 20 {
		t.Errorf("fast path took only %d inputs", taken)
	}
}

// FuzzFastPath: the fast path finds what the general one finds (or gives
// up), on any input.
func FuzzFastPath(f *testing.F) {
	addSeeds(f, fastSeeds)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<18 {
			return
		}
		checkFast(t, "fuzz.yaml", data)
	})
}

// listItemCorpus holds items as kubectl writes them, and just past it,
// for the fast path's splitting of a List's items.
var listItemCorpus = []string{
	"a: b\nc:\n- d\n- e: f\n  g: [ ]\n",
	"a: 1\na: 2\n",
	"msg: this is a long\n  message on two lines\n\n  and a paragraph\nnext: x\n",
	"q: \"double \\\"quoted\\\" \\u00e9 \\x41\\n\\\n  continued  \"\nr: 'it''s\n\n  folded'\n",
	"lit: |\n  line 1\n    more\n\n  line 3\nstrip: |-\n  x\n  y\nafter: z\n",
	"yes: 1\n1: 2\n\"1\": 3\n",
	"args:\n- --config=/etc/x.yaml\n- -v=2\n- --\n- -- x\n",
	"s: |\n  x\n# a comment ending the scalar\nt: y\n",
	"m: |2\n   leading space\n  next\nn: x\n",
	"m: |2+\n   a\n\n",
	"a: &x {b: 1}\nc: *x\n",
	"a: \"x\n- b: c\"\n",
	"a: [x,\n- y]\n",
	"kind: Node\napiVersion: v1\nmetadata: {name: !!binary aGVsbG8=}\n",
	"kind: Node\napiVersion: v1\nmetadata: {name: n, name: m}\n",
	"{}",
	"x",
}

func unquoteGo(s string) (string, error) { return strconv.Unquote(s) }

// A size hint changes how readAll reads, not what: the same bytes, the
// same limit, the same errors.
func TestReadAllSizeHint(t *testing.T) {
	for _, n := range []int{0, 1, 511, 4096, 4097, 10000} {
		data := bytes.Repeat([]byte("a: b\n"), n/5+1)[:n]
		for _, max := range []int64{int64(n) - 1, int64(n), int64(n) + 10} {
			if max < 1 {
				continue
			}
			want, werr := readAll("f", bytes.NewReader(data), max, 0)
			for _, hint := range []int64{1, int64(n) - 1, int64(n), int64(n) + 1, 2 * int64(n), 1 << 40} {
				got, err := readAll("f", bytes.NewReader(data), max, hint)
				if !bytes.Equal(got, want) || fmt.Sprint(err) != fmt.Sprint(werr) {
					t.Errorf("%d bytes, max %d, hint %d: %d bytes, %v; want %d bytes, %v", n, max, hint, len(got), err, len(want), werr)
				}
			}
		}
	}
}

// An object of many keys keeps the fast path linear.
func TestFastPathStaysLinear(t *testing.T) {
	var j strings.Builder
	j.WriteString(`{"apiVersion":"v1","kind":"List","items":[{`)
	for i := range 200000 {
		fmt.Fprintf(&j, `"k%d":1,`, i)
	}
	j.WriteString(`"kind":"Node","metadata":{"name":"n"}}]}`)
	start := time.Now()
	checkFast(t, "many.json", []byte(j.String()))
	if d := time.Since(start); d > 10*raceScale*time.Second {
		t.Errorf("an object of many keys: %v", d)
	}
}

// The fast path takes what kubectl writes: a List of every shape, plain
// and realistic, in YAML and in JSON.
func TestFastPathTakesKubectlLists(t *testing.T) {
	for _, l := range kubectlLists(t) {
		for name, data := range map[string][]byte{"yaml": l.yaml, "json": l.json} {
			r := reader{}
			if !r.readFast("list", data) {
				t.Errorf("%s in %s: not on the fast path", l.name, name)
			}
		}
	}
}

// kubectlList is a cluster as kubectl writes it, in YAML and in JSON.
type kubectlList struct {
	name       string
	yaml, json []byte
}

// kubectlLists are every shape of 3 nodes, plain and realistic.
func kubectlLists(tb fataler) []kubectlList {
	var out []kubectlList
	for _, shape := range synth.Shapes() {
		for _, real := range []bool{false, true} {
			s := synth.MustBuild(shape, 3, 1)
			if real {
				realistic(s.Cluster)
			}
			list, err := synth.ListYAML(s.Cluster)
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, kubectlList{fmt.Sprintf("%s (realistic %v)", shape, real), list, jsonDump(tb, list)})
		}
	}
	return out
}

// Text that may hold anchors and aliases sends a List to the general
// reader (go-yaml bounds aliases over the whole document); & and * inside
// words do not.
func TestFastPathAnchors(t *testing.T) {
	item := func(labels string) string {
		return indent("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  annotations: {" + labels + "}\n")
	}
	for labels, taken := range map[string]bool{
		`a: "x&y", b: "p*q"`:           true,
		`a: &l "x", b: *l`:             false,
		`a: "x & y", b: "rm *"`:        false,
		`a: "x&y", b: "*.example.com"`: true,
	} {
		data := []byte("apiVersion: v1\nkind: List\nitems:\n" + item(labels))
		r := reader{}
		if got := r.readFast("a.yaml", data); got != taken {
			t.Errorf("%s: fast path took it: %v, want %v", labels, got, taken)
		}
		checkFast(t, "a.yaml", data)
	}
}
