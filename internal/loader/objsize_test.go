package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const sizeNode = `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4","pods":"110"}}}`

// sizePod is a pod whose annotation "big" is n bytes.
func sizePod(name string, n int) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":"ns","annotations":{"big":"%s"}},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}]}}`, name, strings.Repeat("x", n))
}

// yamlPod is sizePod in YAML, as an item of a List at indent.
func yamlPod(name string, n int, indent string) string {
	return indent + "- apiVersion: v1\n" + indent + "  kind: Pod\n" + indent + "  metadata:\n" + indent + "    name: " + name + "\n" + indent + "    namespace: ns\n" +
		indent + "    annotations:\n" + indent + "      big: " + strings.Repeat("x", n) + "\n" + indent + "  spec:\n" + indent + "    nodeName: n1\n" + indent + "    containers:\n" + indent + "    - {name: c, image: i}\n"
}

// Issue 33: one object of a -cluster input with a huge field (a 250 MB
// annotation, a 250 MB image) was decoded at many times its size (2 GB);
// now any object over MaxObjectBytes is refused from its bytes, naming
// it and the limit, in every form a file takes, allocating little more
// than the file.
func TestHugeObjectInClusterRefusedBeforeDecoding(t *testing.T) {
	big := MaxObjectBytes + 1<<20
	cases := map[string]string{
		"json list":           `{"apiVersion":"v1","kind":"List","items":[` + sizeNode + `,` + sizePod("big", big) + `]}`,
		"pretty json list":    "{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        " + sizeNode + ",\n        " + sizePod("big", big) + "\n    ],\n    \"kind\": \"List\"\n}\n",
		"json stream":         sizeNode + "\n" + sizePod("big", big) + "\n",
		"json array":          "[" + sizeNode + "," + sizePod("big", big) + "]",
		"json with markers":   sizeNode + "\n---\n" + sizePod("big", big) + "\n",
		"yaml list":           "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n" + yamlPod("big", big, ""),
		"yaml indented items": "apiVersion: v1\nitems:\n  - apiVersion: v1\n    kind: Node\n    metadata: {name: n1}\n" + yamlPod("big", big, "  ") + "kind: List\n",
		"yaml documents":      "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n" + strings.TrimPrefix(strings.ReplaceAll(yamlPod("big", big, ""), "\n  ", "\n"), "- "),
		"yaml sequence":       "- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n" + yamlPod("big", big, ""),
		"crlf yaml list":      strings.ReplaceAll("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n"+yamlPod("big", big, ""), "\n", "\r\n"),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			b := []byte(data)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err := LoadClusterWith("f", b, Options{})
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "pod ns/big is ") || !strings.Contains(err.Error(), "the limit on one object") {
				t.Fatalf("err %.300v; want pod ns/big refused at the limit on one object", err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
				t.Errorf("allocated %d MiB refusing an object of %d MiB, want at most 4", n>>20, big>>20)
			}
		})
	}
}

// The same from a directory, and through LoadPod (whose file is bounded
// lower, MaxPodBytes, whatever the limit on one object).
func TestHugeObjectInDirectoryRefusedNamingTheFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.json"), []byte(sizeNode), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("items:\n"+yamlPod("big", MaxObjectBytes, "")+"kind: List\napiVersion: v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadPaths([]string{dir})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "b.yaml")+":2: item 0: pod ns/big is ") {
		t.Fatalf("err %.300v; want b.yaml's item 0, pod ns/big, named", err)
	}
}

