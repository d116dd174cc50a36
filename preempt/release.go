package preempt

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// The releases of upstream the contract reproduces, oldest first, and the
// behaviour changes between them: each change is a named Switch, on from
// the release that made it. An implementation reads Config.Behaviour()
// and answers as that release's code does; upstream's own code of each
// release is the proof (the properties, and the cross-release check that
// turns switches off one at a time until the reference reproduces both
// releases' answers).
//
// This file is the one table of what differs between releases: the
// releases (ReleaseTable: version, build tags, the gates an earlier one
// lacks), the behaviour switches with the upstream change behind each
// (Switches), and the first release of the pod-group API
// (PodGroupAPISince). Everything else derives from it: upstream.Version,
// the releases package's registry (internal/registry), the command's
// usage and messages. docs/releases.md, "Adding a release", lists the
// files a new release touches.

// CurrentRelease is the release Config's zero value means: the one the
// in-process upstream adapter runs (upstream.Version), and the one the
// main module's go.mod pins. The only Go file that writes it is this one
// (TestCurrentReleaseWrittenOnce checks the others, and the command's
// help, against it).
const CurrentRelease = "v1.37.2"

// A ReleaseInfo is one row of ReleaseTable: what the project knows of an
// upstream release.
type ReleaseInfo struct {
	// Version is the k8s.io/kubernetes release, "v1.36.3".
	Version string
	// Tags are the build tags an earlier release is built with (in its
	// module, releases/Version, which pins k8s.io/kubernetes at Version;
	// its go.mod says them too): they select the files of package upstream
	// (seams_*.go) and of this package (podgroup_types_*.go) that give that
	// release's side of an API that changed. They are cumulative: a
	// release has the tag of its minor and of every later minor before the
	// current one (a v1.35 would be preemptbench_v1_35,preemptbench_v1_36),
	// so that a file tagged preemptbench_v1_36 is for v1.36 and before,
	// and one tagged !preemptbench_v1_36 for the current release only.
	// None for CurrentRelease, built in process.
	Tags []string
	// UnknownGates are the feature gates of CurrentRelease's kube-scheduler
	// that this release does not have: a configuration setting one is
	// refused (its code would panic on an unregistered gate).
	// releases.TestUnknownGates checks the list against both releases'
	// pkg/features.
	UnknownGates []string
}

