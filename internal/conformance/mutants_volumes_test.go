package conformance

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// volumeMutants are the reference deciding on a cluster with one thing
// of storage hidden from it, as a volume filter that forgets to read it
// would decide: each of the four volume filters has one (VolumeBinding
// two). The Volumes
// property must catch each.
var volumeMutants = []struct {
	name, filter string
	hide         func(c *preempt.Cluster, pod *v1.Pod)
}{
	{"volume-zone-labels-ignored", "VolumeZone", func(c *preempt.Cluster, _ *v1.Pod) {
		for _, pv := range c.PVs {
			delete(pv.Labels, v1.LabelTopologyZone)
			delete(pv.Labels, v1.LabelFailureDomainBetaZone)
		}
	}},
	{"readwriteoncepod-taken-as-readwriteonce", "VolumeRestrictions", func(c *preempt.Cluster, _ *v1.Pod) {
		for _, pvc := range c.PVCs {
			for i, m := range pvc.Spec.AccessModes {
				if m == v1.ReadWriteOncePod {
					pvc.Spec.AccessModes[i] = v1.ReadWriteOnce
				}
			}
		}
	}},
	{"volume-attachments-not-counted", "NodeVolumeLimits", func(c *preempt.Cluster, _ *v1.Pod) {
		c.VolumeAttachments = nil
	}},
	{"volume-node-affinity-ignored", "VolumeBinding", func(c *preempt.Cluster, _ *v1.Pod) {
		for _, pv := range c.PVs {
			pv.Spec.NodeAffinity = nil
		}
	}},
	// A capacity check that reads capacity and forgets maximumVolumeSize.
	{"csi-storage-capacity-maximum-volume-size-ignored", "VolumeBinding", func(c *preempt.Cluster, _ *v1.Pod) {
		for _, cp := range c.CSIStorageCapacities {
			cp.MaximumVolumeSize = nil
		}
	}},
}

// volumeMutant is the reference on the cluster hide leaves.
type volumeMutant struct {
	name string
	hide func(c *preempt.Cluster, pod *v1.Pod)
}

func (m volumeMutant) Name() string { return "mutant-" + m.name }

func (m volumeMutant) Unmodelled(c *preempt.Cluster, pod *v1.Pod) *preempt.Unmodelled {
	return reference.Impl{}.Unmodelled(c, pod)
}

func (m volumeMutant) UnmodelledGateUse(c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config) *preempt.Unmodelled {
	return reference.Impl{}.UnmodelledGateUse(c, pod, cfg)
}

func (m volumeMutant) NewEvaluator(c *preempt.Cluster) (preempt.Evaluator, error) {
	hidden := c.DeepCopy()
	m.hide(hidden, nil)
	return reference.Impl{}.NewEvaluator(hidden)
}
