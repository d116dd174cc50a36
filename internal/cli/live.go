package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/internal/loader"
	"github.com/preemptbench/preemptbench/preempt"
)

// liveOptions are decide's -kubeconfig, -context, -pod NAMESPACE/NAME,
// -pending and -apply: the cluster an API server holds.
type liveOptions struct {
	kubeconfig, context string
	name                string // the API server, for notes and errors
	client              kubernetes.Interface
	reads               *loader.LiveReads // bounds what client reads
	namespace, pod      string            // -pod
	pending             bool
	serverDryRun        bool          // -apply=server-dry-run
	timeout             time.Duration // -kube-timeout
}

// liveRequestTimeout bounds each request to the API server (a page of
// 500 objects, a dry-run call), as kubectl's --request-timeout would.
var liveRequestTimeout = 60 * time.Second

// liveExchangeTimeout is -kube-timeout's default: the bound on each
// exchange with the API server as a whole (a load: every page of every
// kind and the pod; -pending's listing; -apply's dry-run calls). The
// bound on each request does not bound a load: a server that answers
// every page just inside it, or drips its answers a byte at a time,
// would make a load of 13 kinds take hours. 45 s leaves a decision on
// the loaded cluster time to end within a minute; a real cluster of
// 5,000 nodes and 150,000 pods is read in some 300 pages, under it on a
// responsive API server.
const liveExchangeTimeout = 45 * time.Second

// exchange is the context of one exchange with the API server, under
// -kube-timeout.
func (l *liveOptions) exchange() (context.Context, context.CancelFunc) {
	d := l.timeout
	if d <= 0 {
		d = liveExchangeTimeout
	}
	return context.WithTimeout(context.Background(), d)
}

func parseLive(kubeconfig, kubeContext, pod string, pending bool, apply string, timeout time.Duration, clusterFiles []string, podGroupFile string) (*liveOptions, error) {
	switch {
	case timeout <= 0:
		return nil, badf("-kube-timeout %v: the bound on each exchange with the API server must be positive", timeout)
	case len(clusterFiles) > 0:
		return nil, badf("-kubeconfig reads the cluster from the API server: drop -cluster")
	case podGroupFile != "":
		return nil, badf("-kubeconfig takes a pod (-pod NAMESPACE/NAME) or -pending; a gang (-pod-group) is read from files only, for now")
	case pending && pod != "":
		return nil, badf("-pending decides for every unschedulable pod: drop -pod")
	case !pending && pod == "":
		return nil, badf("-kubeconfig needs -pod NAMESPACE/NAME (a pod the API server holds) or -pending")
	case apply != "" && apply != "server-dry-run":
		return nil, badf("-apply %q: the only mode is server-dry-run (the API server validates each call and changes nothing)", apply)
	}
	l := &liveOptions{kubeconfig: kubeconfig, context: kubeContext, pending: pending, serverDryRun: apply == "server-dry-run", timeout: timeout}
	if pod != "" {
		ns, name, ok := strings.Cut(pod, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return nil, badf("-pod %q: with -kubeconfig, -pod is NAMESPACE/NAME of a pod the API server holds", pod)
		}
		l.namespace, l.pod = ns, name
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: kubeContext}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	if st, err := os.Stat(kubeconfig); err == nil && !st.Mode().IsRegular() {
		// client-go reads the file whole, without a bound: a device
		// (-kubeconfig /dev/zero) would be read on without end. A pipe
		// (-kubeconfig <(...)) is read here, bounded, as -config is.
		path := kubeconfig
		if path == "-" {
			path = "./-"
		}
		data, err := loader.ReadInput(path, loader.Options{MaxBytes: maxConfigBytes})
		if loader.TooLarge(err) {
			return nil, badf("-kubeconfig %s: more than the %d bytes a kubeconfig may have", kubeconfig, maxConfigBytes)
		}
		if err != nil {
			return nil, badf("-kubeconfig %v", err)
		}
		raw, err := clientcmd.Load(data)
		if err != nil {
			return nil, badf("-kubeconfig %s: %v", kubeconfig, err)
		}
		cc = clientcmd.NewNonInteractiveClientConfig(*raw, kubeContext, overrides, nil)
	} else if err == nil && st.Size() > maxConfigBytes {
		return nil, badf("-kubeconfig %s: %d bytes, more than the %d a kubeconfig may have", kubeconfig, st.Size(), maxConfigBytes)
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, badf("-kubeconfig %s: %v", kubeconfig, err)
	}
	cfg.UserAgent = "preemptbench-compare"
	if cfg.QPS == 0 && cfg.Burst == 0 {
		// client-go's defaults (5 a second, 10 at once) would take
		// minutes over a big cluster's pages, asked one at a time; the
		// API server's priority and fairness protects it.
		cfg.QPS, cfg.Burst = 50, 100
	}
	if cfg.Timeout == 0 {
		// client-go waits for an answer without end: an API server that
		// takes the connection and never answers would hang decide.
		cfg.Timeout = liveRequestTimeout
	}
	l.name = "the API server at " + cfg.Host
	// client-go reads each answer whole before anything of the loader's
	// bounds it: a broken or hostile server (one that ignores a page's
	// limit, or streams without end) would take memory without bound.
	l.reads = loader.BoundReads(cfg, l.name)
	if l.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, badf("-kubeconfig %s: %v", kubeconfig, err)
	}
	return l, nil
}

