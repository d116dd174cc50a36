package loader

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"
)

// This file builds big dumps: the basic shape at scale, as LoadCluster
// reads it, in YAML and JSON, with its objects as they are or dressed as a
// real cluster's (`kubectl get nodes,pods,pdb -A -o yaml`: managed fields,
// owner references, annotations, environment, probes, long statuses).

// realistic dresses c's nodes and pods as a real cluster's, in place,
// without changing what the filters and preemption read.
func realistic(c *preempt.Cluster) {
	created := metav1.NewTime(time.Date(2025, 11, 3, 8, 14, 27, 0, time.UTC))
	for i, n := range c.Nodes {
		dressNode(i, n, created)
	}
	for i, p := range c.Pods {
		dressPod(i, p, created)
	}
}

func fieldsV1(s string) *metav1.FieldsV1 { return metav1.NewFieldsV1(s) }

func dressNode(i int, n *v1.Node, created metav1.Time) {
	zone := []string{"us-east-1a", "us-east-1b", "us-east-1c"}[i%3]
	ip := fmt.Sprintf("10.%d.%d.%d", i/65536%256, i/256%256, i%256)
	n.CreationTimestamp = created
	n.ResourceVersion = fmt.Sprint(1000000 + i*7)
	n.UID = types.UID(fmt.Sprintf("6f1c%04x-2b9e-4c1d-9a7e-%012x", i%65536, i))
	n.Annotations = map[string]string{
		"alpha.kubernetes.io/provided-node-ip":                   ip,
		"csi.volume.kubernetes.io/nodeid":                        fmt.Sprintf(`{"ebs.csi.aws.com":"i-0%015x"}`, i),
		"node.alpha.kubernetes.io/ttl":                           "0",
		"volumes.kubernetes.io/controller-managed-attach-detach": "true",
	}
	for k, v := range map[string]string{
		"beta.kubernetes.io/arch":                  "amd64",
		"beta.kubernetes.io/instance-type":         "m5.xlarge",
		"beta.kubernetes.io/os":                    "linux",
		"failure-domain.beta.kubernetes.io/zone":   zone,
		"kubernetes.io/arch":                       "amd64",
		"kubernetes.io/os":                         "linux",
		"node.kubernetes.io/instance-type":         "m5.xlarge",
		"topology.kubernetes.io/region":            "us-east-1",
		"topology.kubernetes.io/zone":              zone,
		"eks.amazonaws.com/nodegroup":              "workers-" + zone,
		"eks.amazonaws.com/capacityType":           "ON_DEMAND",
		"k8s.io/cloud-provider-aws":                "a94f1b6c3d2e8f7a5b4c3d2e1f0a9b8c",
		"topology.ebs.csi.aws.com/zone":            zone,
		"topology.k8s.aws/zone-id":                 "use1-az" + fmt.Sprint(i%3+1),
		"node.kubernetes.io/lifecycle":             "normal",
		"eks.amazonaws.com/nodegroup-image":        "ami-0abcdef1234567890",
		"eks.amazonaws.com/sourceLaunchTemplateId": "lt-0123456789abcdef0",
	} {
		n.Labels[k] = v
	}
	n.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &created, FieldsType: "FieldsV1",
			FieldsV1: fieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:alpha.kubernetes.io/provided-node-ip":{},"f:volumes.kubernetes.io/controller-managed-attach-detach":{}},"f:labels":{".":{},"f:beta.kubernetes.io/arch":{},"f:beta.kubernetes.io/os":{},"f:kubernetes.io/arch":{},"f:kubernetes.io/hostname":{},"f:kubernetes.io/os":{}}},"f:spec":{"f:providerID":{}}}`)},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &created, FieldsType: "FieldsV1",
			FieldsV1: fieldsV1(`{"f:metadata":{"f:annotations":{"f:node.alpha.kubernetes.io/ttl":{}}},"f:spec":{"f:podCIDR":{},"f:podCIDRs":{".":{},"v:\"10.244.1.0/24\"":{}}}}`)},
		{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &created, FieldsType: "FieldsV1", Subresource: "status",
			FieldsV1: fieldsV1(`{"f:status":{"f:allocatable":{"f:cpu":{},"f:ephemeral-storage":{},"f:memory":{}},"f:capacity":{"f:ephemeral-storage":{}},"f:conditions":{"k:{\"type\":\"DiskPressure\"}":{"f:lastHeartbeatTime":{}},"k:{\"type\":\"MemoryPressure\"}":{"f:lastHeartbeatTime":{}},"k:{\"type\":\"PIDPressure\"}":{"f:lastHeartbeatTime":{}},"k:{\"type\":\"Ready\"}":{"f:lastHeartbeatTime":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{}}},"f:images":{},"f:nodeInfo":{"f:bootID":{},"f:kernelVersion":{},"f:osImage":{}}}}`)},
	}
	n.Spec.PodCIDR = fmt.Sprintf("10.244.%d.0/24", i%256)
	n.Spec.PodCIDRs = []string{n.Spec.PodCIDR}
	n.Spec.ProviderID = fmt.Sprintf("aws:///%s/i-0%015x", zone, i)
	n.Status.Capacity["ephemeral-storage"] = resource.MustParse("104845292Ki")
	n.Status.Capacity["hugepages-1Gi"] = resource.MustParse("0")
	n.Status.Capacity["hugepages-2Mi"] = resource.MustParse("0")
	n.Status.Allocatable["ephemeral-storage"] = resource.MustParse("95551679124")
	n.Status.Allocatable["hugepages-1Gi"] = resource.MustParse("0")
	n.Status.Allocatable["hugepages-2Mi"] = resource.MustParse("0")
	hb := metav1.NewTime(created.Add(90 * 24 * time.Hour))
	for _, c := range []struct{ typ, status, reason, msg string }{
		{"MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
		{"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
		{"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
		{"Ready", "True", "KubeletReady", "kubelet is posting ready status. AppArmor enabled and the container runtime network plugin is ready, the node lease was renewed in time"},
	} {
		n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{Type: v1.NodeConditionType(c.typ), Status: v1.ConditionStatus(c.status),
			LastHeartbeatTime: hb, LastTransitionTime: created, Reason: c.reason, Message: c.msg})
	}
	n.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: ip}, {Type: v1.NodeHostName, Address: n.Name + ".ec2.internal"},
		{Type: v1.NodeInternalDNS, Address: n.Name + ".ec2.internal"}}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = 10250
	n.Status.NodeInfo = v1.NodeSystemInfo{MachineID: fmt.Sprintf("ec2%029x", i), SystemUUID: fmt.Sprintf("ec2%05x-1234-5678-9abc-def012345678", i),
		BootID: fmt.Sprintf("%08x-aaaa-bbbb-cccc-%012x", i, i), KernelVersion: "5.10.226-214.880.amzn2.x86_64", OSImage: "Amazon Linux 2",
		ContainerRuntimeVersion: "containerd://1.7.22", KubeletVersion: "v1.36.3-eks-a737599",
		OperatingSystem: "linux", Architecture: "amd64"}
	for j, img := range []string{"amazon-k8s-cni", "amazon-k8s-cni-init", "kube-proxy", "aws-ebs-csi-driver"} {
		n.Status.Images = append(n.Status.Images, v1.ContainerImage{Names: []string{
			fmt.Sprintf("602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/%s@sha256:%064x", img, j*7919+1),
			fmt.Sprintf("602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/%s:v1.%d.%d-eksbuild.1", img, 10+j, j),
		}, SizeBytes: int64(31415926 + j*2718281)})
	}
}

