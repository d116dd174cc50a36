package schedplugin

import (
	"sort"
	"strings"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
)

// ModelledFilters are the filter plugins whose verdicts the
// implementations reproduce in their dry run: v1.37.2's default
// profile's. NodeName, NodeUnschedulable, TaintToleration,
// NodeAffinity, NodePorts, NodeResourcesFit, PodTopologySpread and
// InterPodAffinity are modelled; the volume filters and DynamicResources
// are modelled too (the plugin's follower holds the volume objects), and
// a preemptor DynamicResources looks at falls back per cycle (it does not
// follow the scheduler's DRA manager); NodeDeclaredFeatures fails a node
// only UnschedulableAndUnresolvable, from the node's declared features
// and the preemptor's spec alone, so removing victims never changes its
// verdict and the filter codes the cycle hands over carry it. A profile enabling any other
// filter falls back on every cycle (ReasonFilterPlugin): the
// implementation's dry run would not run it.
//
// The filters' args are not read (the scheduler does not hand a
// plugin's args to another plugin): NodeResourcesFit's ignoredResources
// and ignoredResourceGroups, which change its filter, must be left at
// their defaults.
var ModelledFilters = []string{
	names.NodeName, names.NodeUnschedulable, names.TaintToleration, names.NodeAffinity,
	names.NodePorts, names.NodeResourcesFit, names.PodTopologySpread, names.InterPodAffinity,
	names.VolumeRestrictions, names.NodeVolumeLimits, names.VolumeBinding, names.VolumeZone,
	names.DynamicResources, names.NodeDeclaredFeatures,
}

// pluginLister is the framework's own listing of its plugins
// (frameworkImpl.ListPlugins), not part of fwk.Handle.
type pluginLister interface {
	ListPlugins() *config.Plugins
}

// profileRefusal is ReasonFilterPlugin when the profile enables a filter
// not in ModelledFilters (read on the first cycle: the framework lists
// its plugins once built).
func profileRefusal(fh fwk.Handle) (Reason, string) {
	l, ok := fh.(pluginLister)
	if !ok {
		return ReasonFilterPlugin, "the framework does not list its plugins"
	}
	plugins := l.ListPlugins()
	if plugins == nil {
		return "", ""
	}
	modelled := map[string]bool{}
	for _, n := range ModelledFilters {
		modelled[n] = true
	}
	var extra []string
	for _, p := range plugins.Filter.Enabled {
		if !modelled[p.Name] {
			extra = append(extra, p.Name)
		}
	}
	if len(extra) == 0 {
		return "", ""
	}
	sort.Strings(extra)
	return ReasonFilterPlugin, "the profile enables filter plugins the implementations do not model: " + strings.Join(extra, ", ")
}