// timedOut says why err is a timeout: the exchange's (ctx, -kube-timeout)
// or a request's (the client's Timeout, which client-go reports either as
// its http.Client's or as a context's deadline), or "".
func (l *liveOptions) timedOut(ctx context.Context, err error) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		d := l.timeout
		if d <= 0 {
			d = liveExchangeTimeout
		}
		return fmt.Sprintf(" (not done within %v, -kube-timeout: the bound on all of one exchange with the API server); refused", d)
	}
	if !errors.Is(err, context.DeadlineExceeded) && !os.IsTimeout(err) && !strings.Contains(err.Error(), "Client.Timeout") {
		return ""
	}
	return fmt.Sprintf(" (no answer within %v, the bound on each request to the API server)", liveRequestTimeout)
}

// liveMessage is err's text without client-go's words for a body it
// could not read to the end ("Please retry"), which mislead when the
// reason is a bound of ours.
func liveMessage(err error) string {
	return strings.Replace(err.Error(), "unexpected error when reading response body. Please retry. Original error: ", "", 1)
}

// load reads the cluster and the preemptor -pod names from the API
// server, with the loader's rules and notes (loader.LoadLive).
func (l *liveOptions) load(opts loader.Options, stderr io.Writer) (*preempt.Cluster, *v1.Pod, error) {
	ctx, cancel := l.exchange()
	defer cancel()
	note := func(n string) { fmt.Fprintf(stderr, "compare decide: note: %s\n", n) }
	opts.Notify = note
	l.startReads(opts.MaxBytes)
	cluster, notes, err := loader.LoadLive(ctx, l.client, l.name, opts)
	for _, n := range notes {
		note(n)
	}
	if err != nil {
		return nil, nil, badf("%s%s", liveMessage(err), l.timedOut(ctx, err))
	}
	pod, notes, err := loader.LoadLivePod(ctx, l.client, l.name, l.namespace, l.pod, opts)
	for _, n := range notes {
		note(n)
	}
	if err != nil {
		return nil, nil, badf("%s%s", liveMessage(err), l.timedOut(ctx, err))
	}
	if pod.Spec.NodeName != "" {
		return nil, nil, badf("pod %s/%s is bound to node %s: there is nothing to preempt for", l.namespace, l.pod, pod.Spec.NodeName)
	}
	return withoutPod(cluster, pod), pod, nil
}