// ReleaseTable lists the releases, oldest first; CurrentRelease is last.
var ReleaseTable = []ReleaseInfo{
	{Version: "v1.35.4", Tags: []string{"preemptbench_v1_35", "preemptbench_v1_36"}, UnknownGates: []string{
		"AllowServiceExternalIPs", "AtomicWriteVolumeUserFields", "CRIListStreaming",
		"ChangeContainerStatusOnKubeletRestart", "CompositePodGroup", "DRADerivedAttributes",
		"DRADeviceCompatibilityGroups", "DRAFractionalCapacityRange", "DRAListTypeAttributes",
		"DRANodeAllocatableResources", "DRAOptionalNodeOperations", "DRAPartitionableDevicesType",
		"DRAResourceClaimGranularStatusAuthorization", "DRAResourcePoolStatus", "DRAWorkloadResourceClaims",
		"DefaultPodSysctls", "EmptyDirVolumeMode", "EvictionRequestAPI", "ExtendWebSocketsToKubelet",
		"GRPCContainerProbeTLS", "H2CContainerProbe", "HPAGeneration", "HPAOptimizedSelectorStore",
		"HugepageAwareEviction", "ImageVolumeWithDigest", "InPlacePodVerticalScalingInitContainers",
		"InPlacePodVerticalScalingMemoryBackedVolumes", "InPlacePodVerticalScalingSchedulerPreemption",
		"InterPodAffinityHostnameFastPath", "KubeProxyIPVS", "KubeProxyNFTablesLocalhostNodePorts",
		"KubeletAllocatedPodsEndpoint", "NFTablesNetlink", "NodeControllerLeaseCircuitBreaker", "NodeLifecycleConditions",
		"PLEGOnDemandRelist", "PersistentVolumeClaimUnusedSinceTime", "PodGroupPreemptionPolicy",
		"PodLevelResourceManagers", "PodLevelResourcesFixDefaulting", "PodLevelResourcesFixKubeletQOSClass", "PodsAPI",
		"ResourceHealthStatusMessage", "SchedulerPreQueueingHints", "ServiceCIDRStatusFieldWiping",
		"StaleControllerConsistencyDaemonSet", "StaleControllerConsistencyHPA", "StaleControllerConsistencyJob",
		"StaleControllerConsistencyReplicaSet", "StaleControllerConsistencyStatefulSet", "StatefulSetRecreateStrategy",
		"StatefulSetSemanticRevisionComparison", "TopologyAwareWorkloadScheduling", "VolumeBindMountOptions",
		"WorkloadWithJob",
	}},
	{Version: "v1.36.3", Tags: []string{"preemptbench_v1_36"}, UnknownGates: []string{
		"AtomicWriteVolumeUserFields", "CompositePodGroup", "DRADerivedAttributes", "DRADeviceCompatibilityGroups",
		"DRAFractionalCapacityRange", "DRAOptionalNodeOperations", "DRAPartitionableDevicesType", "DefaultPodSysctls",
		"EmptyDirVolumeMode", "EvictionRequestAPI", "GRPCContainerProbeTLS", "H2CContainerProbe", "HPAGeneration",
		"HPAOptimizedSelectorStore", "HugepageAwareEviction", "InPlacePodVerticalScalingMemoryBackedVolumes",
		"InPlacePodVerticalScalingSchedulerPreemption", "InterPodAffinityHostnameFastPath", "KubeProxyIPVS",
		"KubeProxyNFTablesLocalhostNodePorts", "KubeletAllocatedPodsEndpoint", "NFTablesNetlink",
		"NodeControllerLeaseCircuitBreaker", "NodeLifecycleConditions", "PodGroupPreemptionPolicy",
		"PodLevelResourcesFixDefaulting", "PodLevelResourcesFixKubeletQOSClass", "SchedulerPreQueueingHints",
		"StaleControllerConsistencyHPA", "StatefulSetRecreateStrategy", "VolumeBindMountOptions",
	}},
	{Version: CurrentRelease},
}

// Releases are the releases a Config may name, oldest first: ReleaseTable's
// versions.
var Releases = func() []string {
	out := make([]string, len(ReleaseTable))
	for i, r := range ReleaseTable {
		out[i] = r.Version
	}
	return out
}()

// Switch names one behaviour change between supported releases.
type Switch string

// The changes from v1.35.4 to v1.36.3 (docs/divergences.md, "v1.35.4 →
// v1.36.3"): two feature gates turned on by default, the asynchronous
// executor's last victim, and NodeVolumeLimits' Portworx migration.
const (
	// SwitchNodeDeclaredFeatures: the default profile runs the
	// NodeDeclaredFeatures filter (its gate on by default): a pod whose
	// spec needs a node-declared feature (hostNetwork with hostUsers
	// false, a RestartAllContainers restart rule) fits only nodes whose
	// status.declaredFeatures list it (v1.35: the gate off, no filter).
	SwitchNodeDeclaredFeatures Switch = "NodeDeclaredFeatures"
	// SwitchPodLevelResizeRequests: a placed pod with pod-level requests
	// counts the largest of their spec, actuated (status.resources) and
	// allocated values (InPlacePodLevelResourcesVerticalScaling on by
	// default); v1.35 counted the spec's.
	SwitchPodLevelResizeRequests Switch = "PodLevelResizeRequests"
	// SwitchAsyncSkipsLastVictim: the asynchronous executor preempts the
	// last victim only if every victim before it was preempted (v1.35
	// preempted it after a failure too, on the context the failure had
	// cancelled, which the contract's API does not check).
	SwitchAsyncSkipsLastVictim Switch = "AsyncSkipsLastVictim"
	// SwitchPortworxMigrated: NodeVolumeLimits counts a Portworx volume
	// (inline, a PersistentVolume's, or a claim's class provisioned by
	// kubernetes.io/portworx-volume) under its CSI driver on every node
	// with a CSINode, as it does the other migrated in-tree plugins (the
	// CSIMigrationPortworx gate removed); v1.35 counted it only on a node
	// whose CSINode lists kubernetes.io/portworx-volume in its
	// storage.alpha.kubernetes.io/migrated-plugins annotation.
	SwitchPortworxMigrated Switch = "PortworxMigrated"
)

