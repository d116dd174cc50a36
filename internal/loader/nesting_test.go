package loader

import (
	"runtime"
	"strings"
	"testing"
)

// allocated is what fn allocates, in bytes.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Issue 33: input nested deeper than MaxNesting is refused from its bytes,
// before decoding, in about the memory of the input itself: a 200 MB YAML
// document nested 20000 deep by indentation took 1.5 GB before the
// decoders refused it. Each form here is past the limit: block mappings
// by indentation, sequence entries on one line, flow collections.
func TestDeepNestingIsRefusedBeforeDecoding(t *testing.T) {
	indented := func(depth int) string {
		var b strings.Builder
		for i := range depth {
			b.WriteString(strings.Repeat(" ", i))
			b.WriteString("a:\n")
		}
		b.WriteString(strings.Repeat(" ", depth) + "b\n")
		return b.String()
	}
	for _, tc := range []struct{ name, data string }{
		{"indentation", indented(3000)},
		{"sequence entries", strings.Repeat("- ", 20000) + "x\n"},
		{"flow", "kind: List\nitems: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n"},
		{"json", `{"kind":"List","items":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "}\n---\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, _, err = LoadCluster("deep.yaml", []byte(tc.data)) })
			if err == nil || !strings.Contains(err.Error(), "nested deeper than 1000 levels") {
				t.Errorf("error %.300v, want a refusal of the nesting", err)
			}
			if limit := 2*uint64(len(tc.data)) + 1<<20; n > limit {
				t.Errorf("allocated %d bytes on %d bytes of input, want at most %d", n, len(tc.data), limit)
			}
		})
	}
	// At the limit's side: a Pod and a shallow nesting pass.
	if _, _, err := LoadCluster("ok.yaml", []byte("apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {a: '[[['}}\n---\n"+indented(900)[:0]+"apiVersion: v1\nkind: List\nitems: [[[[]]]]\n")); err != nil && strings.Contains(err.Error(), "nested") {
		t.Errorf("a shallow input: %v", err)
	}
}
