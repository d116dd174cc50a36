package synth

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/preemptbench/preemptbench/preempt"
)

// ListYAML renders c as the kubectl List LoadCluster reads: every object
// the cluster holds, kind after kind.
func ListYAML(c *preempt.Cluster) ([]byte, error) {
	var buf bytes.Buffer
	lw := newListWriter(&buf)
	for _, n := range c.Nodes {
		lw.item(n)
	}
	for _, p := range c.Pods {
		lw.item(p)
	}
	for _, pdb := range c.PDBs {
		lw.item(pdb)
	}
	for _, pg := range c.PodGroups {
		lw.item(pg)
	}
	for _, cpg := range c.CompositePodGroups {
		lw.item(cpg)
	}
	for _, o := range c.Namespaces {
		lw.item(o)
	}
	for _, o := range c.PVCs {
		lw.item(o)
	}
	for _, o := range c.PVs {
		lw.item(o)
	}
	for _, o := range c.StorageClasses {
		lw.item(o)
	}
	for _, o := range c.CSINodes {
		lw.item(o)
	}
	for _, o := range c.CSIDrivers {
		lw.item(o)
	}
	for _, o := range c.VolumeAttachments {
		lw.item(o)
	}
	for _, o := range c.CSIStorageCapacities {
		lw.item(o)
	}
	for _, o := range c.ResourceClaims {
		lw.item(o)
	}
	for _, o := range c.ResourceClaimTemplates {
		lw.item(o)
	}
	for _, o := range c.ResourceSlices {
		lw.item(o)
	}
	for _, o := range c.DeviceClasses {
		lw.item(o)
	}
	for _, o := range c.DeviceTaintRules {
		lw.item(o)
	}
	if err := lw.close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteCluster builds the named shape as Build does and writes its cluster
// to w as ListYAML renders it, byte for byte, holding one object at a time
// where ListYAML holds the cluster and its whole YAML tree (gigabytes at
// 20000 nodes): it builds the shape once per kind of object it has, nodes,
// pods, PDBs, PodGroups, then PersistentVolumeClaims and
// PersistentVolumes, as the List holds them, the same seed giving the same
// objects each time. The scenario it returns is Build's without its
// cluster.
func WriteCluster(w io.Writer, shape string, nodes int, seed uint64) (*Scenario, error) {
	if err := Check(shape, nodes); err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	lw := newListWriter(bw)
	var s *Scenario
	var has [numKinds]bool
	for _, kind := range []objectKind{kindNode, kindPod, kindPDB, kindPodGroup, kindPVC, kindPV} {
		if kind != kindNode && !has[kind] {
			continue // the first build, the nodes', saw none
		}
		built, seen, err := buildEach(shape, nodes, seed, kind, func(obj any) error {
			lw.item(obj)
			return lw.err
		})
		if err != nil {
			return nil, err
		}
		if kind == kindNode {
			has = seen
		}
		s = built
	}
	if err := lw.close(); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	return s, nil
}

// listWriter writes a kubectl List item by item, as yaml.Marshal writes
// the whole List: its keys sorted (apiVersion, items, kind), each item
// rendered in the context it has in the List (a sequence entry under
// "items:"), so that the bytes are those of the whole List marshalled at
// once, line folding and all.
type listWriter struct {
	w     io.Writer
	items int
	err   error
}

func newListWriter(w io.Writer) *listWriter {
	lw := &listWriter{w: w}
	lw.write([]byte("apiVersion: v1\n"))
	return lw
}

func (lw *listWriter) write(b []byte) {
	if lw.err == nil {
		_, lw.err = lw.w.Write(b)
	}
}

// item writes obj, one of the objects a preempt.Cluster holds.
func (lw *listWriter) item(obj any) {
	if lw.err != nil {
		return
	}
	y, err := itemYAML(obj)
	if err != nil {
		lw.err = err
		return
	}
	if lw.items == 0 {
		lw.write([]byte("items:\n"))
	}
	lw.items++
	lw.write(y)
}

func (lw *listWriter) close() error {
	if lw.items == 0 {
		// yaml.Marshal of a nil slice, as ListYAML of an empty cluster
		// always wrote.
		lw.write([]byte("items: null\n"))
	}
	lw.write([]byte("kind: List\n"))
	return lw.err
}

// itemYAML renders obj as an entry of the List's items: its JSON with
// apiVersion and kind set, through a map (as kubectl writes them: keys
// sorted), as yaml.Marshal writes it under "items:".
func itemYAML(obj any) ([]byte, error) {
	var apiVersion, kind, what string
	switch o := obj.(type) {
	case *v1.Node:
		apiVersion, kind, what = "v1", "Node", "node "+o.Name
	case *v1.Pod:
		apiVersion, kind, what = "v1", "Pod", "pod "+preempt.Key(o.Namespace, o.Name)
	case *policyv1.PodDisruptionBudget:
		apiVersion, kind, what = "policy/v1", "PodDisruptionBudget", "poddisruptionbudget "+preempt.Key(o.Namespace, o.Name)
	case *schedulingv1beta1.PodGroup:
		apiVersion, kind, what = "scheduling.k8s.io/v1beta1", "PodGroup", "podgroup "+preempt.Key(o.Namespace, o.Name)
	case *schedulingv1alpha3.CompositePodGroup:
		apiVersion, kind, what = "scheduling.k8s.io/v1alpha3", "CompositePodGroup", "compositepodgroup "+preempt.Key(o.Namespace, o.Name)
	case *v1.Namespace:
		apiVersion, kind, what = "v1", "Namespace", "namespace "+o.Name
	case *v1.PersistentVolumeClaim:
		apiVersion, kind, what = "v1", "PersistentVolumeClaim", "persistentvolumeclaim "+preempt.Key(o.Namespace, o.Name)
	case *v1.PersistentVolume:
		apiVersion, kind, what = "v1", "PersistentVolume", "persistentvolume "+o.Name
	case *storagev1.StorageClass:
		apiVersion, kind, what = "storage.k8s.io/v1", "StorageClass", "storageclass "+o.Name
	case *storagev1.CSINode:
		apiVersion, kind, what = "storage.k8s.io/v1", "CSINode", "csinode "+o.Name
	case *storagev1.CSIDriver:
		apiVersion, kind, what = "storage.k8s.io/v1", "CSIDriver", "csidriver "+o.Name
	case *storagev1.VolumeAttachment:
		apiVersion, kind, what = "storage.k8s.io/v1", "VolumeAttachment", "volumeattachment "+o.Name
	case *storagev1.CSIStorageCapacity:
		apiVersion, kind, what = "storage.k8s.io/v1", "CSIStorageCapacity", "csistoragecapacity "+preempt.Key(o.Namespace, o.Name)
	case *resourcev1.ResourceClaim:
		apiVersion, kind, what = "resource.k8s.io/v1", "ResourceClaim", "resourceclaim "+preempt.Key(o.Namespace, o.Name)
	case *resourcev1.ResourceClaimTemplate:
		apiVersion, kind, what = "resource.k8s.io/v1", "ResourceClaimTemplate", "resourceclaimtemplate "+preempt.Key(o.Namespace, o.Name)
	case *resourcev1.ResourceSlice:
		apiVersion, kind, what = "resource.k8s.io/v1", "ResourceSlice", "resourceslice "+o.Name
	case *resourcev1.DeviceClass:
		apiVersion, kind, what = "resource.k8s.io/v1", "DeviceClass", "deviceclass "+o.Name
	case *resourcev1.DeviceTaintRule:
		apiVersion, kind, what = "resource.k8s.io/v1", "DeviceTaintRule", "devicetaintrule "+o.Name
	default:
		return nil, fmt.Errorf("no List item for %T", obj)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	m["apiVersion"], m["kind"] = apiVersion, kind
	raw, err = json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	y, err := yaml.Marshal(map[string]any{"items": []runtime.RawExtension{{Raw: raw}}})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	const head = "items:\n"
	if !bytes.HasPrefix(y, []byte(head)) {
		return nil, fmt.Errorf("%s: rendered as %.40q, not as a List item", what, y)
	}
	return y[len(head):], nil
}

// PodYAML renders one pod.
func PodYAML(p *v1.Pod) ([]byte, error) {
	out := p.DeepCopy()
	out.APIVersion, out.Kind = "v1", "Pod"
	return yaml.Marshal(out)
}