// The changes from v1.36.3 to v1.37.2 (docs/divergences.md, "v1.36.3 →
// v1.37.2"). The default profile's new filter order (NodeName before
// NodeUnschedulable) is not one: NodeName fails only a pod with
// spec.nodeName, which the scheduler never sees, so no preemptor shows it.
const (
	// SwitchPDBStopAtFirstViolation: FilterVictimsWithPDBViolation stops at the
	// first PodDisruptionBudget a victim takes below zero (v1.36: every
	// matching budget is lowered).
	SwitchPDBStopAtFirstViolation Switch = "PDBStopAtFirstViolation"
	// SwitchNamespaceSelectorResolved: the incoming pod's InterPodAffinity terms
	// have their namespaceSelector resolved into names and cleared (v1.36
	// kept the selector, so NotIn and DoesNotExist matched namespaces the
	// cluster holds no Namespace object for).
	SwitchNamespaceSelectorResolved Switch = "NamespaceSelectorResolved"
	// SwitchResizedPodRequests: a pod's requests are component-helpers v0.37's
	// (the largest of spec, actuated and allocated over the whole pod);
	// v0.36 took the spec's, or the status's while resizing.
	SwitchResizedPodRequests Switch = "ResizedPodRequests"
	// SwitchSuccessMessage: Evaluator.Preempt's Success status carries "found a
	// potential placement for pod on node N, preempting K victims" (v1.36:
	// empty).
	SwitchSuccessMessage Switch = "SuccessMessage"
	// SwitchMissingCSIDriver: NodeVolumeLimits fails a node whose CSINode
	// lacks the driver of a new CSI volume of the pod when that driver's
	// CSIDriver sets preventPodSchedulingIfMissing (VolumeLimitScaling
	// on by default); v1.36 left the check to the gate, off by default
	// (and v1.35's CSIDriver has no such field).
	SwitchMissingCSIDriver Switch = "MissingCSIDriver"
)

// SwitchInfo documents a Switch: the release that made the change, the
// upstream change that made it and what it changed.
type SwitchInfo struct {
	Switch Switch
	Since  string
	// Upstream names the pull request or the code that changed.
	Upstream string
	Change   string
}

// Switches are the behaviour changes, in the order a cross-release check
// tries them (a new one is appended: the generators draw a bitmask over
// this list, and the fuzz corpora keep theirs; the fuzz decoder,
// internal/conformance/decode.go, reads the first seven's mask from one
// byte and the later ones' from the spec's last).
var Switches = []SwitchInfo{
	{SwitchPDBStopAtFirstViolation, "v1.37.2", "framework/preemption/util.go FilterVictimsWithPDBViolation (v1.36: defaultpreemption's filterPodsWithPDBViolation), with the pod-group-as-victim work; most likely kubernetes#137981, not confirmed from its diff",
		"a victim stops lowering PodDisruptionBudgets at the first it takes below zero, so overlapping budgets count fewer violations, in the PDB lister's order"},
	{SwitchNamespaceSelectorResolved, "v1.37.2", "kubernetes#138198 (InterPodAffinity mergeAffinityTermNamespacesIfNotEmpty on a pointer)",
		"the incoming pod's affinity namespaceSelector is resolved against Namespace objects only: a namespace with no Namespace object matches no selector"},
	{SwitchResizedPodRequests, "v1.37.2", "component-helpers v0.37 resource helpers (in-place pod resize); PR not identified",
		"requests of in-place resized pods are the largest of spec, actuated and allocated, summed over the whole pod"},
	{SwitchSuccessMessage, "v1.37.2", "framework/preemption Evaluator.Preempt; PR not identified",
		`Success carries "found a potential placement for pod on node N, preempting K victims"`},
	{SwitchNodeDeclaredFeatures, "v1.36.3", "kubernetes#136042 (NodeDeclaredFeatures to beta, on by default)",
		"pods needing a node-declared feature (hostNetwork with hostUsers false, a RestartAllContainers rule) fit only nodes declaring it"},
	{SwitchPodLevelResizeRequests, "v1.36.3", "kubernetes#137684 (InPlacePodLevelResourcesVerticalScaling to beta, on by default)",
		"a placed pod's pod-level requests are the largest of spec, actuated and allocated"},
	{SwitchAsyncSkipsLastVictim, "v1.36.3", "framework/preemption executor.go prepareCandidateAsync (preemptLastVictim), with the Executor split out of the Evaluator; PR not identified",
		"after a victim fails to be preempted asynchronously the last victim is left alone"},
	{SwitchPortworxMigrated, "v1.36.3", "kubernetes#135322 (the in-tree Portworx plugin and the CSIMigrationPortworx gate removed; nodevolumelimits isCSIMigrationOn)",
		"NodeVolumeLimits counts Portworx volumes under pxd.portworx.com on every node with a CSINode, not only where its migrated-plugins annotation lists the plugin"},
	{SwitchMissingCSIDriver, "v1.37.2", "kubernetes#140612 (VolumeLimitScaling to beta, on by default; nodevolumelimits checkCSIDriverOnNode)",
		`a node whose CSINode lacks a driver whose CSIDriver sets preventPodSchedulingIfMissing fails the pod's new volumes of it: "<driver> CSI driver is not installed on the node"`},
}

