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
	namespace, pod      string // -pod
	pending             bool
	serverDryRun        bool // -apply=server-dry-run
}

// liveRequestTimeout bounds each request to the API server (a page of
// 500 objects, a dry-run call), as kubectl's --request-timeout would.
var liveRequestTimeout = 60 * time.Second

func parseLive(kubeconfig, kubeContext, pod string, pending bool, apply string, clusterFiles []string, podGroupFile string) (*liveOptions, error) {
	switch {
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
	l := &liveOptions{kubeconfig: kubeconfig, context: kubeContext, pending: pending, serverDryRun: apply == "server-dry-run"}
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
	if cfg.Timeout == 0 {
		// client-go waits for an answer without end: an API server that
		// takes the connection and never answers would hang decide.
		cfg.Timeout = liveRequestTimeout
	}
	if l.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, badf("-kubeconfig %s: %v", kubeconfig, err)
	}
	l.name = "the API server at " + cfg.Host
	return l, nil
}

// timedOut says why err is a timeout of a request (the client's Timeout,
// which client-go reports either as its http.Client's or as a context's
// deadline), or "".
func timedOut(err error) string {
	if !errors.Is(err, context.DeadlineExceeded) && !os.IsTimeout(err) && !strings.Contains(err.Error(), "Client.Timeout") {
		return ""
	}
	return fmt.Sprintf(" (no answer within %v, the bound on each request to the API server)", liveRequestTimeout)
}

// load reads the cluster and the preemptor -pod names from the API
// server, with the loader's rules and notes (loader.LoadLive).
func (l *liveOptions) load(opts loader.Options, stderr io.Writer) (*preempt.Cluster, *v1.Pod, error) {
	ctx := context.Background()
	note := func(n string) { fmt.Fprintf(stderr, "compare decide: note: %s\n", n) }
	opts.Notify = note
	cluster, notes, err := loader.LoadLive(ctx, l.client, l.name, opts)
	for _, n := range notes {
		note(n)
	}
	if err != nil {
		return nil, nil, badf("%v%s", err, timedOut(err))
	}
	pod, notes, err := loader.LoadLivePod(ctx, l.client, l.name, l.namespace, l.pod, opts)
	for _, n := range notes {
		note(n)
	}
	if err != nil {
		return nil, nil, badf("%v%s", err, timedOut(err))
	}
	if pod.Spec.NodeName != "" {
		return nil, nil, badf("pod %s/%s is bound to node %s: there is nothing to preempt for", l.namespace, l.pod, pod.Spec.NodeName)
	}
	return withoutPod(cluster, pod), pod, nil
}

// pendingPods lists the pods the API server holds unschedulable: not
// bound, not terminal, not being deleted, PodScheduled=False with reason
// Unschedulable (as the scheduler marks a pod after a failed cycle), in
// the scheduling queue's order: PrioritySort's higher priority first, then
// the earlier time the pod entered the queue, which the API does not show:
// its PodScheduled condition's last transition (then the creation time,
// namespace and name) stands for it.
func (l *liveOptions) pendingPods(ctx context.Context) ([]*v1.Pod, error) {
	var out []*v1.Pod
	opt := metav1.ListOptions{Limit: 500, FieldSelector: "spec.nodeName="}
	for {
		list, err := l.client.CoreV1().Pods("").List(ctx, opt)
		if err != nil {
			return nil, badf("%s: listing pods: %v%s", l.name, err, timedOut(err))
		}
		for i := range list.Items {
			p := &list.Items[i]
			if p.DeletionTimestamp != nil || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
				continue
			}
			for _, c := range p.Status.Conditions {
				if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable {
					out = append(out, p)
					break
				}
			}
		}
		if list.Continue == "" {
			break
		}
		opt.Continue = list.Continue
	}
	entered := func(p *v1.Pod) metav1.Time {
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled {
				return c.LastTransitionTime
			}
		}
		return p.CreationTimestamp
	}
	slices.SortStableFunc(out, func(a, b *v1.Pod) int {
		if pa, pb := corev1helpers.PodPriority(a), corev1helpers.PodPriority(b); pa != pb {
			return cmp.Compare(pb, pa)
		}
		return cmp.Or(entered(a).Time.Compare(entered(b).Time), a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// decidePending is decide -pending: a decision for every unschedulable
// pod in queue order, each on the cluster as the API server holds it (no
// decision is acted on, so none sees another's victims gone); each
// printed after a line naming the pod. The exit code is the worst.
func decidePending(opts decideOptions, stdout, stderr io.Writer) (int, error) {
	pods, err := opts.live.pendingPods(context.Background())
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
		live.namespace, live.pod, live.pending = p.Namespace, p.Name, false
		o.live = &live
		header := stderr // JSON on stdout stays JSON: one document a pod
		if opts.text {
			header = stdout
		}
		fmt.Fprintf(header, "compare decide: pod %s/%s (priority %d)\n", p.Namespace, p.Name, corev1helpers.PodPriority(p))
		res, err := decide(o, stderr)
		if err != nil {
			return 0, err
		}
		code = max(code, renderDecide(res, o, stdout, stderr))
	}
	return code, nil
}
