package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesAreUpToDate: every file gen writes is on disk as gen
// would write it from the module's k8s.io/kubernetes. After a
// k8s.io/kubernetes update, `go generate ./internal/kube` writes them
// again (and the tests beside the copies say whether the hand-written
// files around them still agree with upstream).
func TestGeneratedFilesAreUpToDate(t *testing.T) {
	files, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		have, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(f.path)))
		if err != nil {
			t.Error(err)
			continue
		}
		if !bytes.Equal(have, f.data) {
			t.Errorf("internal/kube/%s differs from what gen writes: run go generate ./internal/kube", f.path)
		}
	}
}
