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
	volumeRestrictions{},
	nodeVolumeLimits{},
	volumeBinding{},
	volumeZone{},
	podTopologySpread{},
	interPodAffinity{},
	// Inserted before DefaultPreemption while DynamicResourceAllocation
	// is on (GA and locked on from v1.35): after InterPodAffinity.
	dynamicResources{},
	// Appended to the profile while its gate is on (default from v1.36;
	// the plugin skips every pod without preempt.SwitchNodeDeclaredFeatures).
	nodeDeclaredFeatures{},
}
