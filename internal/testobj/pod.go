package testobj

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PauseImage is the image of the containers Req, HostPort and
// ContainerPort add: the one upstream's wrappers take from
// k8s.io/kubernetes/test/utils/image (GetPauseImageName at v1.37.2, Req's),
// and "pause" for HostPort and ContainerPort, as upstream's.
const PauseImage = "registry.k8s.io/pause:3.10.2"

// PodWrapper wraps a Pod; its methods set a field and return the wrapper,
// Obj returns the pod.
//
// The container methods (Image, CPU, Memory, Request, RestartPolicy,
// Ports) act on the current container: the one the last of Container,
// InitContainer, Req, HostPort, ContainerPort or Containers added. They
// panic when there is none.
type PodWrapper struct {
	v1.Pod
	cur     int // index of the current container, -1 for none
	curInit bool
}

// MakePod returns a wrapper of an empty pod: no namespace, no containers.
func MakePod() *PodWrapper {
	return &PodWrapper{cur: -1}
}

// Obj returns the pod.
func (p *PodWrapper) Obj() *v1.Pod {
	return &p.Pod
}

// Name sets metadata.name.
func (p *PodWrapper) Name(s string) *PodWrapper {
	p.SetName(s)
	return p
}

// Namespace sets metadata.namespace.
func (p *PodWrapper) Namespace(s string) *PodWrapper {
	p.SetNamespace(s)
	return p
}

// UID sets metadata.uid.
func (p *PodWrapper) UID(s string) *PodWrapper {
	p.SetUID(types.UID(s))
	return p
}

// Label sets the label k to v.
func (p *PodWrapper) Label(k, v string) *PodWrapper {
	if p.ObjectMeta.Labels == nil {
		p.ObjectMeta.Labels = make(map[string]string)
	}
	p.ObjectMeta.Labels[k] = v
	return p
}

// Labels sets every label of labels (nil or empty: none, and the pod's
// labels stay nil if they were).
func (p *PodWrapper) Labels(labels map[string]string) *PodWrapper {
	for k, v := range labels {
		p.Label(k, v)
	}
	return p
}

// DeletionTimestamp sets metadata.deletionTimestamp to t: the pod is being
// deleted.
func (p *PodWrapper) DeletionTimestamp(t time.Time) *PodWrapper {
	mt := metav1.NewTime(t)
	p.ObjectMeta.DeletionTimestamp = &mt
	return p
}

// Terminating sets metadata.deletionTimestamp to the current time, as
// upstream's PodWrapper.Terminating does (the one builder of this package
// that reads the clock; DeletionTimestamp sets a fixed one).
func (p *PodWrapper) Terminating() *PodWrapper {
	now := metav1.Now()
	p.ObjectMeta.DeletionTimestamp = &now
	return p
}

// SchedulerName sets spec.schedulerName.
func (p *PodWrapper) SchedulerName(s string) *PodWrapper {
	p.Spec.SchedulerName = s
	return p
}

// Priority sets spec.priority.
func (p *PodWrapper) Priority(val int32) *PodWrapper {
	p.Spec.Priority = &val
	return p
}

// PreemptionPolicy sets spec.preemptionPolicy.
func (p *PodWrapper) PreemptionPolicy(policy v1.PreemptionPolicy) *PodWrapper {
	p.Spec.PreemptionPolicy = &policy
	return p
}

// Node sets spec.nodeName: the pod is bound to node s.
func (p *PodWrapper) Node(s string) *PodWrapper {
	p.Spec.NodeName = s
	return p
}

// Bound binds the pod to node, started at start; with node "" the pod
// stays pending: no node name and no start time.
func (p *PodWrapper) Bound(node string, start time.Time) *PodWrapper {
	if node == "" {
		return p
	}
	return p.Node(node).StartTime(start)
}

// NodeSelector sets spec.nodeSelector.
func (p *PodWrapper) NodeSelector(m map[string]string) *PodWrapper {
	p.Spec.NodeSelector = m
	return p
}

// HostnameSelector sets spec.nodeSelector to kubernetes.io/hostname=node:
// node is the one node the pod can go to.
func (p *PodWrapper) HostnameSelector(node string) *PodWrapper {
	return p.NodeSelector(map[string]string{v1.LabelHostname: node})
}

// Tolerations sets spec.tolerations.
func (p *PodWrapper) Tolerations(tolerations []v1.Toleration) *PodWrapper {
	p.Spec.Tolerations = tolerations
	return p
}

