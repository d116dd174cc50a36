// Package extender is a client of kube-scheduler's HTTP extenders for the
// preempt verb, as upstream's HTTPExtender and Evaluator.callExtenders use
// them: what reference and optimized call (upstream calls its own). It is
// not part of the contract.
package extender

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/sets"
	restclient "k8s.io/client-go/rest"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

// DefaultTimeout is upstream's timeout of an extender call when
// the configuration sets none.
const DefaultTimeout = 5 * time.Second

// Order returns the extenders in the order kube-scheduler calls
// them (its buildExtenders): the configured order, with the ignorable ones
// moved to the tail.
func Order(exts []configv1.Extender) []configv1.Extender {
	out := make([]configv1.Extender, 0, len(exts))
	for _, e := range exts {
		if !e.Ignorable {
			out = append(out, e)
		}
	}
	for _, e := range exts {
		if e.Ignorable {
			out = append(out, e)
		}
	}
	return out
}

// NodePods returns the pods bound to a node (the scheduler's NodeInfo
// pods), and false when there is no such node.
type NodePods func(node string) ([]*v1.Pod, bool)

// extender is upstream's HTTPExtender, preempt verb only.
type extender struct {
	cfg     configv1.Extender
	client  *http.Client
	managed sets.Set[string]
}

// newExtender is upstream's NewHTTPExtender for the preempt verb: the
// default timeout, the TLS transport of makeTransport, the managed
// resources.
func newExtender(cfg configv1.Extender) (*extender, error) {
	if cfg.HTTPTimeout.Duration == 0 {
		cfg.HTTPTimeout.Duration = DefaultTimeout
	}
	var rc restclient.Config
	if cfg.TLSConfig != nil {
		rc.TLSClientConfig = restclient.TLSClientConfig{
			Insecure:   cfg.TLSConfig.Insecure,
			ServerName: cfg.TLSConfig.ServerName,
			CertFile:   cfg.TLSConfig.CertFile,
			KeyFile:    cfg.TLSConfig.KeyFile,
			CAFile:     cfg.TLSConfig.CAFile,
			CertData:   cfg.TLSConfig.CertData,
			KeyData:    cfg.TLSConfig.KeyData,
			CAData:     cfg.TLSConfig.CAData,
		}
	}
	if cfg.EnableHTTPS && len(rc.CAFile) == 0 && len(rc.CAData) == 0 {
		rc.Insecure = true
	}
	tlsConfig, err := restclient.TLSConfigFor(&rc)
	if err != nil {
		return nil, err
	}
	transport := utilnet.SetTransportDefaults(&http.Transport{TLSClientConfig: tlsConfig})
	e := &extender{
		cfg:     cfg,
		client:  &http.Client{Transport: transport, Timeout: cfg.HTTPTimeout.Duration},
		managed: sets.New[string](),
	}
	for _, r := range cfg.ManagedResources {
		e.managed.Insert(r.Name)
	}
	return e, nil
}

// cacheSize bounds the clients kept: a process that meets more
// configurations than that (a fuzzer, a long property run) closes the
// idle connections of the least recently used and builds it again if it
// comes back.
const cacheSize = 64

// cache keeps the clients by configuration, so that calls reuse their
// connections, as kube-scheduler's extenders (built once) do.
var cache = struct {
	sync.Mutex
	byKey map[string]*extender // JSON of configv1.Extender
	order []string             // least recently used first
}{byKey: map[string]*extender{}}

// extenderFor returns the cached client of cfg, building it on first use.
func extenderFor(cfg configv1.Extender) (*extender, error) {
	k, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	key := string(k)
	cache.Lock()
	defer cache.Unlock()
	if e, ok := cache.byKey[key]; ok {
		cache.order = append(slices.DeleteFunc(cache.order, func(s string) bool { return s == key }), key)
		return e, nil
	}
	e, err := newExtender(cfg)
	if err != nil {
		return nil, err
	}
	if len(cache.order) == cacheSize {
		oldest := cache.order[0]
		cache.byKey[oldest].client.CloseIdleConnections()
		delete(cache.byKey, oldest)
		cache.order = slices.Delete(cache.order, 0, 1)
	}
	cache.byKey[key] = e
	cache.order = append(cache.order, key)
	return e, nil
}

