package preempt

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestValidateVolumeAndDeviceNames: Cluster.Validate refuses a nil, an
// unnamed and a repeated object of each storage and resource.k8s.io
// kind, naming it (namespace/name, or the quoted name of a cluster-scoped
// one); the same name in two namespaces, or in two kinds, is no repeat.
func TestValidateVolumeAndDeviceNames(t *testing.T) {
	meta := func(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	base := func() *Cluster { return nodesNamed("n1") }
	for _, tc := range []struct {
		name string
		set  func(c *Cluster)
		want string
	}{
		{"pvc twice", func(c *Cluster) {
			c.PVCs = []*v1.PersistentVolumeClaim{{ObjectMeta: meta("a", "v")}, {ObjectMeta: meta("a", "v")}}
		}, "persistentvolumeclaim a/v appears twice"},
		{"pv twice", func(c *Cluster) {
			c.PVs = []*v1.PersistentVolume{{ObjectMeta: meta("", "v")}, {ObjectMeta: meta("", "v")}}
		}, `persistentvolume "v" appears twice`},
		{"storageclass twice", func(c *Cluster) {
			c.StorageClasses = []*storagev1.StorageClass{{ObjectMeta: meta("", "s")}, {ObjectMeta: meta("", "s")}}
		}, `storageclass "s" appears twice`},
		{"csinode twice", func(c *Cluster) {
			c.CSINodes = []*storagev1.CSINode{{ObjectMeta: meta("", "n1")}, {ObjectMeta: meta("", "n1")}}
		}, `csinode "n1" appears twice`},
		{"csidriver twice", func(c *Cluster) {
			c.CSIDrivers = []*storagev1.CSIDriver{{ObjectMeta: meta("", "d")}, {ObjectMeta: meta("", "d")}}
		}, `csidriver "d" appears twice`},
		{"volumeattachment twice", func(c *Cluster) {
			c.VolumeAttachments = []*storagev1.VolumeAttachment{{ObjectMeta: meta("", "va")}, {ObjectMeta: meta("", "va")}}
		}, `volumeattachment "va" appears twice`},
		{"resourceclaim twice", func(c *Cluster) {
			c.ResourceClaims = []*resourcev1.ResourceClaim{{ObjectMeta: meta("a", "c")}, {ObjectMeta: meta("b", "c")}, {ObjectMeta: meta("a", "c")}}
		}, "resourceclaim a/c appears twice"},
		{"resourceclaimtemplate twice", func(c *Cluster) {
			c.ResourceClaimTemplates = []*resourcev1.ResourceClaimTemplate{{ObjectMeta: meta("a", "t")}, {ObjectMeta: meta("a", "t")}}
		}, "resourceclaimtemplate a/t appears twice"},
		{"resourceslice twice", func(c *Cluster) {
			c.ResourceSlices = []*resourcev1.ResourceSlice{{ObjectMeta: meta("", "s")}, {ObjectMeta: meta("", "s")}}
		}, `resourceslice "s" appears twice`},
		{"deviceclass twice", func(c *Cluster) {
			c.DeviceClasses = []*resourcev1.DeviceClass{{ObjectMeta: meta("", "gpu.example.com")}, {ObjectMeta: meta("", "gpu.example.com")}}
		}, `deviceclass "gpu.example.com" appears twice`},
		{"deviceclass nil", func(c *Cluster) {
			c.DeviceClasses = []*resourcev1.DeviceClass{{ObjectMeta: meta("", "a")}, nil}
		}, "deviceclass #1 is nil"},
		{"devicetaintrule twice", func(c *Cluster) {
			c.DeviceTaintRules = []*resourcev1.DeviceTaintRule{{ObjectMeta: meta("", "r")}, {ObjectMeta: meta("", "r")}}
		}, `devicetaintrule "r" appears twice`},
		{"devicetaintrule nil", func(c *Cluster) {
			c.DeviceTaintRules = []*resourcev1.DeviceTaintRule{nil}
		}, "devicetaintrule #0 is nil"},
		{"resourceslice unnamed", func(c *Cluster) {
			c.ResourceSlices = []*resourcev1.ResourceSlice{{}}
		}, "resourceslice #0 has no name"},
		{"pvc nil", func(c *Cluster) { c.PVCs = []*v1.PersistentVolumeClaim{nil} }, "persistentvolumeclaim #0 is nil"},
		{"one name in two namespaces and two kinds", func(c *Cluster) {
			c.ResourceClaims = []*resourcev1.ResourceClaim{{ObjectMeta: meta("a", "x")}, {ObjectMeta: meta("b", "x")}}
			c.ResourceClaimTemplates = []*resourcev1.ResourceClaimTemplate{{ObjectMeta: meta("a", "x")}}
			c.PVs = []*v1.PersistentVolume{{ObjectMeta: meta("", "x")}}
			c.PVCs = []*v1.PersistentVolumeClaim{{ObjectMeta: meta("a", "x")}}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.set(c)
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}