// SwitchInfoOf is s's entry of Switches.
func SwitchInfoOf(s Switch) (SwitchInfo, bool) {
	i := slices.IndexFunc(Switches, func(si SwitchInfo) bool { return si.Switch == s })
	if i < 0 {
		return SwitchInfo{}, false
	}
	return Switches[i], true
}

// Behaviour is the set of switches a decision runs with; the zero value
// is the oldest release's behaviour.
type Behaviour struct {
	NodeDeclaredFeatures      bool
	PodLevelResizeRequests    bool
	AsyncSkipsLastVictim      bool
	PDBStopAtFirstViolation   bool
	NamespaceSelectorResolved bool
	ResizedPodRequests        bool
	SuccessMessage            bool
	PortworxMigrated          bool
	MissingCSIDriver          bool
}

// On reports whether s is on in b.
func (b Behaviour) On(s Switch) bool {
	switch s {
	case SwitchNodeDeclaredFeatures:
		return b.NodeDeclaredFeatures
	case SwitchPodLevelResizeRequests:
		return b.PodLevelResizeRequests
	case SwitchAsyncSkipsLastVictim:
		return b.AsyncSkipsLastVictim
	case SwitchPDBStopAtFirstViolation:
		return b.PDBStopAtFirstViolation
	case SwitchNamespaceSelectorResolved:
		return b.NamespaceSelectorResolved
	case SwitchResizedPodRequests:
		return b.ResizedPodRequests
	case SwitchSuccessMessage:
		return b.SuccessMessage
	case SwitchPortworxMigrated:
		return b.PortworxMigrated
	case SwitchMissingCSIDriver:
		return b.MissingCSIDriver
	}
	return false
}

// With is b with s set to on.
func (b Behaviour) With(s Switch, on bool) Behaviour {
	switch s {
	case SwitchNodeDeclaredFeatures:
		b.NodeDeclaredFeatures = on
	case SwitchPodLevelResizeRequests:
		b.PodLevelResizeRequests = on
	case SwitchAsyncSkipsLastVictim:
		b.AsyncSkipsLastVictim = on
	case SwitchPDBStopAtFirstViolation:
		b.PDBStopAtFirstViolation = on
	case SwitchNamespaceSelectorResolved:
		b.NamespaceSelectorResolved = on
	case SwitchResizedPodRequests:
		b.ResizedPodRequests = on
	case SwitchSuccessMessage:
		b.SuccessMessage = on
	case SwitchPortworxMigrated:
		b.PortworxMigrated = on
	case SwitchMissingCSIDriver:
		b.MissingCSIDriver = on
	}
	return b
}

