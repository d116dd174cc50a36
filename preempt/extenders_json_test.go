package preempt

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
)

// TestExtendersJSONReadsBothWays: Config.Extenders was
// k8s.io/kubernetes's internal config.Extender (no JSON tags: "URLPrefix")
// and is kube-scheduler's config/v1 Extender ("urlPrefix"). encoding/json
// matches keys without regard to case, so a wire peer of either kind reads
// the other's requests field for field (the protocol stays
// preemptbench-wire/2).
func TestExtendersJSONReadsBothWays(t *testing.T) {
	old := []schedconfig.Extender{{
		URLPrefix: "http://127.0.0.1:1/x", FilterVerb: "filter", PreemptVerb: "preempt", PrioritizeVerb: "prioritize",
		Weight: 3, BindVerb: "bind", EnableHTTPS: true,
		TLSConfig: &schedconfig.ExtenderTLSConfig{Insecure: true, ServerName: "s", CertFile: "c", KeyFile: "k", CAFile: "ca",
			CertData: []byte("cd"), KeyData: []byte("kd"), CAData: []byte("cad")},
		HTTPTimeout: metav1.Duration{Duration: 7 * time.Second}, NodeCacheCapable: true,
		ManagedResources: []schedconfig.ExtenderManagedResource{{Name: "example.com/gpu", IgnoredByScheduler: true}},
		Ignorable:        true,
	}, {URLPrefix: "http://127.0.0.1:2"}}
	data, err := json.Marshal(struct{ Extenders []schedconfig.Extender }{old})
	if err != nil {
		t.Fatal(err)
	}
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	want := []configv1.Extender{{
		URLPrefix: "http://127.0.0.1:1/x", FilterVerb: "filter", PreemptVerb: "preempt", PrioritizeVerb: "prioritize",
		Weight: 3, BindVerb: "bind", EnableHTTPS: true,
		TLSConfig: &configv1.ExtenderTLSConfig{Insecure: true, ServerName: "s", CertFile: "c", KeyFile: "k", CAFile: "ca",
			CertData: []byte("cd"), KeyData: []byte("kd"), CAData: []byte("cad")},
		HTTPTimeout: metav1.Duration{Duration: 7 * time.Second}, NodeCacheCapable: true,
		ManagedResources: []configv1.ExtenderManagedResource{{Name: "example.com/gpu", IgnoredByScheduler: true}},
		Ignorable:        true,
	}, {URLPrefix: "http://127.0.0.1:2"}}
	if !reflect.DeepEqual(c.Extenders, want) {
		t.Errorf("the old JSON read as %+v, want %+v", c.Extenders, want)
	}
	data, err = json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back struct{ Extenders []schedconfig.Extender }
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Extenders, old) {
		t.Errorf("the new JSON read by the old type as %+v, want %+v", back.Extenders, old)
	}
}
