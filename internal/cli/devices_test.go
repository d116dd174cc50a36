package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// -config /dev/zero was read without end (the size check read the
// device's size, 0, and os.ReadFile read on): now read through the
// bound, refused at once as binary data, exit 2.
func TestDecideConfigDeviceRefused(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, stderr, code := runCLI(t, "decide", "-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml", "-config", "/dev/zero", "-now", testNow)
	if code != ExitBadInput || !strings.Contains(stderr, "-config /dev/zero: binary data") {
		t.Errorf("exit %d, stderr %.300q; want 2 and /dev/zero refused as binary data", code, stderr)
	}
}

// -kubeconfig /dev/zero was read without end by client-go: a file that is
// not regular is read here through the bound.
func TestDecideKubeconfigDeviceRefused(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, stderr, code := runCLI(t, "decide", "-kubeconfig", "/dev/zero", "-pod", "default/p", "-now", testNow)
	if code != ExitBadInput || !strings.Contains(stderr, "-kubeconfig /dev/zero: binary data") {
		t.Errorf("exit %d, stderr %.300q; want 2 and /dev/zero refused as binary data", code, stderr)
	}
}

// An API server that takes the connection and never answers hung
// decide -kubeconfig: client-go waits without end. Each request is
// bounded now (liveRequestTimeout, 60 s; 1 s here).
func TestDecideKubeconfigSilentServerTimesOut(t *testing.T) {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(done)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \""+srv.URL+"\"}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\nusers:\n- name: u\n  user: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { liveRequestTimeout = d }(liveRequestTimeout)
	liveRequestTimeout = time.Second
	start := time.Now()
	_, stderr, code := runCLI(t, "decide", "-kubeconfig", kubeconfig, "-pod", "default/p", "-now", testNow)
	if code != ExitBadInput || !strings.Contains(stderr, "no answer within 1s") {
		t.Errorf("exit %d, stderr %.300q; want 2 and the request timed out", code, stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
}
