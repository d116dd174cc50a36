package preempt_test

import (
	"strings"
	"testing"

	"github.com/preemptbench/preemptbench/preempt"
)

// TestParseFeatureGates: kube-scheduler's parsing and its messages.
func TestParseFeatureGates(t *testing.T) {
	for _, tt := range []struct {
		value   string
		want    map[string]bool
		wantErr string
	}{
		{value: "", want: nil},
		{value: "GenericWorkload=true", want: map[string]bool{"GenericWorkload": true}},
		{value: " GenericWorkload = True ,SchedulerAsyncPreemption=false", want: map[string]bool{"GenericWorkload": true, "SchedulerAsyncPreemption": false}},
		{value: "NoSuchGate=true", wantErr: "unrecognized feature gate: NoSuchGate"},
		{value: "GenericWorkload=yes", wantErr: `invalid value of GenericWorkload=yes, err: strconv.ParseBool: parsing "yes": invalid syntax`},
		{value: "GenericWorkload", wantErr: "missing bool value for GenericWorkload"},
		{value: "InPlacePodVerticalScaling=false", wantErr: "cannot set feature gate InPlacePodVerticalScaling to false, feature is locked to true"},
		{value: "PodLevelResources=false", wantErr: "is enabled, but depends on features that are disabled: [PodLevelResources]"},
	} {
		got, err := preempt.ParseFeatureGates(tt.value)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseFeatureGates(%q) = %v, %v; want an error with %q", tt.value, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || preempt.FormatFeatureGates(got) != preempt.FormatFeatureGates(tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("ParseFeatureGates(%q) = %v, %v; want %v", tt.value, got, err, tt.want)
		}
	}
}

// TestGateGaps: a gate at its default is no change; a gate away from it
// that is not modelled is refused by name and value.
func TestGateGaps(t *testing.T) {
	cfg := preempt.DefaultConfig()
	cfg.FeatureGates = map[string]bool{"GenericWorkload": false, "PodLevelResources": true, "SchedulerAsyncPreemption": true}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := preempt.ChangedGates(cfg.FeatureGates); len(got) != 0 {
		t.Errorf("ChangedGates of defaults = %v, want none", got)
	}
	if u := preempt.GateGaps(cfg, nil); u != nil {
		t.Errorf("GateGaps of defaults = %v, want nil", u)
	}
	cfg.FeatureGates = map[string]bool{"GenericWorkload": true}
	u := preempt.GateGaps(cfg, nil)
	if u == nil || u.Error() != "feature gate GenericWorkload is not modelled: the configuration sets GenericWorkload=true ("+preempt.CurrentRelease+"'s default is false)" {
		t.Errorf("GateGaps = %v", u)
	}
	if u := preempt.GateGaps(cfg, []string{"GenericWorkload"}); u != nil {
		t.Errorf("GateGaps with GenericWorkload modelled = %v, want nil", u)
	}
	cfg.FeatureGates = map[string]bool{"SchedulerAsyncPreemption": false}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "contradicts") {
		t.Errorf("SchedulerAsyncPreemption=false with Synchronous=false: %v, want a contradiction", err)
	}
	cfg.Synchronous = true
	if err := cfg.Validate(); err != nil {
		t.Errorf("SchedulerAsyncPreemption=false with Synchronous: %v", err)
	}
	cfg.FeatureGates = map[string]bool{"NoSuchGate": true}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "unrecognized feature gate: NoSuchGate") {
		t.Errorf("Validate with an unknown gate: %v", err)
	}
}