// startReads begins a load: all it reads from the API server is bounded
// by maxBytes (-max-input-bytes), each answer by loader.MaxResponseBytes.
func (l *liveOptions) startReads(maxBytes int64) {
	if l.reads == nil {
		return // a client a test made
	}
	if maxBytes <= 0 {
		maxBytes = loader.MaxInputBytes
	}
	l.reads.Start(maxBytes)
}

// pendingPod is what decide -pending keeps of an unschedulable pod: what
// the queue's order reads, no more (each is read again to be decided).
type pendingPod struct {
	namespace, name  string
	priority         int32
	entered, created metav1.Time
}

// pendingPods lists the pods the API server holds unschedulable: not
// bound, not terminal, not being deleted, PodScheduled=False with reason
// Unschedulable (as the scheduler marks a pod after a failed cycle), in
// the scheduling queue's order: PrioritySort's higher priority first, then
// the earlier time the pod entered the queue, which the API does not show:
// its PodScheduled condition's last transition (then the creation time,
// namespace and name) stands for it. What it reads is bounded by maxBytes
// (-max-input-bytes) and loader.ListPages' bounds; what it keeps, some
// 100 bytes a pod, by what it reads.
func (l *liveOptions) pendingPods(ctx context.Context, maxBytes int64) ([]pendingPod, error) {
	var out []pendingPod
	l.startReads(maxBytes)
	err := loader.ListPages(ctx, l.name, "pods", metav1.ListOptions{FieldSelector: "spec.nodeName="}, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		list, err := l.client.CoreV1().Pods("").List(ctx, o)
		if err != nil {
			if to := l.timedOut(ctx, err); to != "" {
				return nil, fmt.Errorf("%s: listing pods: %s%s", l.name, liveMessage(err), to)
			}
			return nil, fmt.Errorf("%s: listing pods: %w", l.name, err)
		}
		return list, nil
	}, func(obj runtime.Object) error {
		list, ok := obj.(*v1.PodList)
		if !ok {
			return fmt.Errorf("%s: listing pods: got a %T", l.name, obj)
		}
		for i := range list.Items {
			p := &list.Items[i]
			if p.DeletionTimestamp != nil || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
				continue
			}
			for _, c := range p.Status.Conditions {
				if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable {
					out = append(out, pendingPod{p.Namespace, p.Name, corev1helpers.PodPriority(p), c.LastTransitionTime, p.CreationTimestamp})
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, badf("%v", loader.LiveError(err))
	}
	slices.SortStableFunc(out, func(a, b pendingPod) int {
		if a.priority != b.priority {
			return cmp.Compare(b.priority, a.priority)
		}
		return cmp.Or(a.entered.Time.Compare(b.entered.Time), a.created.Time.Compare(b.created.Time),
			cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
	})
	return out, nil
}

// decidePending is decide -pending: a decision for every unschedulable
// pod in queue order, each on the cluster as the API server holds it (no
// decision is acted on, so none sees another's victims gone); each
// printed after a line naming the pod. The exit code is the worst.
func decidePending(opts decideOptions, stdout, stderr io.Writer) (int, error) {
	ctx, cancel := opts.live.exchange()
	pods, err := opts.live.pendingPods(ctx, opts.loadOpts.MaxBytes)
	cancel()
	if err != nil {
		return 0, err
	}
	if len(pods) == 0 {
		fmt.Fprintf(stderr, "compare decide: %s holds no unschedulable pod\n", opts.live.name)
		return ExitOK, nil
	}
	code := ExitOK
	for _, p := range pods {
		o := opts
		live := *opts.live
		live.namespace, live.pod, live.pending = p.namespace, p.name, false
		o.live = &live
		header := stderr // JSON on stdout stays JSON: one document a pod
		if opts.text {
			header = stdout
		}
		fmt.Fprintf(header, "compare decide: pod %s/%s (priority %d)\n", p.namespace, p.name, p.priority)
		res, err := decide(o, stderr)
		if err != nil {
			return 0, err
		}
		code = max(code, renderDecide(res, o, stdout, stderr))
	}
	return code, nil
}
