package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// apiNode is a node every apiObjects cluster holds.
const apiNode = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"1\", memory: 1Gi, pods: \"10\"}}\n"

const apiPod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: \"2\"}}}]}\n"

// devices is a ResourceSlice's devices list of n devices.
func devices(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "  - name: dev-%d\n", i)
	}
	return b.String()
}

// requests is a claim's requests list of n requests of class c.
func requests(n int, indent string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s- name: r%d\n%s  exactly: {deviceClassName: c}\n", indent, i, indent)
	}
	return b.String()
}

// apiInvalid are objects kube-apiserver v1.37.2 refuses on create (its
// validation, pkg/apis/{resource,core,storage}/validation and
// pkg/volume/validation, read for each: the field path and the error
// type are upstream's), and repeated names. Each is refused, exit 2,
// naming the object and the field.
var apiInvalid = []struct {
	name, objects string
	want          []string
}{
	{"deviceclass CEL compile error", `apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver =="}
`, []string{`deviceclass gpu.example.com: spec.selectors[0].cel.expression: Invalid value: "device.driver ==": compilation failed: ERROR: <input>:1:17: Syntax error`}},
	{"claim request selector CEL compile error", `apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c1, namespace: default}
spec:
  devices:
    requests:
    - name: r
      exactly:
        deviceClassName: c
        selectors:
        - cel: {expression: "device.attributes["}
`, []string{`resourceclaim default/c1: spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: "device.attributes[": compilation failed`}},
	{"claim template CEL type error", `apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t1, namespace: ns}
spec:
  spec:
    devices:
      requests:
      - name: r
        exactly:
          deviceClassName: c
          selectors:
          - cel: {expression: "device.driver"}
`, []string{`resourceclaimtemplate ns/t1: spec.spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: "device.driver": must evaluate to bool`}},
	{"slice with too many devices", "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s1}\nspec:\n  driver: gpu.example.com\n  nodeName: n1\n  pool: {name: p, resourceSliceCount: 1}\n  devices:\n" + devices(129),
		[]string{"resourceslice s1: spec.devices: Too many: 129: must have at most 128 items"}},
	{"claim with too many requests", "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c2, namespace: default}\nspec:\n  devices:\n    requests:\n" + requests(33, "    "),
		[]string{"resourceclaim default/c2: spec.devices.requests: Too many: 33: must have at most 32 items"}},
	{"devicetaintrule with an unknown effect", `apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: r1}
spec:
  deviceSelector: {driver: gpu.example.com}
  taint: {key: example.com/broken, effect: PreferNoSchedule}
`, []string{`devicetaintrule r1: spec.taint.effect: Unsupported value: "PreferNoSchedule"`}},
	{"claim request naming no class", `apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c3, namespace: default}
spec:
  devices:
    requests:
    - name: r
      exactly: {count: 1}
`, []string{"resourceclaim default/c3: spec.devices.requests[0].exactly.deviceClassName: Required value"}},
	{"claim reserved but not allocated", `apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c4, namespace: default}
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: c}
status:
  reservedFor:
  - {resource: pods, name: p0, uid: 11111111-1111-1111-1111-111111111111}
`, []string{"resourceclaim default/c4: status.reservedFor: Forbidden: may not be specified when `allocated` is not set"}},
	{"claim allocated for an unknown request", `apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c5, namespace: default}
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: c}
status:
  allocation:
    devices:
      results:
      - {request: other, driver: gpu.example.com, pool: p, device: d}
`, []string{"resourceclaim default/c5: status.allocation.devices.results[0].request: Invalid value: \"other\": must be the name of a request in the claim"}},
	{"persistentvolume without capacity", `apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec:
  accessModes: [ReadWriteOnce]
  hostPath: {path: /data}
`, []string{"persistentvolume pv1: [spec.capacity: Required value, "}},
	{"persistentvolumeclaim without access modes", `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: pvc1, namespace: default}
spec:
  resources: {requests: {storage: 1Gi}}
`, []string{"persistentvolumeclaim default/pvc1: spec.accessModes: Required value: at least 1 access mode is required"}},
	{"storageclass with an invalid provisioner", `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: "not a provisioner!"
`, []string{`storageclass fast: provisioner: Invalid value: "not a provisioner!"`}},
	{"csidriver with an invalid name", `apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: "Bad_Driver"}
spec: {}
`, []string{`csidriver Bad_Driver: metadata.name: Invalid value: "Bad_Driver"`}},
	{"csinode driver without a name", `apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec:
  drivers:
  - {name: "", nodeID: n1}
`, []string{"csinode n1: spec.drivers[0].name: Required value"}},
	{"volumeattachment without attacher", `apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va1}
spec:
  nodeName: n1
  source: {persistentVolumeName: pv1}
`, []string{"volumeattachment va1: spec.attacher: Required value"}},
	{"deviceclass twice", "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\n---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\n",
		[]string{`deviceclass "c" appears twice`}},
	{"resourceclaim twice", "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\nspec: {}\n---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec: {}\n",
		[]string{"resourceclaim default/c appears twice"}},
	{"resourceslice twice", "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec: {driver: d.example.com, nodeName: n1, pool: {name: p, resourceSliceCount: 1}}\n---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec: {driver: d.example.com, nodeName: n1, pool: {name: p, resourceSliceCount: 1}}\n",
		[]string{`resourceslice "s" appears twice`}},
	{"persistentvolumeclaim twice", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: v, namespace: ns}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: v, namespace: ns}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n",
		[]string{"persistentvolumeclaim ns/v appears twice"}},
	{"storageclass twice", "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: sc}\nprovisioner: a.example.com\n---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: sc}\nprovisioner: a.example.com\n",
		[]string{`storageclass "sc" appears twice`}},
}

