package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// tolerationsPod is a pod of n empty tolerations: 3 bytes of text each,
// some 90 once decoded.
func tolerationsPod(name string, n int) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":"ns"},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}],"tolerations":[%s]}}`,
		name, strings.TrimSuffix(strings.Repeat("{},", n), ","))
}

// Issue 33: the bytes of an input do not bound what it takes decoded (a
// 15 MB List of pods with empty tolerations took 414 MiB; 200,000 tiny
// pods in 38 MB of JSON, 0.5 GB): the objects' decoded size is bounded,
// the refusal naming the object that takes it over, in every form a file
// takes and summed over files, having decoded little more than the
// bound.
func TestDecodedSizeBounded(t *testing.T) {
	const budget = 8 << 20
	pods := make([]string, 8) // 2 MiB decoded each
	for i := range pods {
		pods[i] = tolerationsPod(fmt.Sprintf("p%d", i), 24000)
	}
	items := sizeNode + "," + strings.Join(pods, ",")
	cases := map[string][]string{
		"json list":   {`{"apiVersion":"v1","kind":"List","items":[` + items + `]}`},
		"json stream": {strings.ReplaceAll(items, "},{\"apiVersion", "}\n{\"apiVersion")},
		"json array":  {"[" + items + "]"},
		"two files": {
			`{"apiVersion":"v1","kind":"List","items":[` + sizeNode + "," + strings.Join(pods[:2], ",") + `]}`,
			`{"apiVersion":"v1","kind":"List","items":[` + strings.Join(pods[2:], ",") + `]}`,
		},
		"yaml list": {"apiVersion: v1\nkind: List\nitems:\n- " + sizeNode + "\n- " + strings.Join(pods, "\n- ") + "\n"},
	}
	for name, files := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			for i, data := range files {
				p := filepath.Join(dir, fmt.Sprintf("f%d.json", i))
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
			}
			_, _, err := LoadPathsWith(paths, Options{MaxDecodedBytes: budget})
			if err == nil || !strings.Contains(err.Error(), ": pod ns/p3: the cluster's objects take 9 MiB once decoded with it, more than 8 MiB") ||
				!strings.Contains(err.Error(), "-max-decoded-bytes") {
				t.Fatalf("err %.300v; want pod ns/p3 refused, taking the objects over 8 MiB decoded", err)
			}
			if _, _, err := LoadPathsWith(paths, Options{MaxDecodedBytes: 4 * budget}); err != nil {
				t.Errorf("under a budget of 32 MiB: %v", err)
			}
		})
	}
}

// decodedSize is within a factor of what the heap holds for the objects
// (Go's size classes and maps' growth make it an estimate), for the
// shapes that take most per byte of text.
func TestDecodedSizeEstimatesTheHeap(t *testing.T) {
	labels := make([]string, 1000)
	for i := range labels {
		labels[i] = fmt.Sprintf(`"l%05d":"v"`, i)
	}
	shapes := map[string]func(i int) string{
		"tiny pods": func(i int) string {
			return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%d","namespace":"ns"},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"1m"}}}]}}`, i)
		},
		"tolerations": func(i int) string { return tolerationsPod(fmt.Sprintf("p%d", i), 500) },
		"labels": func(i int) string {
			return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%d","namespace":"ns","labels":{%s}},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}]}}`, i, strings.Join(labels, ","))
		},
		"containers": func(i int) string {
			var cs []string
			for k := range 200 {
				cs = append(cs, fmt.Sprintf(`{"name":"c%d","image":"i"}`, k))
			}
			return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%d","namespace":"ns"},"spec":{"nodeName":"n1","containers":[%s]}}`, i, strings.Join(cs, ","))
		},
	}
	for name, pod := range shapes {
		t.Run(name, func(t *testing.T) {
			var items []string
			for i := range 500 {
				items = append(items, pod(i))
			}
			data := []byte(`{"apiVersion":"v1","kind":"List","items":[` + sizeNode + "," + strings.Join(items, ",") + `]}`)
			items = nil
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			r := reader{opts: Options{}}
			if err := r.readFile("f", data); err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(r.objects)
			heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			ratio := heap / float64(r.decoded)
			t.Logf("decoded size %d KiB, heap grew %.0f KiB: ratio %.2f", r.decoded>>10, heap/(1<<10), ratio)
			if ratio < 0.7 || ratio > 1.6 {
				t.Errorf("decoded size %d MiB, heap grew %.0f MiB: ratio %.2f, want 0.7 to 1.6", r.decoded>>20, heap/(1<<20), ratio)
			}
		})
	}
}
