package cli

import (
	"os"
	"strings"
	"testing"
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
