// Package testobj is the one set of test builders of preemptbench: pods,
// nodes, PodDisruptionBudgets, PodGroups and CompositePodGroups built by
// chained calls, in the style of upstream's wrappers
// (k8s.io/kubernetes/pkg/scheduler/testing: st.MakePod()...Obj()), which
// the suite cannot use: it must not import k8s.io/kubernetes. The tests
// of every package, and the suite's tables (internal/conformance), build
// their pods, nodes, budgets and groups here, so that a field is set one
// way everywhere; a table keeps at most one-expression shorthands of its
// own (the suite's pgPod, upstream's pod...). What builds objects from other
// input is not a test builder and stays apart: the suite's generator
// (Spec.Build, quantities from drawn integers), internal/synth's
// synthetic shapes, the loader's manifests.
//
//	p := testobj.MakePod().Namespace("default").Name("p").UID("uid-p").
//		Priority(10).Container("c").CPU("500m").Obj()
//
// The methods named as upstream's (Name, Namespace, UID, Label, Labels,
// Priority, Node, NominatedNodeName, SchedulerName, PreemptionPolicy,
// PodGroupName, Req, HostPort, ContainerPort, Containers, Conditions,
// Condition, Phase, Terminating, Overhead, Resources, Volumes,
// Tolerations, Toleration, NodeSelector, PodAffinity, PodAntiAffinity,
// PodAffinityExists, PodAntiAffinityExists, SpreadConstraint; the node's
// Name, UID, Label, Capacity, Taints, Unschedulable; the budget's and the
// groups') set what upstream's set, so that upstream's own tables port
// unchanged (TestSameAsUpstream checks it), with these differences:
// StartTime takes a time.Time; MakeNode starts empty (upstream's starts
// with Capacity(nil)); Container(name) names the container (upstream's
// takes an image); PodGroupName("") and ParentCompositePodGroup("") set
// nothing; the groups' UID takes a string.
//
// # Index
//
// Clock: Epoch, the tests' one clock (2026-01-01T00:00:00Z, synth.Base
// and conformance.Base): the project's tables take their start times and
// Request.Now from Epoch or a fixed offset of it (the tables ported from
// upstream keep upstream's times, time.Unix(0, n)).
//
// PauseImage: the image of the containers Req adds, upstream's.
//
// Pods, MakePod() *PodWrapper:
//   - metadata: Name, Namespace, UID, Label, Labels, DeletionTimestamp,
//     Terminating (the current time, as upstream's);
//   - spec: SchedulerName, Priority, PreemptionPolicy, Node, NodeSelector,
//     HostnameSelector, Tolerations, Toleration, PodGroupName, Overhead,
//     Resources (pod level), Volumes;
//   - containers: Container, InitContainer, Containers, Req, HostPort,
//     ContainerPort add one (the current container); Image, Request, CPU,
//     Memory, ContainerRequests, RestartPolicy, Ports set the current
//     container's;
//   - affinity and spread: PodAffinity, PodAntiAffinity (with a
//     PodAffinityKind), PodAffinityExists, PodAntiAffinityExists,
//     RequiredPodAffinityTerm, RequiredPodAntiAffinityTerm (a whole term:
//     namespace selectors), SpreadConstraint;
//   - status: StartTime, Bound (node and start time, or pending),
//     NominatedNodeName, Phase, Condition, Conditions,
//     PreemptedByScheduler (the DisruptionTarget condition), ActuatedCPU,
//     ActuatedInitCPU, AllocatedCPU, PodAllocatedCPU, PodActuatedCPU (in
//     place resizes).
//
// Nodes, MakeNode() *NodeWrapper: Name, UID, Label, Hostname (the
// kubernetes.io/hostname label), Capacity (capacity and allocatable, 32
// pods by default, as upstream's), Allocatable (allocatable only,
// exactly), Taints, Unschedulable.
//
// PodDisruptionBudgets, MakePDB() *PDBWrapper: Name, Namespace, UID,
// MinAvailable (a string, as upstream's), MinAvailableCount, MatchLabel,
// Selector, DisruptionsAllowed, DisruptedPod.
//
// PodGroups (scheduling.k8s.io/v1beta1, preempt.PodGroup), MakePodGroup()
// *PodGroupWrapper: Name, Namespace, UID, CreationTimestamp, Priority,
// PreemptionPolicy, BasicPolicy, MinCount (the gang policy), TopologyKey,
// DisruptionModeAll, DisruptionModeSingle, ParentCompositePodGroup.
//
// CompositePodGroups (scheduling.k8s.io/v1alpha3,
// preempt.CompositePodGroup), MakeCompositePodGroup()
// *CompositePodGroupWrapper: Name, Namespace, UID, CreationTimestamp,
// Priority, PreemptionPolicy, BasicPolicy, MinGroupCount, DisruptionModeAll,
// ParentCompositePodGroup.
//
// Label selectors, MakeLabelSelector() *LabelSelectorWrapper: Label, In,
// NotIn, Exists, NotExist.
//
// Each wrapper embeds its object, and Obj returns a pointer to it: the
// wrapper is not to be reused after Obj.
package testobj
