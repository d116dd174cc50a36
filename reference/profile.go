package reference

// defaultProfile is the default profile's filter plugins this model has,
// in the order upstream's default profile runs them
// (pkg/scheduler/apis/config/v1 default_plugins.go). Adding a filter is
// one file with its plugin and one line here.
var defaultProfile = []filterPlugin{
	nodeUnschedulable{},
	nodeName{},
	taintToleration{},
	nodeAffinity{},
	nodePorts{},
	nodeResourcesFit{},
	podTopologySpread{},
	interPodAffinity{},
}
