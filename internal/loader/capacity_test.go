package loader

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// CSIStorageCapacities are read, not skipped as a kind the filters do
// not read (VolumeBinding reads them), from a file and from an API
// server, a missing namespace defaulted as the API server does; one the
// API server would refuse is refused, naming it and the field.
func TestLoadCSIStorageCapacity(t *testing.T) {
	const in = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status: {allocatable: {cpu: "1"}}
- apiVersion: storage.k8s.io/v1
  kind: CSIStorageCapacity
  metadata: {name: cap-a, namespace: kube-system}
  storageClassName: fast
  capacity: 100Gi
  maximumVolumeSize: 10Gi
  nodeTopology: {matchLabels: {topology.kubernetes.io/zone: a}}
- apiVersion: storage.k8s.io/v1
  kind: CSIStorageCapacity
  metadata: {name: cap-b}
  storageClassName: fast
`
	c, notes, err := LoadCluster("in.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		if strings.Contains(n, "CSIStorageCapacity") {
			t.Errorf("note %q names the kind", n)
		}
	}
	if len(c.CSIStorageCapacities) != 2 {
		t.Fatalf("read %d CSIStorageCapacities, want 2", len(c.CSIStorageCapacities))
	}
	a, b := c.CSIStorageCapacities[0], c.CSIStorageCapacities[1]
	if a.Namespace != "kube-system" || a.StorageClassName != "fast" || a.MaximumVolumeSize.String() != "10Gi" || a.NodeTopology.MatchLabels["topology.kubernetes.io/zone"] != "a" {
		t.Errorf("cap-a read as %+v", a)
	}
	if b.Namespace != metav1.NamespaceDefault || b.Capacity != nil || b.NodeTopology != nil {
		t.Errorf("cap-b read as %+v", b)
	}

	bad := strings.Replace(in, "storageClassName: fast\n  capacity", "storageClassName: Fast_Class\n  capacity", 1)
	_, _, err = LoadCluster("in.yaml", []byte(bad))
	if err == nil || !strings.Contains(err.Error(), "csistoragecapacity kube-system/cap-a: storageClassName: Invalid value: \"Fast_Class\"") {
		t.Errorf("LoadCluster of an invalid class name: %v", err)
	}

	live := &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: "cap-live", Namespace: "kube-system"}, StorageClassName: "fast",
		Capacity: ptr(resource.MustParse("1Gi")), NodeTopology: &metav1.LabelSelector{}}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}}
	lc, _, err := LoadLive(context.Background(), fake.NewClientset(node, live), "server", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lc.CSIStorageCapacities) != 1 || lc.CSIStorageCapacities[0].Name != "cap-live" {
		t.Errorf("LoadLive read %v", lc.CSIStorageCapacities)
	}
}
