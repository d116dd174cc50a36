package preempt

import (
	"testing"

	configv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/randfill"

	"github.com/preemptbench/preemptbench/internal/schedulerconfig"

	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedconfigv1 "k8s.io/kubernetes/pkg/scheduler/apis/config/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
)

// errString is err's message, "" for none.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestValidationIsUpstreams: the ported validations answer as
// k8s.io/kubernetes's: ValidateExtenders as ValidateKubeSchedulerConfiguration
// of the default configuration with the extenders (converted as
// kube-scheduler converts its file's), Config.Validate's DefaultPreemptionArgs
// check as ValidateDefaultPreemptionArgs.
func TestValidationIsUpstreams(t *testing.T) {
	upstreamExtenders := func(exts []configv1.Extender) error {
		cfg, err := schedulerconfig.Default()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Extenders = make([]schedconfig.Extender, len(exts))
		for i := range exts {
			if err := schedconfigv1.Convert_v1_Extender_To_config_Extender(exts[i].DeepCopy(), &cfg.Extenders[i], nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
			return err
		}
		return nil
	}
	names := []string{"example.com/gpu", "example.com/fpga", "cpu", "kubernetes.io/x", "requests.example.com/x", "Bad Name/x", "example.com/", ""}
	f := randfill.NewWithSeed(3).NilChance(0.3).NumElements(0, 3)
	invalid := 0
	for i := range 3000 {
		var exts []configv1.Extender
		f.Fill(&exts)
		for j := range exts {
			e := &exts[j]
			switch i % 3 { // names and verbs that may or may not be valid, not only random strings
			case 0:
				e.PrioritizeVerb, e.BindVerb = "", ""
			case 1:
				e.Weight = int64(i%3) - 1
			}
			for k := range e.ManagedResources {
				if (i+k)%2 == 0 {
					e.ManagedResources[k].Name = names[(i+j+k)%len(names)]
				}
			}
		}
		got, want := errString(ValidateExtenders(exts)), errString(upstreamExtenders(exts))
		if got != want {
			t.Fatalf("extenders %+v:\nValidateExtenders: %s\nupstream's:        %s", exts, got, want)
		}
		if want != "" {
			invalid++
		}
	}
	if invalid == 0 || invalid == 3000 {
		t.Errorf("%d of 3000 extender lists invalid: the lists drawn do not tell", invalid)
	}
	for _, pct := range []int32{-1, 0, 1, 10, 100, 101} {
		for _, abs := range []int32{-1, 0, 1, 100} {
			got := errString(validateDefaultPreemptionArgs(pct, abs))
			want := errString(validation.ValidateDefaultPreemptionArgs(nil, &schedconfig.DefaultPreemptionArgs{MinCandidateNodesPercentage: pct, MinCandidateNodesAbsolute: abs}))
			if got != want {
				t.Errorf("%d%%, %d: %q, upstream's %q", pct, abs, got, want)
			}
			cfg := Config{MinCandidateNodesPercentage: pct, MinCandidateNodesAbsolute: abs}
			if got := errString(cfg.Validate()); got != want {
				t.Errorf("Config%+v.Validate() = %q, upstream's %q", cfg, got, want)
			}
		}
	}
}
