package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path"
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

// kubeconfigFor writes a kubeconfig naming the server at url.
func kubeconfigFor(t *testing.T, url string) string {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \""+url+"\"}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\nusers:\n- name: u\n  user: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// Issue 33: an API server that answers slowly, each request within its
// bound (60 s), held decide -kubeconfig for as long as it liked: a body
// dripped a byte at a time kept a request going for the whole minute,
// and a load asks 13 kinds and the pod, each in pages. Each exchange as
// a whole is bounded now (-kube-timeout, 45 s; 2 s here): the load,
// -pending's listing and -apply's dry-run calls.
func TestDecideKubeconfigSlowDripServerIsBoundAsAWhole(t *testing.T) {
	for _, tc := range []struct {
		name  string
		serve http.HandlerFunc
	}{
		// The body of every answer, a space each 100 ms, without end.
		{"drip", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("{"))
			for {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
				if _, err := w.Write([]byte(" ")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}},
		// Every answer whole, each after 700 ms, within the bound on a
		// request (1 s here): every page of every kind.
		{"each answer late", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(700 * time.Millisecond):
			}
			w.Header().Set("Content-Type", "application/json")
			kind := map[string]string{"nodes": "NodeList", "pods": "PodList"}[path.Base(r.URL.Path)]
			_, _ = w.Write([]byte(`{"kind":"` + kind + `","apiVersion":"v1","metadata":{"continue":"more"},"items":[]}`))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.serve)
			defer srv.Close()
			defer srv.CloseClientConnections()
			defer func(d time.Duration) { liveRequestTimeout = d }(liveRequestTimeout)
			liveRequestTimeout = time.Second
			if tc.name == "drip" {
				liveRequestTimeout = time.Minute
			}
			kubeconfig := kubeconfigFor(t, srv.URL)
			for _, args := range [][]string{
				{"-pod", "default/p"},
				{"-pending"},
			} {
				start := time.Now()
				_, stderr, code := runCLI(t, append([]string{"decide", "-kubeconfig", kubeconfig, "-kube-timeout", "2s", "-now", testNow}, args...)...)
				d := time.Since(start)
				if code != ExitBadInput || !strings.Contains(stderr, "not done within 2s, -kube-timeout") {
					t.Errorf("%v: exit %d, stderr %.400q; want 2 and the exchange timed out", args, code, stderr)
				}
				if d > 10*time.Second {
					t.Errorf("%v: took %v, want about 2 s", args, d)
				}
			}
		})
	}
}

// -kube-timeout is refused without -kubeconfig, and when not positive.
func TestKubeTimeoutFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml", "-kube-timeout", "5s"}, "they need -kubeconfig"},
		{[]string{"-kubeconfig", "testdata/none", "-pod", "default/p", "-kube-timeout", "0s"}, "-kube-timeout 0s: the bound on each exchange with the API server must be positive"},
	} {
		_, stderr, code := runCLI(t, append([]string{"decide", "-now", testNow}, tc.args...)...)
		if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %.300q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