// TestDecideRefusesWhatTheAPIServerRefuses: each apiInvalid object, in
// a cluster file beside a node, makes decide exit 2 naming it; before,
// a DeviceClass whose selector did not compile gave a Decision with
// status Error, exit 0. The same objects made valid (apiValid) decide.
func TestDecideRefusesWhatTheAPIServerRefuses(t *testing.T) {
	dir := t.TempDir()
	pod := filepath.Join(dir, "pod.yaml")
	if err := os.WriteFile(pod, []byte(apiPod), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, tc := range apiInvalid {
		t.Run(tc.name, func(t *testing.T) {
			cluster := filepath.Join(dir, fmt.Sprintf("c%d.yaml", i))
			if err := os.WriteFile(cluster, []byte(apiNode+"---\n"+tc.objects), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := runCLI(t, "decide", "-cluster", cluster, "-pod", pod, "-impl", "all", "-now", testNow)
			if code != ExitBadInput || stdout != "" {
				t.Fatalf("exit %d, stdout %.300q, stderr %.500q; want exit 2, nothing decided", code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %.800q\nlacks %q", stderr, w)
				}
			}
		})
	}
}

// apiValid are objects of each kind kube-apiserver accepts, odd ones
// among them: a claim without namespace (kubectl create puts it in
// default), a deleted claim still reserved (its status written before
// the deletion), an allocated claim, a slice of the most devices.
const apiValid = `apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: r1}
spec:
  deviceSelector: {driver: gpu.example.com, pool: n1}
  taint: {key: example.com/broken, effect: None}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c1}
spec:
  devices:
    requests:
    - name: r
      exactly:
        deviceClassName: gpu.example.com
        selectors:
        - cel: {expression: 'device.attributes["gpu.example.com"].model == "a"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c2, namespace: default, deletionTimestamp: "2025-12-31T00:00:00Z", finalizers: [resource.kubernetes.io/delete-protection], uid: 22222222-2222-2222-2222-222222222222}
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: gpu.example.com}
status:
  allocation:
    devices:
      results:
      - {request: r, driver: gpu.example.com, pool: n1, device: dev-0}
  reservedFor:
  - {resource: pods, name: p0, uid: 11111111-1111-1111-1111-111111111111}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t1, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: r
        exactly: {deviceClassName: gpu.example.com}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s1}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, resourceSliceCount: 1}
  devices:
` + "%s" + `---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  hostPath: {path: /data}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: pvc1, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  resources: {requests: {storage: 1Gi}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: csi.example.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.example.com}
spec: {}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec:
  drivers:
  - {name: csi.example.com, nodeID: n1, allocatable: {count: 8}}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va1}
spec:
  attacher: csi.example.com
  nodeName: n1
  source: {persistentVolumeName: pv1}
`

func TestDecideAcceptsWhatTheAPIServerAccepts(t *testing.T) {
	dir := t.TempDir()
	pod := filepath.Join(dir, "pod.yaml")
	cluster := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(pod, []byte(apiPod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cluster, []byte(apiNode+"---\n"+fmt.Sprintf(apiValid, devices(128))), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, "decide", "-cluster", cluster, "-pod", pod, "-impl", "all", "-now", testNow)
	if code != ExitOK || !strings.Contains(stdout, `"status": "Unschedulable"`) {
		t.Fatalf("exit %d, stdout %.300q, stderr %.800q; want a decision (the pod needs 2 cpu of 1)", code, stdout, stderr)
	}
}