func dressPod(i int, p *v1.Pod, created metav1.Time) {
	rs := fmt.Sprintf("web-%d-7d9f8c6b5", i/50)
	p.GenerateName = rs + "-"
	p.CreationTimestamp = created
	p.ResourceVersion = fmt.Sprint(2000000 + i*3)
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels["app.kubernetes.io/name"] = fmt.Sprintf("web-%d", i/50)
	p.Labels["app.kubernetes.io/part-of"] = "storefront"
	p.Labels["pod-template-hash"] = "7d9f8c6b5"
	p.Annotations = map[string]string{
		"kubectl.kubernetes.io/restartedAt":              "2025-11-03T08:14:27Z",
		"prometheus.io/scrape":                           "true",
		"prometheus.io/port":                             "9090",
		"cluster-autoscaler.kubernetes.io/safe-to-evict": "true",
	}
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
		UID: types.UID(fmt.Sprintf("0a1b2c3d-%04x-4e5f-8a9b-%012x", i/50%65536, i/50)), Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}
	p.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &created, FieldsType: "FieldsV1",
			FieldsV1: fieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/restartedAt":{},"f:prometheus.io/port":{},"f:prometheus.io/scrape":{}},"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:app.kubernetes.io/name":{},"f:app.kubernetes.io/part-of":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"0a1b2c3d\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{".":{},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:terminationGracePeriodSeconds":{}}}`)},
	}
	c := &p.Spec.Containers[0]
	c.Image = fmt.Sprintf("123456789012.dkr.ecr.us-east-1.amazonaws.com/storefront/web:%d.%d.%d", 3, i%20, i%7)
	c.ImagePullPolicy = v1.PullIfNotPresent
	c.TerminationMessagePath = "/dev/termination-log"
	c.TerminationMessagePolicy = v1.TerminationMessageReadFile
	c.Ports = []v1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: v1.ProtocolTCP}, {Name: "metrics", ContainerPort: 9090, Protocol: v1.ProtocolTCP}}
	for k := 0; k < 3; k++ {
		c.Env = append(c.Env, v1.EnvVar{Name: fmt.Sprintf("STOREFRONT_SETTING_%02d", k), Value: fmt.Sprintf("value-%d-of-pod-%d with some text", k, i)})
	}
	c.Env = append(c.Env, v1.EnvVar{Name: "POD_NAME", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
		v1.EnvVar{Name: "POD_IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}})
	probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http"), Scheme: v1.URISchemeHTTP}},
		InitialDelaySeconds: 10, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
	c.ReadinessProbe = probe
	// What real containers carry and kubectl writes in its own ways:
	// flags ("- --config=..."), a script whose lines start with '#'
	// (a literal block), a message starting with a space ("|2").
	c.Command = []string{"/bin/sh", "-c", "#!/bin/sh\n# wait for the config, then start\nset -e\nexec /app \"$@\"\n"}
	c.Args = []string{"--config=/etc/storefront/config.yaml", "-v=2", "--listen=:8080"}
	c.VolumeMounts = []v1.VolumeMount{{Name: "kube-api-access-x7k2p", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
	p.Spec.Volumes = []v1.Volume{{Name: "kube-api-access-x7k2p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{DefaultMode: ptr(int32(420)),
		Sources: []v1.VolumeProjection{
			{ServiceAccountToken: &v1.ServiceAccountTokenProjection{ExpirationSeconds: ptr(int64(3607)), Path: "token"}},
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []v1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		}}}}}
	p.Spec.DNSPolicy = v1.DNSClusterFirst
	p.Spec.EnableServiceLinks = ptr(true)
	p.Spec.RestartPolicy = v1.RestartPolicyAlways
	p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount = "default", "default"
	p.Spec.TerminationGracePeriodSeconds = ptr(int64(30))
	p.Spec.SecurityContext = &v1.PodSecurityContext{}
	p.Spec.Tolerations = []v1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
		{Key: "node.kubernetes.io/unreachable", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
	}
	if p.Spec.NodeName == "" {
		return
	}
	ip := fmt.Sprintf("10.244.%d.%d", i/250%256, i%250+2)
	p.Status.Phase = v1.PodRunning
	p.Status.HostIP, p.Status.PodIP = "10.0.1.2", ip
	p.Status.HostIPs, p.Status.PodIPs = []v1.HostIP{{IP: "10.0.1.2"}}, []v1.PodIP{{IP: ip}}
	p.Status.QOSClass = v1.PodQOSBurstable
	for _, typ := range []v1.PodConditionType{"PodReadyToStartContainers", v1.PodInitialized, v1.PodReady, v1.ContainersReady, v1.PodScheduled} {
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: typ, Status: v1.ConditionTrue, LastTransitionTime: created})
	}
	p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: c.Name, Ready: true, RestartCount: int32(i % 3), Image: c.Image,
		ImageID:     fmt.Sprintf("123456789012.dkr.ecr.us-east-1.amazonaws.com/storefront/web@sha256:%064x", i),
		ContainerID: fmt.Sprintf("containerd://%064x", i*31+7), Started: ptr(true),
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: created}},
		LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: created, FinishedAt: created,
			Message: " 07:17:53.591692       1 main.go:95] config not ready, retrying\nW1103 08:14:20.000001       1 main.go:99] giving up after 30 tries\n"}},
		VolumeMounts: []v1.VolumeMountStatus{{Name: "kube-api-access-x7k2p", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true, RecursiveReadOnly: ptr(v1.RecursiveReadOnlyDisabled)}},
	}}
}

