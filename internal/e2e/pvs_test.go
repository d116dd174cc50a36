package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"
	"sigs.k8s.io/yaml"

	"github.com/preemptbench/preemptbench/internal/synth"
)

// TestPVsIsCreatePodWithPersistentVolume runs scheduler_perf's own
// CreatePodWithPersistentVolume (runners.go), as PreemptionPVs' measured
// createPods op runs it (templates/pod-high-priority.yaml, pvc.yaml and
// pv-aws.yaml, namespace-2, bindVolume), against a fake clientset, and
// compares what it created with the pvs stream's preemptors and the
// claims and volumes it adds (synth.Scenario.Preemptors): names,
// namespaces, specs, statuses, the pods' volumes. The volume factory is
// executor.go's getCustomVolumeFactory, unexported, copied here; the fake
// clientset names a pod by generateName and its claim's number, where
// the API server adds a random suffix.
func TestPVsIsCreatePodWithPersistentVolume(t *testing.T) {
	_, perfDir := moduleDirs(t)
	read := func(rel string, into any) {
		data, err := os.ReadFile(filepath.Join(perfDir, rel))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(data, into); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
	}
	var pvcT v1.PersistentVolumeClaim
	var pvT v1.PersistentVolume
	var podT v1.Pod
	read("templates/pvc.yaml", &pvcT)
	read("templates/pv-aws.yaml", &pvT)
	read("templates/pod-high-priority.yaml", &podT)
	factory := func(id int) *v1.PersistentVolume { // getCustomVolumeFactory
		pv := pvT.DeepCopy()
		volumeID := fmt.Sprintf("vol-%d", id)
		pv.ObjectMeta.Name = volumeID
		pvs := pv.Spec.PersistentVolumeSource
		if pvs.CSI != nil {
			pvs.CSI.VolumeHandle = volumeID
		} else if pvs.AWSElasticBlockStore != nil {
			pvs.AWSElasticBlockStore.VolumeID = volumeID
		}
		return pv
	}
	const namespace, measure = "namespace-2", 5 // createPods' namespace-<op index>; 5Nodes' measurePods
	cs := fake.NewClientset()
	cs.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		p := a.(clienttesting.CreateAction).GetObject().(*v1.Pod)
		if p.Name == "" && len(p.Spec.Volumes) == 1 && p.Spec.Volumes[0].PersistentVolumeClaim != nil {
			p.Name = p.GenerateName + strings.TrimPrefix(p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName, "pvc-")
		}
		return false, nil, nil
	})
	ctx := context.Background()
	if err := perf.CreatePodWithPersistentVolume(ctx, cs, namespace, &pvcT, factory, perf.StaticPodTemplate(&podT), measure, true); err != nil {
		t.Fatal(err)
	}
	pvcs, err := cs.CoreV1().PersistentVolumeClaims(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pvs, err := cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}

	c, preemptors := synth.MustBuild("pvs", 5, 1).Preemptors(measure)
	if len(pvcs.Items) != measure || len(pvs.Items) != measure || len(pods.Items) != measure || len(c.PVCs) != measure || len(c.PVs) != measure {
		t.Fatalf("upstream made %d claims, %d volumes, %d pods; the stream has %d claims, %d volumes; want %d each",
			len(pvcs.Items), len(pvs.Items), len(pods.Items), len(c.PVCs), len(c.PVs), measure)
	}
	// What scheduler_perf sets; the rest (UIDs, resource versions, type
	// meta) is the API server's.
	type claim struct {
		Name, Namespace string
		Annotations     map[string]string
		Spec            v1.PersistentVolumeClaimSpec
		Status          v1.PersistentVolumeClaimStatus
	}
	type volume struct {
		Name   string
		Spec   v1.PersistentVolumeSpec
		Status v1.PersistentVolumeStatus
	}
	type pod struct {
		Name, Namespace string
		Volumes         []v1.Volume
	}
	var wantC, gotC []claim
	var wantV, gotV []volume
	var wantP, gotP []pod
	for i := range measure {
		o := &pvcs.Items[i]
		wantC = append(wantC, claim{o.Name, o.Namespace, o.Annotations, o.Spec, o.Status})
		g := c.PVCs[i]
		gotC = append(gotC, claim{g.Name, g.Namespace, g.Annotations, g.Spec, g.Status})
		v := &pvs.Items[i]
		wantV = append(wantV, volume{v.Name, v.Spec, v.Status})
		gotV = append(gotV, volume{c.PVs[i].Name, c.PVs[i].Spec, c.PVs[i].Status})
		p := &pods.Items[i]
		wantP = append(wantP, pod{p.Name, p.Namespace, p.Spec.Volumes})
		gotP = append(gotP, pod{preemptors[i].Name, preemptors[i].Namespace, preemptors[i].Spec.Volumes})
	}
	byName := func(a, b string) int { return strings.Compare(a, b) }
	slices.SortFunc(wantC, func(a, b claim) int { return byName(a.Name, b.Name) })
	slices.SortFunc(gotC, func(a, b claim) int { return byName(a.Name, b.Name) })
	slices.SortFunc(wantV, func(a, b volume) int { return byName(a.Name, b.Name) })
	slices.SortFunc(gotV, func(a, b volume) int { return byName(a.Name, b.Name) })
	slices.SortFunc(wantP, func(a, b pod) int { return byName(a.Name, b.Name) })
	slices.SortFunc(gotP, func(a, b pod) int { return byName(a.Name, b.Name) })
	if d := cmp.Diff(wantC, gotC); d != "" {
		t.Errorf("claims (-CreatePodWithPersistentVolume +pvs):\n%s", d)
	}
	if d := cmp.Diff(wantV, gotV); d != "" {
		t.Errorf("volumes (-CreatePodWithPersistentVolume +pvs):\n%s", d)
	}
	if d := cmp.Diff(wantP, gotP); d != "" {
		t.Errorf("pods (-CreatePodWithPersistentVolume +pvs):\n%s", d)
	}
}
