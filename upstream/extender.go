package upstream

import (
	"context"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	configconv "k8s.io/kubernetes/pkg/scheduler/apis/config/v1"

	extenderclient "github.com/preemptbench/preemptbench/internal/extender"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// extender is upstream's HTTPExtender, sent the cluster's pod objects as
// they were given: the world's copies carry the request's start time (and,
// for pod-level requests with overhead, upstream's in-place addition),
// which a real scheduler would not send.
type extender struct {
	fwk.Extender
	originals map[types.UID]*v1.Pod
	// Set per request: the request's pod, and who keeps the answers.
	preemptor *v1.Pod
	answered  func(map[string]*extenderv1.Victims)
	// skip hides the extender from callExtenders (the stand-in preemption
	// of preEnqueue is not sent to extenders).
	skip bool
}

func (e *extender) SupportsPreemption() bool { return !e.skip && e.Extender.SupportsPreemption() }

// newExtenders builds upstream's HTTPExtenders in kube-scheduler's order
// (buildExtenders: the ignorable ones last), from the configuration's
// extenders converted as kube-scheduler converts its file's.
func (ev *evaluator) newExtenders(cfgs []configv1.Extender) ([]*extender, error) {
	if len(cfgs) == 0 {
		return nil, nil
	}
	originals := make(map[types.UID]*v1.Pod, len(ev.pods))
	for _, p := range ev.pods {
		originals[p.UID] = p
	}
	var out []*extender
	for _, v := range extenderclient.Order(cfgs) {
		var cfg config.Extender
		if err := configconv.Convert_v1_Extender_To_config_Extender(v.DeepCopy(), &cfg, nil); err != nil {
			return nil, err
		}
		e, err := scheduler.NewHTTPExtender(&cfg)
		if err != nil {
			return nil, err
		}
		out = append(out, &extender{Extender: e, originals: originals})
	}
	return out, nil
}

func (e *extender) ProcessPreemption(pod *v1.Pod, victims map[string]*extenderv1.Victims, nodeInfos fwk.NodeInfoLister) (map[string]*extenderv1.Victims, error) {
	sent := make(map[string]*extenderv1.Victims, len(victims))
	for node, v := range victims {
		if v == nil {
			sent[node] = nil
			continue
		}
		c := &extenderv1.Victims{NumPDBViolations: v.NumPDBViolations}
		for _, p := range v.Pods {
			if o := e.originals[p.UID]; o != nil {
				p = o
			}
			c.Pods = append(c.Pods, p)
		}
		sent[node] = c
	}
	if e.preemptor != nil && e.preemptor.UID == pod.UID {
		pod = e.preemptor
	}
	answer, err := e.Extender.ProcessPreemption(pod, sent, nodeInfos)
	if err == nil && e.answered != nil {
		e.answered(answer) // callExtenders may then delete empty nodes from it, in place
	}
	return answer, err
}

// gate holds the pod API calls made through a client until it opens:
// under asynchronous preemption the executor's goroutine waits until the
// preemptor is nominated (the contract's order: nominate first).
type gate struct {
	once sync.Once
	ch   chan struct{}

	mu sync.Mutex
	// clearFailed: a patch clearing a nomination failed (the executor's
	// goroutine then ends by activating the preemptor).
	clearFailed bool
}

func (g *gate) failedClear() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.clearFailed
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

func (g *gate) wait(ctx context.Context) {
	select {
	case <-g.ch:
	case <-ctx.Done():
	}
}

// gatedClient is a clientset whose pod patches and deletions wait for g.
type gatedClient struct {
	kubernetes.Interface
	g *gate
}

func (c gatedClient) CoreV1() corev1client.CoreV1Interface {
	return gatedCore{CoreV1Interface: c.Interface.CoreV1(), g: c.g}
}

type gatedCore struct {
	corev1client.CoreV1Interface
	g *gate
}

func (c gatedCore) Pods(namespace string) corev1client.PodInterface {
	return gatedPods{PodInterface: c.CoreV1Interface.Pods(namespace), g: c.g}
}

type gatedPods struct {
	corev1client.PodInterface
	g *gate
}

func (p gatedPods) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*v1.Pod, error) {
	p.g.wait(ctx)
	pod, err := p.PodInterface.Patch(ctx, name, pt, data, opts, subresources...)
	if err != nil && strings.Contains(string(data), `"nominatedNodeName":null`) {
		p.g.mu.Lock()
		p.g.clearFailed = true
		p.g.mu.Unlock()
	}
	return pod, err
}

func (p gatedPods) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	p.g.wait(ctx)
	return p.PodInterface.Delete(ctx, name, opts)
}

// trimPrefix removes PostFilter's "preemption: " from a message.
func trimPrefix(msg string) string { return strings.TrimPrefix(msg, "preemption: ") }
