package podinfo

import v1 "k8s.io/api/core/v1"

// TerminatingByPreemption: being deleted, and the first DisruptionTarget
// condition says the scheduler's preemption did it.
func TerminatingByPreemption(p *v1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.DisruptionTarget {
			return c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonPreemptionByScheduler
		}
	}
	return false
}

// HostPort is one entry of upstream's HostPortInfo: an empty IP is
// 0.0.0.0 and an empty protocol TCP.
type HostPort struct {
	IP       string
	Protocol string
	Port     int32
}

// AppendHostPorts appends p's host ports, as upstream's
// schedutil.GetHostPorts: those of restartable init containers (sidecars)
// and of regular containers.
func AppendHostPorts(out []HostPort, p *v1.Pod) []HostPort {
	add := func(cp v1.ContainerPort) {
		hp := HostPort{IP: cp.HostIP, Protocol: string(cp.Protocol), Port: cp.HostPort}
		if hp.IP == "" {
			hp.IP = "0.0.0.0"
		}
		if hp.Protocol == "" {
			hp.Protocol = string(v1.ProtocolTCP)
		}
		out = append(out, hp)
	}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways {
			continue
		}
		for _, cp := range c.Ports {
			if cp.HostPort > 0 {
				add(cp)
			}
		}
	}
	for _, c := range p.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.HostPort > 0 {
				add(cp)
			}
		}
	}
	return out
}

// Conflicts is upstream's HostPortInfo.CheckConflict of want against used.
func (want HostPort) Conflicts(used HostPort) bool {
	if used.Protocol != want.Protocol || used.Port != want.Port {
		return false
	}
	return want.IP == "0.0.0.0" || used.IP == "0.0.0.0" || used.IP == want.IP
}
