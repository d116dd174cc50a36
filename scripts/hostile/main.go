// Command hostile writes the awkward inputs that measure the loader's
// memory (issue 33): each is within the default -max-input-bytes, and
// none is committed (they are hundreds of megabytes).
//
//	go run ./scripts/hostile DIR
//
// writes, in DIR:
//
//	a-annotation.json    a List: a node, a pod with one 250 MB annotation
//	a-annotation.yaml    the same in YAML
//	b-tiny-pods.json     a List: 2,000 nodes, 200,000 tiny pods (100 a node)
//	b-one-node.json      a List: a node, 200,000 tiny pods bound to it
//	c-deep.yaml          200 MB of YAML: pods nested 900 levels deep
//	d-huge-string.json   a List: a node, a pod whose image is 250 MB
//	e-labels.json        a List: a node, 1,500 pods of 10,000 labels each
//	f-tolerations.json   a List: a node, 100 pods of 50,000 empty tolerations
//	                     each ("{}": 3 bytes of text, some 90 decoded)
//	pod.yaml             a preemptor for all of them
//
// Time and memory of each, as the table in docs/input.md:
//
//	/usr/bin/time -v compare decide -cluster DIR/a-annotation.json -pod DIR/pod.yaml -offset 0 -now 2026-01-01T00:00:00Z
//
// scripts/hostile-memory.sh runs every one with every implementation and
// fails on any over 1 GB or 60 s, or ending otherwise than with a
// decision or a refusal (exit 0 or 2).
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const node = `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}}`

func pod(i int, extra string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%d","namespace":"default"%s},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"1m"}}}]}}`, i, extra)
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: hostile DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(err)
	}
	write(dir, "pod.yaml", func(w *bufio.Writer) {
		w.WriteString("apiVersion: v1\nkind: Pod\nmetadata:\n  name: preemptor\n  namespace: default\nspec:\n  priority: 1000\n  containers:\n  - name: c\n    image: i\n    resources:\n      requests:\n        cpu: \"1\"\n")
	})
	big := strings.Repeat("x", 250_000_000)
	list := func(w *bufio.Writer, items func(item func(string))) {
		w.WriteString(`{"apiVersion":"v1","kind":"List","items":[` + node)
		items(func(s string) { w.WriteString(",\n" + s) })
		w.WriteString("]}\n")
	}
	write(dir, "a-annotation.json", func(w *bufio.Writer) {
		list(w, func(item func(string)) { item(pod(0, `,"annotations":{"big":"`+big+`"}`)) })
	})
	write(dir, "a-annotation.yaml", func(w *bufio.Writer) {
		w.WriteString("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n1\n  status:\n    allocatable:\n      cpu: \"4\"\n      memory: 8Gi\n      pods: \"110\"\n")
		w.WriteString("- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p0\n    namespace: default\n    annotations:\n      big: " + big + "\n  spec:\n    nodeName: n1\n    containers:\n    - name: c\n      image: i\n")
	})
	write(dir, "b-tiny-pods.json", func(w *bufio.Writer) {
		w.WriteString(`{"apiVersion":"v1","kind":"List","items":[` + node)
		for n := 2; n <= 2000; n++ {
			w.WriteString(",\n" + strings.Replace(node, `"n1"`, fmt.Sprintf(`"n%d"`, n), 1))
		}
		for i := range 200_000 {
			w.WriteString(",\n" + strings.Replace(pod(i, ""), `"nodeName":"n1"`, fmt.Sprintf(`"nodeName":"n%d"`, 1+i%2000), 1))
		}
		w.WriteString("]}\n")
	})
	write(dir, "b-one-node.json", func(w *bufio.Writer) {
		list(w, func(item func(string)) {
			for i := range 200_000 {
				item(pod(i, ""))
			}
		})
	})
	write(dir, "c-deep.yaml", func(w *bufio.Writer) {
		// Each document a pod with an unknown field 900 levels deep, by
		// indentation: some 800 KB a document.
		var deep strings.Builder
		for d := range 900 {
			deep.WriteString(strings.Repeat(" ", 2*d+4) + "a:\n")
		}
		deep.WriteString(strings.Repeat(" ", 2*900+4) + "b: 1\n")
		n := 0
		for written := 0; written < 200_000_000; n++ {
			s := fmt.Sprintf("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\n  namespace: default\nspec:\n  nodeName: n1\n  containers:\n  - name: c\n    image: i\n  deep:\n%s", n, deep.String())
			w.WriteString(s)
			written += len(s)
		}
		w.WriteString("---\n" + node + "\n")
	})
	write(dir, "d-huge-string.json", func(w *bufio.Writer) {
		list(w, func(item func(string)) {
			item(strings.Replace(pod(0, ""), `"image":"i"`, `"image":"`+big+`"`, 1))
		})
	})
	write(dir, "f-tolerations.json", func(w *bufio.Writer) {
		tolerations := `"tolerations":[` + strings.TrimSuffix(strings.Repeat("{},", 50_000), ",") + `],`
		list(w, func(item func(string)) {
			for i := range 100 {
				item(strings.Replace(pod(i, ""), `"spec":{`, `"spec":{`+tolerations, 1))
			}
		})
	})
	write(dir, "e-labels.json", func(w *bufio.Writer) {
		var labels strings.Builder
		labels.WriteString(`,"labels":{`)
		for l := range 10_000 {
			if l > 0 {
				labels.WriteByte(',')
			}
			fmt.Fprintf(&labels, `"l%05d":"v"`, l)
		}
		labels.WriteString("}")
		list(w, func(item func(string)) {
			for i := range 1500 {
				item(pod(i, labels.String()))
			}
		})
	})
}

func write(dir, name string, fill func(w *bufio.Writer)) {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		fail(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fill(w)
	if err := w.Flush(); err != nil {
		fail(err)
	}
	if err := f.Close(); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
