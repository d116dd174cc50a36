package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/preemptbench/preemptbench/internal/loader"
)

// fakeAPIServer serves the lists decide -kubeconfig reads: pods by pods,
// every other list empty; it counts the pods lists asked.
func fakeAPIServer(t *testing.T, pods http.HandlerFunc) (kubeconfig string, podLists *atomic.Int64) {
	t.Helper()
	podLists = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/v1/pods" {
			podLists.Add(1)
			pods(w, r)
			return
		}
		fmt.Fprint(w, `{"kind":"List","apiVersion":"v1","metadata":{},"items":[]}`)
	}))
	t.Cleanup(srv.Close)
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {}}]
current-context: c
`, srv.URL)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, podLists
}

// Issue 33: client-go reads an answer whole before any bound of the
// loader applies. An API server that ignores the page's limit and streams
// a pods list without end (written as it goes, never held) is refused at
// loader.MaxResponseBytes, naming the server, the request and the bound,
// exit 2, after asking the page again in halves down to one object: for
// the cluster (LoadLive) and for -pending's list.
func TestDecideKubeconfigEndlessAnswerRefused(t *testing.T) {
	endless := func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[`)
		chunk := []byte(strings.Repeat(`{"metadata":{"name":"p","namespace":"default"}},`, 1000))
		for {
			if _, err := w.Write(chunk); err != nil {
				return // the client stopped reading
			}
		}
	}
	kubeconfig, lists := fakeAPIServer(t, endless)
	for _, args := range [][]string{{"-pod", "default/p"}, {"-pending"}} {
		lists.Store(0)
		_, stderr, code := runCLI(t, append([]string{"decide", "-kubeconfig", kubeconfig, "-impl", "reference"}, args...)...)
		want := fmt.Sprintf("the answer to GET /api/v1/pods?%slimit=1 is more than %d bytes (16 MiB), the bound on one answer of the API server", map[bool]string{true: "fieldSelector=spec.nodeName%3D&", false: ""}[args[0] == "-pending"], loader.MaxResponseBytes)
		if code != ExitBadInput || !strings.Contains(stderr, "compare decide: the API server at http://127.0.0.1:") || !strings.Contains(stderr, want) {
			t.Errorf("decide %q: exit %d, stderr %.500q; want 2 and %q", args, code, stderr, want)
		}
		if n := lists.Load(); n != 9 { // limit 500, 250, 125, ..., 3, 1
			t.Errorf("decide %q: %d pods lists asked, want 9 (the page halved down to one object)", args, n)
		}
	}
}

// Issue 33: an API server that answers every page with a continue token
// would be listed without end; the listing is refused after
// loader.MaxListPages pages, exit 2. (The server gives up itself after
// three times as many, so that the test ends without the bound.)
func TestDecideKubeconfigEndlessContinueRefused(t *testing.T) {
	var kubeconfig string
	var lists *atomic.Int64
	kubeconfig, lists = fakeAPIServer(t, func(w http.ResponseWriter, r *http.Request) {
		if lists.Load() > 3*loader.MaxListPages {
			http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"the test server gave up","code":500}`, http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"c%d"},"items":[]}`, lists.Load())
	})
	// The cluster's listing (LoadLive); -pending's is the same ListPages.
	_, stderr, code := runCLI(t, "decide", "-kubeconfig", kubeconfig, "-impl", "reference", "-pod", "default/p")
	want := fmt.Sprintf("listing pods (v1): more than %d pages", loader.MaxListPages)
	if code != ExitBadInput || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %.500q; want 2 and %q", code, stderr, want)
	}
	if n := lists.Load(); n != loader.MaxListPages {
		t.Errorf("%d pods lists asked, want %d", n, loader.MaxListPages)
	}
}

// Issue 33: all that one load reads from the API server is bounded by
// -max-input-bytes, -pending's list too (it kept every pending pod
// without a bound): pages of 1000 pending pods each, endless, are refused
// once they total more.
func TestDecideKubeconfigReadsBoundedByMaxInputBytes(t *testing.T) {
	var kubeconfig string
	var lists *atomic.Int64
	page := strings.Repeat(`{"metadata":{"name":"p","namespace":"default"},"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable"}]}},`, 1000)
	page = strings.TrimSuffix(page, ",")
	kubeconfig, lists = fakeAPIServer(t, func(w http.ResponseWriter, r *http.Request) {
		if lists.Load() > 200 { // the test ends without the bound
			http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"the test server gave up","code":500}`, http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"c%d"},"items":[%s]}`, lists.Load(), page)
	})
	const max = 4 << 20
	for _, args := range [][]string{{"-pod", "default/p"}, {"-pending"}} {
		lists.Store(0)
		_, stderr, code := runCLI(t, append([]string{"decide", "-kubeconfig", kubeconfig, "-impl", "reference", "-max-input-bytes", fmt.Sprint(max)}, args...)...)
		want := fmt.Sprintf("more than %d bytes (-max-input-bytes)", max)
		if code != ExitBadInput || !strings.Contains(stderr, want) {
			t.Errorf("decide %q: exit %d, stderr %.500q; want 2 and %q", args, code, stderr, want)
		}
		if n, most := lists.Load(), int64(max/len(page)+2); n > most {
			t.Errorf("decide %q: %d pods lists asked, want at most %d", args, n, most)
		}
	}
}
