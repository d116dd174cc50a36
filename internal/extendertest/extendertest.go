// Package extendertest serves scheduler extenders over loopback for tests
// and benchmarks: each behaviour (Behaviours) is a deterministic function of
// the preemption arguments it is sent, so that every implementation calling
// it sees the same answers. It is not part of the contract.
package extendertest

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// Behaviours names the extenders' behaviours, each a path of the loopback
// server (URL):
//
//   - keep: answers the victims it was sent;
//   - drop-nodes: drops the nodes whose name hashes even;
//   - trim: drops the last victim of every node with more than one;
//   - empty: answers the first node (by name) with no victims;
//   - fail: answers HTTP 500;
//   - garbage: answers malformed JSON;
//   - unknown-pod: claims a pod that is not on the first node;
//   - unknown-node: adds a node that does not exist;
//   - slow: answers after 2 seconds (configured with a 100ms timeout).
func Behaviours() []string {
	return []string{"keep", "drop-nodes", "trim", "empty", "fail", "garbage", "unknown-pod", "unknown-node", "slow"}
}

// Config is the KubeSchedulerConfiguration extender answering as
// behaviour, one of Behaviours: nodeCacheCapable (sent UIDs instead of
// pods) and ignorable as given, interested only in pods using one of
// managed when managed is not empty. Its timeout is 10s, 100ms for "slow".
func Config(behaviour string, nodeCache, ignorable bool, managed ...string) configv1.Extender {
	cfg := configv1.Extender{
		URLPrefix:        URL() + "/" + behaviour,
		PreemptVerb:      "preempt",
		NodeCacheCapable: nodeCache,
		Ignorable:        ignorable,
		HTTPTimeout:      metav1.Duration{Duration: 10 * time.Second},
	}
	if behaviour == "slow" {
		cfg.HTTPTimeout.Duration = 100 * time.Millisecond
	}
	for _, m := range managed {
		cfg.ManagedResources = append(cfg.ManagedResources, configv1.ExtenderManagedResource{Name: m})
	}
	return cfg
}

var extenderServer = sync.OnceValue(func() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(serveExtender))
})

// URL is the address of the loopback server behind every
// behaviour; it runs until the process ends.
func URL() string { return extenderServer().URL }

// serveExtender answers one preemption call as the behaviour named by
// the path's first element (Behaviours).
func serveExtender(w http.ResponseWriter, r *http.Request) {
	behaviour, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	var args extenderv1.ExtenderPreemptionArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch behaviour {
	case "fail":
		http.Error(w, "injected failure", http.StatusInternalServerError)
		return
	case "garbage":
		_, _ = w.Write([]byte(`{"nodeNameToMetaVictims": {"node-0": [`))
		return
	case "slow":
		time.Sleep(2 * time.Second)
	}
	answer := Answer(behaviour, &args)
	_ = json.NewEncoder(w).Encode(&extenderv1.ExtenderPreemptionResult{NodeNameToMetaVictims: answer})
}

// Answer is what the behaviour answers to args (for the
// behaviours that answer).
func Answer(behaviour string, args *extenderv1.ExtenderPreemptionArgs) map[string]*extenderv1.MetaVictims {
	sent := map[string]*extenderv1.MetaVictims{}
	for node, v := range args.NodeNameToVictims {
		mv := &extenderv1.MetaVictims{Pods: []*extenderv1.MetaPod{}, NumPDBViolations: v.NumPDBViolations}
		for _, p := range v.Pods {
			mv.Pods = append(mv.Pods, &extenderv1.MetaPod{UID: string(p.UID)})
		}
		sent[node] = mv
	}
	for node, mv := range args.NodeNameToMetaVictims {
		sent[node] = mv
	}
	nodes := make([]string, 0, len(sent))
	for node := range sent {
		nodes = append(nodes, node)
	}
	sort.Strings(nodes)
	switch behaviour {
	case "drop-nodes":
		for _, node := range nodes {
			h := fnv.New32a()
			_, _ = h.Write([]byte(node))
			if h.Sum32()%2 == 0 {
				delete(sent, node)
			}
		}
	case "trim":
		for _, mv := range sent {
			if len(mv.Pods) > 1 {
				mv.Pods = mv.Pods[:len(mv.Pods)-1]
			}
		}
	case "empty":
		if len(nodes) > 0 {
			sent[nodes[0]].Pods = []*extenderv1.MetaPod{}
		}
	case "unknown-pod":
		if len(nodes) > 0 {
			sent[nodes[0]].Pods = append(sent[nodes[0]].Pods, &extenderv1.MetaPod{UID: "no-such-pod"})
		}
	case "unknown-node":
		sent["no-such-node"] = &extenderv1.MetaVictims{Pods: []*extenderv1.MetaPod{{UID: "no-such-pod"}}}
	}
	return sent
}
