package reference

// defaultProfile is the default profile's filter plugins this model has,
// in the order upstream's default profile runs them
// (pkg/scheduler/apis/config/v1 default_plugins.go). Adding a filter is
// one file with its plugin and one line here. From v1.37 NodeName (which
// gained a PreFilter) runs before NodeUnschedulable.
var defaultProfile = []filterPlugin{
	nodeName{},
	nodeUnschedulable{},
	taintToleration{},
	nodeAffinity{},
	nodePorts{},
	nodeResourcesFit{},
	podTopologySpread{},
	interPodAffinity{},
}

// profileV136 is v1.36.3's order: NodeUnschedulable before NodeName.
var profileV136 = append([]filterPlugin{nodeUnschedulable{}, nodeName{}}, defaultProfile[2:]...)

// profile is the default profile of the release ev reproduces
// (NodeNameBeforeNodeUnschedulable).
func (ev *evaluator) profile() []filterPlugin {
	if ev.b.NodeNameBeforeNodeUnschedulable {
		return defaultProfile
	}
	return profileV136
}