func (e *extender) supportsPreemption() bool { return len(e.cfg.PreemptVerb) > 0 }

// isInterested: no managed resources, or a container or init container
// requesting or limiting one of them.
func (e *extender) isInterested(pod *v1.Pod) bool {
	if e.managed.Len() == 0 {
		return true
	}
	for _, cs := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			for name := range cs[i].Resources.Requests {
				if e.managed.Has(string(name)) {
					return true
				}
			}
			for name := range cs[i].Resources.Limits {
				if e.managed.Has(string(name)) {
					return true
				}
			}
		}
	}
	return false
}

// processPreemption is HTTPExtender.ProcessPreemption: the victims as
// pods, or as UIDs for a node-cache-capable extender; the answer is
// always read from nodeNameToMetaVictims, each UID looked up among the
// node's pods.
func (e *extender) processPreemption(ctx context.Context, pod *v1.Pod, victims map[string]*extenderv1.Victims, nodes NodePods) (map[string]*extenderv1.Victims, error) {
	args := &extenderv1.ExtenderPreemptionArgs{Pod: pod}
	if e.cfg.NodeCacheCapable {
		meta := map[string]*extenderv1.MetaVictims{}
		for node, v := range victims {
			mv := &extenderv1.MetaVictims{Pods: []*extenderv1.MetaPod{}, NumPDBViolations: v.NumPDBViolations}
			for _, p := range v.Pods {
				mv.Pods = append(mv.Pods, &extenderv1.MetaPod{UID: string(p.UID)})
			}
			meta[node] = mv
		}
		args.NodeNameToMetaVictims = meta
	} else {
		args.NodeNameToVictims = victims
	}
	var result extenderv1.ExtenderPreemptionResult
	if err := e.send(ctx, e.cfg.PreemptVerb, args, &result); err != nil {
		return nil, err
	}
	out := map[string]*extenderv1.Victims{}
	// Upstream reads the answer in map order, so which node's error it
	// reports is random; the contract reads it in node-name order
	// (docs/divergences.md).
	for _, node := range slices.Sorted(maps.Keys(result.NodeNameToMetaVictims)) {
		mv := result.NodeNameToMetaVictims[node]
		pods, ok := nodes(node)
		if !ok {
			return nil, fmt.Errorf("nodeinfo not found for node name %q", node)
		}
		v := &extenderv1.Victims{Pods: []*v1.Pod{}}
		if mv == nil {
			// upstream reads mv.NumPDBViolations here and panics; an
			// answer "node": null is refused instead.
			return nil, fmt.Errorf("extender: %v answered null victims for node %q", e.cfg.URLPrefix, node)
		}
		v.NumPDBViolations = mv.NumPDBViolations
		for _, mp := range mv.Pods {
			p := podWithUID(pods, mp)
			if p == nil {
				return nil, fmt.Errorf("extender: %v claims to preempt pod (UID: %v) on node: %v, but the pod is not found on that node", e.cfg.URLPrefix, mp, node)
			}
			v.Pods = append(v.Pods, p)
		}
		out[node] = v
	}
	return out, nil
}

func podWithUID(pods []*v1.Pod, mp *extenderv1.MetaPod) *v1.Pod {
	if mp == nil {
		return nil
	}
	for _, p := range pods {
		if string(p.UID) == mp.UID {
			return p
		}
	}
	return nil
}

// send is HTTPExtender.send.
func (e *extender) send(ctx context.Context, action string, args, result any) error {
	out, err := json.Marshal(args)
	if err != nil {
		return err
	}
	url := strings.TrimRight(e.cfg.URLPrefix, "/") + "/" + action
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(out))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("failed %v with extender at URL %v, code %v", action, url, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(result)
}