// ReleaseBehaviour is the behaviour of release r ("" is CurrentRelease):
// every switch made in r or before it is on.
func ReleaseBehaviour(r string) (Behaviour, error) {
	if r == "" {
		r = CurrentRelease
	}
	at := slices.Index(Releases, r)
	if at < 0 {
		return Behaviour{}, fmt.Errorf("unknown release %q (supported: %v)", r, Releases)
	}
	return releaseBehaviours[at], nil
}

// releaseBehaviours[i] is Releases[i]'s behaviour: every switch since it
// or an earlier release on. Computed once: a decision asks for it at
// every stage.
var releaseBehaviours = func() []Behaviour {
	out := make([]Behaviour, len(Releases))
	for at := range Releases {
		for _, si := range Switches {
			if slices.Index(Releases, si.Since) <= at {
				out[at] = out[at].With(si.Switch, true)
			}
		}
	}
	return out
}()

// Behaviour is c's: its release's, with c.Switches set on top. An
// invalid release or switch (Validate refuses them) gives the current
// release's behaviour.
func (c Config) Behaviour() Behaviour {
	b, err := ReleaseBehaviour(c.Release)
	if err != nil {
		b, _ = ReleaseBehaviour(CurrentRelease)
	}
	for s, on := range c.Switches {
		b = b.With(s, on) // each switch sets its own field: any order
	}
	return b
}

// releaseMention is a release written out, v1.X.Y.
var releaseMention = regexp.MustCompile(`\bv1\.([0-9]+)\.([0-9]+)\b`)

// StaleReleaseMentions are the mentions of a release in text (v1.X.Y)
// whose minor version is one of ReleaseTable's but which are not that
// release: a patch release other than the table's, left behind by a bump.
// Other minors (an unknown release a test names) are not checked. Tests
// run it on the sources, the docs and the command's help.
func StaleReleaseMentions(text string) []string {
	minors := map[string]string{}
	for _, r := range Releases {
		if m := releaseMention.FindStringSubmatch(r); m != nil {
			minors[m[1]] = r
		}
	}
	var out []string
	for _, m := range releaseMention.FindAllStringSubmatch(text, -1) {
		if r, ok := minors[m[1]]; ok && r != m[0] {
			out = append(out, m[0]+" (the table's is "+r+")")
		}
	}
	return out
}

// PodGroupAPISince is the first release of Releases whose PodGroups are
// the contract's, scheduling.k8s.io/v1beta1 (v1.36's Pod already has
// spec.schedulingGroup, but its PodGroups are scheduling.k8s.io/v1alpha2,
// which the contract does not carry).
const PodGroupAPISince = "v1.37.2"

// SchedulingGroupSince is the first release of Releases whose Pod has
// spec.schedulingGroup (k8s.io/api v0.35's has spec.workloadRef instead,
// which the contract does not carry).
const SchedulingGroupSince = "v1.36.3"

// PodGroupGap is the refusal of pod groups under cfg: whatever the gates
// when its release predates spec.schedulingGroup (SchedulingGroupSince:
// that release's API server drops the field, and its code sees no group
// to report a victim in), and when its release predates the contract's
// pod-group API (PodGroupAPISince) and GenericWorkload is on: that
// release's scheduler reads its groups from scheduling.k8s.io/v1alpha2
// PodGroups, which the contract does not carry, so no answer "as that
// release" is given for them. what names the pod group or pod that uses
// them.
func PodGroupGap(cfg Config, what string) *Unmodelled {
	if slices.Index(Releases, cfg.ReleaseName()) < slices.Index(Releases, SchedulingGroupSince) {
		return &Unmodelled{Feature: "pod groups", Object: what,
			Detail: "uses them, and release " + cfg.ReleaseName() + "'s Pod has no spec.schedulingGroup (it came in " + SchedulingGroupSince + "; v1.35 named a Workload, spec.workloadRef) and its API no PodGroup"}
	}
	if !cfg.FeatureGates[GenericWorkloadGate] || slices.Index(Releases, cfg.ReleaseName()) >= slices.Index(Releases, PodGroupAPISince) {
		return nil
	}
	return &Unmodelled{Feature: "pod groups (" + GenericWorkloadGate + "=true)", Object: what,
		Detail: "uses them, and release " + cfg.ReleaseName() + "'s PodGroups are scheduling.k8s.io/v1alpha2 objects, which the contract does not carry (its PodGroups are v1beta1's, from " + PodGroupAPISince + ")"}
}

