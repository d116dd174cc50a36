package loader

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/preemptbench/preemptbench/preempt"
)

// liveKind is one kind LoadLive lists: what the loader reads of a dump.
type liveKind struct {
	apiVersion, kind, resource string
	// optional kinds may not be served (their API group off, as pod
	// groups are without GenericWorkload, resource.k8s.io without
	// DynamicResourceAllocation): none is read then, with a note.
	optional bool
	list     func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error)
}

var liveKinds = []liveKind{
	{"v1", "Node", "nodes", false, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().Nodes().List(ctx, o)
	}},
	{"v1", "Pod", "pods", false, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().Pods("").List(ctx, o)
	}},
	{"policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", false, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.PolicyV1().PodDisruptionBudgets("").List(ctx, o)
	}},
	{"v1", "Namespace", "namespaces", false, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().Namespaces().List(ctx, o)
	}},
	{"v1", "PersistentVolumeClaim", "persistentvolumeclaims", false, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().PersistentVolumeClaims("").List(ctx, o)
	}},
	{"v1", "PersistentVolume", "persistentvolumes", false, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().PersistentVolumes().List(ctx, o)
	}},
	{"storage.k8s.io/v1", "StorageClass", "storageclasses", false, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.StorageV1().StorageClasses().List(ctx, o)
	}},
	{"storage.k8s.io/v1", "CSINode", "csinodes", false, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.StorageV1().CSINodes().List(ctx, o)
	}},
	{"storage.k8s.io/v1", "CSIDriver", "csidrivers", false, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.StorageV1().CSIDrivers().List(ctx, o)
	}},
	{"storage.k8s.io/v1", "VolumeAttachment", "volumeattachments", false, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.StorageV1().VolumeAttachments().List(ctx, o)
	}},
	{"storage.k8s.io/v1", "CSIStorageCapacity", "csistoragecapacities", false, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.StorageV1().CSIStorageCapacities("").List(ctx, o)
	}},
	{"resource.k8s.io/v1", "ResourceClaim", "resourceclaims", true, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.ResourceV1().ResourceClaims("").List(ctx, o)
	}},
	{"resource.k8s.io/v1", "ResourceClaimTemplate", "resourceclaimtemplates", true, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.ResourceV1().ResourceClaimTemplates("").List(ctx, o)
	}},
	{"resource.k8s.io/v1", "ResourceSlice", "resourceslices", true, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.ResourceV1().ResourceSlices().List(ctx, o)
	}},
	{"resource.k8s.io/v1", "DeviceClass", "deviceclasses", true, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.ResourceV1().DeviceClasses().List(ctx, o)
	}},
	{"resource.k8s.io/v1", "DeviceTaintRule", "devicetaintrules", true, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.ResourceV1().DeviceTaintRules().List(ctx, o)
	}},
	{"scheduling.k8s.io/v1beta1", "PodGroup", "podgroups", true, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.SchedulingV1beta1().PodGroups("").List(ctx, o)
	}},
	{"scheduling.k8s.io/v1alpha3", "CompositePodGroup", "compositepodgroups", true, func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.SchedulingV1alpha3().CompositePodGroups("").List(ctx, o)
	}},
}

// LiveVerbs is the read-only access LoadLive and LoadLivePod need, as RBAC
// rules would grant it: list on every kind the loader reads, get on pods.
func LiveVerbs() []string {
	out := []string{"get pods"}
	for _, k := range liveKinds {
		r := k.resource
		if gv, err := schema.ParseGroupVersion(k.apiVersion); err == nil && gv.Group != "" {
			r += "." + gv.Group
		}
		out = append(out, "list "+r)
	}
	return out
}

// livePageSize is the page LoadLive lists with (kubectl's --chunk-size).
const livePageSize = 500

// LoadLive reads the cluster the API server behind cs holds, every kind a
// dump holds (nodes, pods, PDBs, namespaces, the volume objects, the
// resource.k8s.io objects, pod groups), in pages as kubectl does, and loads it with the loader's rules
// exactly as a dump of it (`kubectl get ... -A -o json`) is loaded
// (LoadClusterWith): defaulting, what the scheduler never sees left out,
// each change in a note, opts.MaxBytes bounding the whole. name names the
// source in notes and errors. A kind whose API the server does not serve
// (pod groups without GenericWorkload) is read as none, with a note.
func LoadLive(ctx context.Context, cs kubernetes.Interface, name string, opts Options) (*preempt.Cluster, []string, error) {
	var notes []string
	var buf bytes.Buffer
	buf.WriteString(`{"apiVersion":"v1","kind":"List","items":[`)
	n := 0
	limit := opts.maxBytes()
	for _, k := range liveKinds {
		err := ListPages(ctx, name, k.resource+" ("+k.apiVersion+")", metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			list, err := k.list(ctx, cs, o)
			if err != nil {
				return nil, fmt.Errorf("%s: listing %s (%s): %w", name, k.resource, k.apiVersion, err)
			}
			return list, nil
		}, func(list runtime.Object) error {
			items, err := meta.ExtractList(list)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", name, k.resource, err)
			}
			for _, it := range items {
				obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(it)
				if err != nil {
					return fmt.Errorf("%s: %s: %w", name, k.resource, err)
				}
				obj["apiVersion"], obj["kind"] = k.apiVersion, k.kind
				b, err := json.Marshal(obj)
				if err != nil {
					return fmt.Errorf("%s: %s: %w", name, k.resource, err)
				}
				if n > 0 {
					buf.WriteByte(',')
				}
				buf.Write(b)
				n++
				if int64(buf.Len()) > limit {
					return fmt.Errorf("%s: the cluster's objects take more than %d bytes (-max-input-bytes)", name, limit)
				}
			}
			return nil
		})
		if err != nil {
			if k.optional && (apierrors.IsNotFound(err) || meta.IsNoMatchError(err)) {
				notes = append(notes, fmt.Sprintf("%s serves no %s (%s): none read", name, k.resource, k.apiVersion))
				continue
			}
			return nil, notes, LiveError(err)
		}
	}
	buf.WriteString("]}")
	c, more, err := LoadClusterWith(name, buf.Bytes(), opts)
	notes = append(notes, more...)
	if err != nil {
		return nil, notes, err
	}
	if len(c.Nodes) == 0 {
		return nil, notes, fmt.Errorf("%s: the API server holds no nodes", name)
	}
	return c, notes, nil
}

// LoadLivePod reads pod namespace/name from the API server behind cs and
// loads it as the preemptor, as LoadPodWith loads a pod file.
func LoadLivePod(ctx context.Context, cs kubernetes.Interface, name, namespace, pod string, opts Options) (*v1.Pod, []string, error) {
	p, err := cs.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		var tl *ResponseTooLargeError
		if errors.As(err, &tl) {
			return nil, nil, tl
		}
		return nil, nil, fmt.Errorf("%s: pod %s/%s: %w", name, namespace, pod, err)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		return nil, nil, err
	}
	obj["apiVersion"], obj["kind"] = "v1", "Pod"
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, nil, err
	}
	return LoadPodWith(fmt.Sprintf("%s: pod %s/%s", name, namespace, pod), b, opts)
}
