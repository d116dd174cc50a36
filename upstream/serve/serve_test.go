package serve_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/preemptbench/preemptbench/upstream"
	"github.com/preemptbench/preemptbench/upstream/serve"
	"github.com/preemptbench/preemptbench/wire"
)

// -version prints the release; a bad flag is exit 2.
func TestFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := serve.Main([]string{"-version"}, strings.NewReader(""), &out, &errOut); code != 0 || strings.TrimSpace(out.String()) != upstream.Version {
		t.Errorf("-version: exit %d, %q (stderr %q), want %s", code, out.String(), errOut.String(), upstream.Version)
	}
	out.Reset()
	errOut.Reset()
	if code := serve.Main([]string{"-no-such-flag"}, strings.NewReader(""), &out, &errOut); code != 2 || errOut.Len() == 0 {
		t.Errorf("a bad flag: exit %d, stderr %q; want 2 and a note", code, errOut.String())
	}
}

// With no request, the child says Hello with the adapter's name and ends.
func TestHello(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := serve.Main(nil, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var h wire.Hello
	if err := json.NewDecoder(&out).Decode(&h); err != nil {
		t.Fatal(err)
	}
	if h.Protocol != wire.Protocol || h.Name != (upstream.Impl{}).Name() {
		t.Errorf("hello %+v, want protocol %s and name %s", h, wire.Protocol, upstream.Impl{}.Name())
	}
}