// Big inputs of small objects are not refused: the items of a List are
// measured apart, and so are documents.
func TestBigInputOfSmallObjectsNotRefusedAsOneObject(t *testing.T) {
	var j, y, docs, seq strings.Builder
	j.WriteString("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n")
	y.WriteString("apiVersion: v1\nitems:\n")
	for i := 0; j.Len() < MaxObjectBytes+1<<20; i++ {
		if i > 0 {
			j.WriteString(",\n")
			docs.WriteString("---\n")
		}
		fmt.Fprintf(&j, "        %s", sizePod(fmt.Sprint("p", i), 1000))
		p := yamlPod(fmt.Sprint("p", i), 1000, "")
		y.WriteString(p)
		seq.WriteString(p)
		docs.WriteString(strings.TrimPrefix(strings.ReplaceAll(p, "\n  ", "\n"), "- "))
	}
	j.WriteString("\n    ],\n    \"kind\": \"List\"\n}\n")
	y.WriteString("kind: List\n")
	for name, data := range map[string]string{"json": j.String(), "yaml": y.String(), "yaml documents": docs.String(), "yaml sequence": seq.String()} {
		if len(data) <= MaxObjectBytes {
			t.Fatalf("%s: %d bytes, want more than MaxObjectBytes", name, len(data))
		}
		if err := checkObjectSizes("f", []byte(data)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A List's own fields are measured without its items.
	if err := checkObjectSizes("f", []byte(`{"kind":"List","metadata":{"x":"`+strings.Repeat("y", MaxObjectBytes)+`"},"items":[]}`)); err == nil || !strings.Contains(err.Error(), "document 1: list is") {
		t.Errorf("a List's own fields over the limit: %v", err)
	}
}

// Issue 33: annotations over the API server's limit (apimachinery's
// TotalAnnotationSizeLimitB, 256 KiB) in an object under MaxObjectBytes
// are refused, naming the object and the limit, in -cluster and -pod.
func TestAnnotationsOverAPIServerLimitRefused(t *testing.T) {
	pod := sizePod("big", 256<<10)
	_, _, err := LoadClusterWith("f", []byte(`{"apiVersion":"v1","kind":"List","items":[`+sizeNode+`,`+pod+`]}`), Options{})
	if err == nil || !strings.Contains(err.Error(), "f: item 1: pod ns/big: metadata.annotations: annotations size 262147 is larger than limit 262144") || !strings.Contains(err.Error(), "TotalAnnotationSizeLimitB") {
		t.Errorf("-cluster: %v", err)
	}
	_, err = LoadPod("p.json", []byte(strings.Replace(pod, `"nodeName":"n1",`, "", 1)))
	if err == nil || !strings.Contains(err.Error(), "p.json: pod ns/big: metadata.annotations: annotations size 262147 is larger than limit 262144") {
		t.Errorf("-pod: %v", err)
	}
	// At the limit, read.
	if _, err := LoadPod("p.json", []byte(strings.Replace(sizePod("big", 256<<10-3), `"nodeName":"n1",`, "", 1))); err != nil {
		t.Errorf("annotations at the limit: %v", err)
	}
}

// A YAML List whose items are in flow style is measured whole, and the
// refusal says how to write it.
func TestFlowStyleYAMLListOverLimitSaysWhy(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems: [")
	for i := 0; b.Len() < MaxObjectBytes+1<<10; i++ {
		fmt.Fprintf(&b, "{apiVersion: v1, kind: Pod, metadata: {name: p%d}},\n  ", i)
	}
	b.WriteString("]\n")
	err := checkObjectSizes("f", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "list (its items in flow style") {
		t.Errorf("err %v; want the List named, with its items' style", err)
	}
}

// tolerationsPod is a pod of n empty tolerations, "{}" each: 3 bytes of
// text that decode to some 90.
func denseTolerationsPod(n int) string {
	return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"dense","namespace":"ns"},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}],"tolerations":[` +
		strings.TrimSuffix(strings.Repeat("{},", n), ",") + `]}}`
}

// Issue 33: an object of dense text under MaxObjectBytes (16 MiB of
// empty tolerations) decoded to some 30 times its text, 480 MiB, before
// the loader counted it (peak RSS 1.0 GB in JSON, 1.25 GB in YAML's flow
// style); now an object of more than MaxObjectDenseBytes of text less
// whitespace is refused from its bytes, naming it, in JSON and YAML, while
// the same text indented, as kubectl writes YAML, is still read.
func TestDenseObjectRefusedBeforeDecoding(t *testing.T) {
	n := MaxObjectDenseBytes/3 + 1000
	pod := denseTolerationsPod(n)
	yamlItems := "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n" +
		"- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: dense\n    namespace: ns\n  spec:\n    nodeName: n1\n    containers: [{name: c, image: i}]\n    tolerations: [" +
		strings.TrimSuffix(strings.Repeat("{},", n), ",") + "]\n"
	for name, data := range map[string]string{
		"json list":   `{"apiVersion":"v1","kind":"List","items":[` + sizeNode + `,` + pod + `]}`,
		"json stream": sizeNode + "\n" + pod + "\n",
		"yaml flow":   yamlItems,
		"yaml document": "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: dense\n  namespace: ns\nspec:\n  nodeName: n1\n  tolerations: [" +
			strings.TrimSuffix(strings.Repeat("{},", n), ",") + "]\n",
	} {
		t.Run(name, func(t *testing.T) {
			if len(data) > MaxObjectBytes {
				t.Fatalf("%d bytes: want under MaxObjectBytes", len(data))
			}
			_, _, err := LoadClusterWith("f", []byte(data), Options{})
			if err == nil || !strings.Contains(err.Error(), "pod ns/dense is ") || !strings.Contains(err.Error(), "bytes of text less whitespace, more than 4194304 (4 MiB), the limit on one object") {
				t.Fatalf("err %.300v; want pod ns/dense refused at the limit on one object's dense text", err)
			}
		})
	}
	// Indented, as kubectl writes it: 3 MiB of dense text in 9 MiB.
	var y strings.Builder
	y.WriteString("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n  status: {allocatable: {cpu: \"4\", pods: \"110\"}}\n" +
		"- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: dense\n    namespace: ns\n  spec:\n    nodeName: n1\n    containers: [{name: c, image: i}]\n    tolerations:\n")
	for range 1 << 20 {
		y.WriteString("    - {}\n")
	}
	if y.Len() <= MaxObjectDenseBytes {
		t.Fatal("the indented pod is not over MaxObjectDenseBytes")
	}
	if err := checkObjectSizes("f", []byte(y.String())); err != nil {
		t.Errorf("an indented pod of %d bytes, %d dense: %v", y.Len(), dense([]byte(y.String())), err)
	}
}