// Toleration adds a toleration of key with the operator Exists.
func (p *PodWrapper) Toleration(key string) *PodWrapper {
	p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: key, Operator: v1.TolerationOpExists})
	return p
}

// PodGroupName puts the pod in the PodGroup name of its namespace
// (spec.schedulingGroup.podGroupName); "" leaves it in none (unlike
// upstream's wrapper, which would set an empty name).
func (p *PodWrapper) PodGroupName(name string) *PodWrapper {
	if name == "" {
		return p
	}
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
	return p
}

// Overhead sets spec.overhead.
func (p *PodWrapper) Overhead(rl v1.ResourceList) *PodWrapper {
	p.Spec.Overhead = rl
	return p
}

// Resources sets the pod-level spec.resources.
func (p *PodWrapper) Resources(resources v1.ResourceRequirements) *PodWrapper {
	p.Spec.Resources = &resources
	return p
}

// Volumes sets spec.volumes.
func (p *PodWrapper) Volumes(volumes []v1.Volume) *PodWrapper {
	p.Spec.Volumes = volumes
	return p
}

// Containers sets spec.containers; the last becomes the current
// container.
func (p *PodWrapper) Containers(containers []v1.Container) *PodWrapper {
	p.Spec.Containers = containers
	p.cur, p.curInit = len(containers)-1, false
	return p
}

// Container adds a container named name, with nothing else set, and makes
// it the current one. (Upstream's Container takes an image and names the
// container con<i>.)
func (p *PodWrapper) Container(name string) *PodWrapper {
	return p.addContainer(v1.Container{Name: name}, false)
}

// InitContainer adds an init container named name and makes it the
// current one; RestartPolicy(v1.ContainerRestartPolicyAlways) makes it a
// sidecar.
func (p *PodWrapper) InitContainer(name string) *PodWrapper {
	return p.addContainer(v1.Container{Name: name}, true)
}

func (p *PodWrapper) addContainer(c v1.Container, init bool) *PodWrapper {
	if init {
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
		p.cur, p.curInit = len(p.Spec.InitContainers)-1, true
		return p
	}
	p.Spec.Containers = append(p.Spec.Containers, c)
	p.cur, p.curInit = len(p.Spec.Containers)-1, false
	return p
}

func (p *PodWrapper) container() *v1.Container {
	list := p.Spec.Containers
	if p.curInit {
		list = p.Spec.InitContainers
	}
	if p.cur < 0 || p.cur >= len(list) {
		panic(fmt.Sprintf("testobj: pod %s/%s has no current container (add one with Container first)", p.ObjectMeta.Namespace, p.ObjectMeta.Name))
	}
	return &list[p.cur]
}

// Image sets the current container's image.
func (p *PodWrapper) Image(image string) *PodWrapper {
	p.container().Image = image
	return p
}

// Request sets the current container's request of resource name to q.
func (p *PodWrapper) Request(name v1.ResourceName, q string) *PodWrapper {
	c := p.container()
	if c.Resources.Requests == nil {
		c.Resources.Requests = v1.ResourceList{}
	}
	c.Resources.Requests[name] = resource.MustParse(q)
	return p
}

// ContainerRequests sets the current container's requests to rl, whole
// (nil: none).
func (p *PodWrapper) ContainerRequests(rl v1.ResourceList) *PodWrapper {
	p.container().Resources.Requests = rl
	return p
}

// CPU sets the current container's cpu request to q.
func (p *PodWrapper) CPU(q string) *PodWrapper {
	return p.Request(v1.ResourceCPU, q)
}

// Memory sets the current container's memory request to q.
func (p *PodWrapper) Memory(q string) *PodWrapper {
	return p.Request(v1.ResourceMemory, q)
}

// RestartPolicy sets the current container's restartPolicy (Always on an
// init container: a sidecar).
func (p *PodWrapper) RestartPolicy(policy v1.ContainerRestartPolicy) *PodWrapper {
	p.container().RestartPolicy = &policy
	return p
}

// Ports adds ports to the current container's.
func (p *PodWrapper) Ports(ports ...v1.ContainerPort) *PodWrapper {
	c := p.container()
	c.Ports = append(c.Ports, ports...)
	return p
}

