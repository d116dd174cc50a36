package extender

import (
	"fmt"
	"testing"

	configv1 "k8s.io/kube-scheduler/config/v1"
)

// The client cache is bounded: past cacheSize configurations the least
// recently used goes, and one in use is kept and reused.
func TestClientCacheIsBounded(t *testing.T) {
	cfg := func(i int) configv1.Extender {
		return configv1.Extender{URLPrefix: fmt.Sprintf("http://127.0.0.1:1/%d", i), PreemptVerb: "preempt"}
	}
	kept, err := extenderFor(cfg(-1))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 * cacheSize {
		if _, err := extenderFor(cfg(i)); err != nil {
			t.Fatal(err)
		}
		if i%8 == 0 { // used again: recently used
			if again, _ := extenderFor(cfg(-1)); again != kept {
				t.Fatalf("after %d configurations the client in use was rebuilt", i+1)
			}
		}
	}
	cache.Lock()
	n, order := len(cache.byKey), len(cache.order)
	cache.Unlock()
	if n != cacheSize || order != cacheSize {
		t.Fatalf("cache holds %d clients (%d in order), want %d", n, order, cacheSize)
	}
}
