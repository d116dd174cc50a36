package cli

import (
	"context"
	"os"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// brokenImpl is the reference with one bug: it reports the nominated node
// under another name.
type brokenImpl struct{}

func (brokenImpl) Name() string { return "broken" }
func (brokenImpl) NewEvaluator(c *preempt.Cluster) (preempt.Evaluator, error) {
	ev, err := reference.Impl{}.NewEvaluator(c)
	return brokenEvaluator{ev}, err
}

type brokenEvaluator struct{ preempt.Evaluator }

func (b brokenEvaluator) Preempt(ctx context.Context, cs kubernetes.Interface, req *preempt.Request) preempt.Decision {
	d := b.Evaluator.Preempt(ctx, cs, req)
	d.NominatedNode += "-typo"
	return d
}

func TestDecideAllReportsDisagreement(t *testing.T) {
	saved := implementations
	implementations = func() []preempt.Implementation { return []preempt.Implementation{reference.Impl{}, brokenImpl{}} }
	defer func() { implementations = saved }()

	stdout, stderr, code := runCLI(t, "decide", "-impl", "all", "-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml", "-now", testNow, "-o", "text")
	if code != ExitDiffer {
		t.Fatalf("exit %d, want %d; stderr %s", code, ExitDiffer, stderr)
	}
	for _, want := range []string{"broken differs from reference (-reference +broken):", `"node-a",`, `"node-a-typo",`, "agreement: reference and broken DISAGREE (exit 1)\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

// -impl all ends with one line saying whether they agree: on stderr beside
// the JSON (stdout stays one JSON value), in the text for people.
func TestDecideAllSaysTheyAgree(t *testing.T) {
	args := []string{"decide", "-impl", "all", "-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml", "-now", testNow}
	stdout, stderr, code := runCLI(t, args...)
	if code != ExitOK || !strings.HasSuffix(stderr, "compare decide: all three agree (reference, upstream, optimized)\n") || strings.Contains(stdout, "agree") {
		t.Errorf("JSON: exit %d, stderr %q", code, stderr)
	}
	stdout, _, code = runCLI(t, append(args, "-o", "text")...)
	if code != ExitOK || !strings.HasSuffix(stdout, "agreement: all three agree (reference, upstream, optimized)\n") {
		t.Errorf("text: exit %d, stdout ends %q", code, stdout[max(0, len(stdout)-200):])
	}
}

// -impl takes a list, exec: implementations among them: here this test
// binary serving optimized over package wire's protocol.
func TestDecideExecImplementation(t *testing.T) {
	t.Setenv("PREEMPTBENCH_CLI_CHILD", "optimized")
	args := []string{"decide", "-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml", "-now", testNow}
	_, stderr, code := runCLI(t, append(args, "-impl", "reference,exec:"+os.Args[0])...)
	if code != ExitOK || !strings.HasSuffix(stderr, "compare decide: reference and optimized agree\n") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	// A child that never says hello: an error naming it, within the timeout.
	_, stderr, code = runCLI(t, append(args, "-impl", "reference,exec:sleep 30", "-exec-timeout", "500ms")...)
	if code != ExitBadInput || !strings.Contains(stderr, "wire: sleep did not answer within 500ms (awaiting its Hello); killed") {
		t.Errorf("a silent child: exit %d, stderr %q", code, stderr)
	}
}