// Req adds a container con<i> (i: the number of containers before it) of
// image PauseImage requesting reqMap, as upstream's wrapper; none when
// reqMap is empty.
func (p *PodWrapper) Req(reqMap map[v1.ResourceName]string) *PodWrapper {
	if len(reqMap) == 0 {
		return p
	}
	res := v1.ResourceList{}
	for k, v := range reqMap {
		res[k] = resource.MustParse(v)
	}
	name := fmt.Sprintf("con%d", len(p.Spec.Containers))
	return p.addContainer(v1.Container{Name: name, Image: PauseImage, Resources: v1.ResourceRequirements{Requests: res}}, false)
}

// HostPort adds a container "container" of image "pause" with the host
// port port, as upstream's wrapper.
func (p *PodWrapper) HostPort(port int32) *PodWrapper {
	return p.addContainer(v1.Container{Name: "container", Image: "pause", Ports: []v1.ContainerPort{{HostPort: port}}}, false)
}

// ContainerPort adds a container "container" of image "pause" with ports,
// as upstream's wrapper.
func (p *PodWrapper) ContainerPort(ports []v1.ContainerPort) *PodWrapper {
	return p.addContainer(v1.Container{Name: "container", Image: "pause", Ports: ports}, false)
}

// StartTime sets status.startTime.
func (p *PodWrapper) StartTime(t time.Time) *PodWrapper {
	mt := metav1.NewTime(t)
	p.Status.StartTime = &mt
	return p
}

// NominatedNodeName sets status.nominatedNodeName.
func (p *PodWrapper) NominatedNodeName(n string) *PodWrapper {
	p.Status.NominatedNodeName = n
	return p
}

// Phase sets status.phase.
func (p *PodWrapper) Phase(phase v1.PodPhase) *PodWrapper {
	p.Status.Phase = phase
	return p
}

// Condition adds the condition of type t, status s and reason r to
// status.conditions.
func (p *PodWrapper) Condition(t v1.PodConditionType, s v1.ConditionStatus, r string) *PodWrapper {
	p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: t, Status: s, Reason: r})
	return p
}

// Conditions adds conditions to status.conditions.
func (p *PodWrapper) Conditions(conditions []v1.PodCondition) *PodWrapper {
	p.Status.Conditions = append(p.Status.Conditions, conditions...)
	return p
}

// PreemptedByScheduler marks the pod as upstream's preemption does before
// deleting it: the condition DisruptionTarget, status True, reason
// PreemptionByScheduler (add DeletionTimestamp for a pod it is deleting).
func (p *PodWrapper) PreemptedByScheduler() *PodWrapper {
	return p.Condition(v1.DisruptionTarget, v1.ConditionTrue, v1.PodReasonPreemptionByScheduler)
}

// containerStatus is the status of the container named name (init: among
// status.initContainerStatuses), added when there is none.
func (p *PodWrapper) containerStatus(name string, init bool) *v1.ContainerStatus {
	list := &p.Status.ContainerStatuses
	if init {
		list = &p.Status.InitContainerStatuses
	}
	for i := range *list {
		if (*list)[i].Name == name {
			return &(*list)[i]
		}
	}
	*list = append(*list, v1.ContainerStatus{Name: name})
	return &(*list)[len(*list)-1]
}

// ActuatedCPU sets the cpu request the runtime reports for the container
// named container (status.containerStatuses[].resources: only that
// request), as after an in-place resize.
func (p *PodWrapper) ActuatedCPU(container, q string) *PodWrapper {
	p.containerStatus(container, false).Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(q)}}
	return p
}

// ActuatedInitCPU is ActuatedCPU for an init container
// (status.initContainerStatuses).
func (p *PodWrapper) ActuatedInitCPU(container, q string) *PodWrapper {
	p.containerStatus(container, true).Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(q)}}
	return p
}

// AllocatedCPU sets the cpu the kubelet allocated to the container named
// container (status.containerStatuses[].allocatedResources: only cpu).
func (p *PodWrapper) AllocatedCPU(container, q string) *PodWrapper {
	p.containerStatus(container, false).AllocatedResources = v1.ResourceList{v1.ResourceCPU: resource.MustParse(q)}
	return p
}

// PodAllocatedCPU sets the pod-level allocated cpu
// (status.allocatedResources: only cpu).
func (p *PodWrapper) PodAllocatedCPU(q string) *PodWrapper {
	p.Status.AllocatedResources = v1.ResourceList{v1.ResourceCPU: resource.MustParse(q)}
	return p
}

// PodActuatedCPU sets the pod-level actuated cpu request
// (status.resources: only that request).
func (p *PodWrapper) PodActuatedCPU(q string) *PodWrapper {
	p.Status.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(q)}}
	return p
}