// ReleaseName is c's release, CurrentRelease when unset.
func (c Config) ReleaseName() string {
	if c.Release == "" {
		return CurrentRelease
	}
	return c.Release
}

func sortedSwitches(m map[Switch]bool) []Switch {
	out := make([]Switch, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func validateRelease(c Config) error {
	if _, err := ReleaseBehaviour(c.Release); err != nil {
		return err
	}
	for _, s := range sortedSwitches(c.Switches) {
		if _, ok := SwitchInfoOf(s); !ok {
			return fmt.Errorf("unknown behaviour switch %q", s)
		}
	}
	return nil
}

// ReleaseFixed is implemented by an implementation that runs one
// release's own code (an upstream adapter): it cannot answer as another
// release, nor with single switches set.
type ReleaseFixed interface {
	UpstreamRelease() string
}

// ReleaseGap is the refusal of an implementation fixed at release r for
// cfg, or nil when cfg asks for r's behaviour as it is, or names no
// release (such an implementation answers as its own).
func ReleaseGap(r string, cfg Config) *Unmodelled {
	if cfg.Release != "" && cfg.Release != r {
		return &Unmodelled{Feature: "release " + cfg.ReleaseName(), Object: "the configuration",
			Detail: "asks for release " + cfg.ReleaseName() + "'s behaviour; this implementation runs " + r + "'s own code"}
	}
	if len(cfg.Switches) > 0 {
		return &Unmodelled{Feature: "behaviour switches", Object: "the configuration",
			Detail: "sets single behaviour switches; this implementation runs " + r + "'s own code as it is"}
	}
	return nil
}

// BehaviourSetter is an Evaluator whose filter phase reproduces a
// release: its Filter (and FilterCodes) run with the behaviour last given
// to SetBehaviour (none: the current release's). A request's stages run
// with the request's Config.Behaviour().
type BehaviourSetter interface {
	SetBehaviour(b Behaviour)
}

// SetFilterConfig gives ev the feature gates (GateSetter) and the
// behaviour (BehaviourSetter) of cfg for its filter phase.
func SetFilterConfig(ev Evaluator, cfg Config) {
	SetFeatureGates(ev, cfg.FeatureGates)
	if s, ok := ev.(BehaviourSetter); ok {
		s.SetBehaviour(cfg.Behaviour())
	}
}

// ReleaseModeller is implemented by an implementation that answers with
// the behaviour a configuration asks for (Config.Behaviour: its release
// and single switches), as the reference and optimized do. Any other
// answers as the current release only: BehaviourGap refuses it another.
type ReleaseModeller interface {
	ModelsReleases()
}

// BehaviourGap is impl's refusal of cfg when cfg asks for another
// behaviour than the current release's and impl cannot give it: impl is
// no ReleaseModeller, and no ReleaseFixed either (ReleaseGap decides for
// those). Nil otherwise.
func BehaviourGap(impl Implementation, cfg Config) *Unmodelled {
	if _, ok := impl.(ReleaseModeller); ok {
		return nil
	}
	if _, ok := impl.(ReleaseFixed); ok {
		return nil
	}
	if cfg.Release == "" && len(cfg.Switches) == 0 {
		return nil
	}
	if cur, _ := ReleaseBehaviour(CurrentRelease); cfg.Behaviour() == cur {
		return nil
	}
	return &Unmodelled{Feature: "release behaviour", Object: "the configuration",
		Detail: "asks for release " + cfg.ReleaseName() + "'s behaviour" + switchesNote(cfg) + "; this implementation answers as " + CurrentRelease + " only (it is no preempt.ReleaseModeller)"}
}

func switchesNote(cfg Config) string {
	if len(cfg.Switches) == 0 {
		return ""
	}
	var parts []string
	for _, s := range sortedSwitches(cfg.Switches) {
		parts = append(parts, fmt.Sprintf("%s=%t", s, cfg.Switches[s]))
	}
	return " with " + strings.Join(parts, ",")
}