func ptr[T any](v T) *T { return &v }

// bigList is the List of the basic shape at n nodes (realistic or not),
// in YAML as LoadCluster reads it, and its preemptor.
func bigList(t testing.TB, n int, real bool) (list []byte, pod *v1.Pod) {
	s := synth.MustBuild("basic", n, 1)
	if real {
		realistic(s.Cluster)
	}
	list, err := synth.ListYAML(s.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	return list, s.Pod
}

// jsonDump is a YAML List as `kubectl get -o json` prints it.
func jsonDump(t fataler, yamlList []byte) []byte {
	j, err := yaml.YAMLToJSON(yamlList)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, j, "", "    "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// TestWriteBigDumps writes the big dumps to $BIGDUMP_DIR (skipped
// without it): syn.yaml, syn.json, real.yaml and pod.yaml, at
// $BIGDUMP_NODES nodes (5000 by default).
func TestWriteBigDumps(t *testing.T) {
	dir := os.Getenv("BIGDUMP_DIR")
	if dir == "" {
		t.Skip("BIGDUMP_DIR not set")
	}
	n := 5000
	if s := os.Getenv("BIGDUMP_NODES"); s != "" {
		fmt.Sscan(s, &n)
	}
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes", name, len(data))
	}
	for _, real := range []bool{false, true} {
		list, pod := bigList(t, n, real)
		name := "syn"
		if real {
			name = "real"
		}
		write(name+".yaml", list)
		if !real { // 4-space indented, the realistic one is over MaxInputBytes
			write(name+".json", jsonDump(t, list))
		}
		podYAML, err := synth.PodYAML(pod)
		if err != nil {
			t.Fatal(err)
		}
		write("pod.yaml", podYAML)
	}
}

var bigDumps = map[string][]byte{}

// bigDump is a dump of the basic shape at 5000 nodes (built once):
// "syn.yaml", "syn.json", "real.yaml".
func bigDump(b *testing.B, name string) []byte {
	if d, ok := bigDumps[name]; ok {
		return d
	}
	list, _ := bigList(b, 5000, name == "real.yaml")
	bigDumps[name] = list
	if name == "syn.json" {
		bigDumps[name] = jsonDump(b, list)
	}
	return bigDumps[name]
}

// BenchmarkLoadBig loads the big dumps, on the fast path and the general
// one.
func BenchmarkLoadBig(b *testing.B) {
	for _, name := range []string{"syn.yaml", "syn.json", "real.yaml"} {
		for _, slow := range []bool{false, true} {
			path := "fast"
			if slow {
				path = "general"
			}
			b.Run(name+"/"+path, func(b *testing.B) {
				data := bigDump(b, name)
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := loadClusterWith(name, data, Options{}, slow); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