// Call is upstream's Evaluator.callExtenders: every extender that
// supports preemption and is interested in pod gets the candidates'
// victims in turn (each the previous one's answer) and may drop nodes and
// victims; an error from an ignorable extender skips it, any other error
// is returned; a node answered without victims is dropped for an ignorable
// extender and is an error otherwise; an empty answer stops the calls.
//
// Upstream returns the surviving candidates in map order; the contract
// returns them in node-name order, victims in the order the last extender
// gave. With no extender, or no candidate, candidates is returned as is.
// exts are in configuration order (Order is applied here). A victim keeps
// the PodGroup its candidate gave it (the extenders' answers name pods
// only); a pod an extender adds has none. A victim not
// on its candidate's node (a pod group's member, GenericWorkload) is
// found with bound.
func Call(ctx context.Context, exts []configv1.Extender, pod *v1.Pod, candidates []preempt.Candidate, nodes NodePods, bound BoundPod) ([]preempt.Candidate, error) {
	if len(exts) == 0 || len(candidates) == 0 {
		return candidates, nil
	}
	victims := map[string]*extenderv1.Victims{}
	groupOf := map[types.NamespacedName]string{} // a victim's PodGroup, which the answer does not carry
	for _, c := range candidates {
		for _, vic := range c.Victims {
			if vic.PodGroup != "" {
				groupOf[types.NamespacedName{Namespace: vic.Namespace, Name: vic.Name}] = vic.PodGroup
			}
		}
		pods, _ := nodes(c.Node)
		v := &extenderv1.Victims{NumPDBViolations: int64(c.NumPDBViolations)}
		for _, vic := range c.Victims {
			if i := slices.IndexFunc(pods, func(p *v1.Pod) bool { return p.Namespace == vic.Namespace && p.Name == vic.Name }); i >= 0 {
				v.Pods = append(v.Pods, pods[i])
				continue
			}
			// Under GenericWorkload a unit's member on another node is
			// the candidate's victim too: upstream sends it with the
			// candidate's victims (and then finds no such UID among the
			// node's pods if the extender answers with it).
			p := bound(vic.Namespace, vic.Name)
			if p == nil {
				return nil, fmt.Errorf("victim %s is not a bound pod of the cluster (candidate node %q)", preempt.Key(vic.Namespace, vic.Name), c.Node)
			}
			v.Pods = append(v.Pods, p)
		}
		victims[c.Node] = v // the last candidate of a node wins, as CandidatesToVictimsMap
	}
	for _, cfg := range Order(exts) {
		e, err := extenderFor(cfg)
		if err != nil {
			return nil, err
		}
		if !e.supportsPreemption() || !e.isInterested(pod) {
			continue
		}
		answer, err := e.processPreemption(ctx, pod, victims, nodes)
		if err != nil {
			if cfg.Ignorable {
				continue
			}
			return nil, err
		}
		for _, node := range slices.Sorted(maps.Keys(answer)) { // upstream: map order
			if v := answer[node]; v == nil || len(v.Pods) == 0 {
				if cfg.Ignorable {
					delete(answer, node)
					continue
				}
				return nil, fmt.Errorf("expected at least one victim pod on node %q", node)
			}
		}
		victims = answer
		if len(victims) == 0 {
			break
		}
	}
	out := make([]preempt.Candidate, 0, len(victims))
	for node, v := range victims {
		c := preempt.Candidate{Node: node, NumPDBViolations: int(v.NumPDBViolations), Victims: make([]preempt.Victim, 0, len(v.Pods))}
		for _, p := range v.Pods {
			c.Victims = append(c.Victims, preempt.Victim{Namespace: p.Namespace, Name: p.Name, Priority: corev1helpers.PodPriority(p),
				PodGroup: groupOf[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}]})
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out, nil
}

// BoundPod returns the bound pod of that name, nil when there is none.
type BoundPod func(namespace, name string) *v1.Pod

// BoundPodOf indexes the bound pods of c by name.
func BoundPodOf(c *preempt.Cluster) BoundPod {
	pods := make(map[types.NamespacedName]*v1.Pod, len(c.Pods))
	for _, p := range c.Pods {
		if preempt.IsBound(p) {
			pods[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = p
		}
	}
	return func(namespace, name string) *v1.Pod {
		return pods[types.NamespacedName{Namespace: namespace, Name: name}]
	}
}

// NodePodsOf indexes the pods bound to each node of c.
func NodePodsOf(c *preempt.Cluster) NodePods {
	nodes := make(map[string][]*v1.Pod, len(c.Nodes))
	for _, n := range c.Nodes {
		nodes[n.Name] = nil
	}
	for _, p := range c.Pods {
		if preempt.IsBound(p) {
			nodes[p.Spec.NodeName] = append(nodes[p.Spec.NodeName], p)
		}
	}
	return func(node string) ([]*v1.Pod, bool) {
		pods, ok := nodes[node]
		return pods, ok
	}
}
