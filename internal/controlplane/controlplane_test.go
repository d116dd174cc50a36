package controlplane

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/preemptbench/preemptbench/internal/testobj"
)

func TestMain(m *testing.M) { Main(m) }

// TestCreateAndList: the shared control plane's system namespaces exist;
// a client of it creates a namespace and a node and lists them back,
// through the kubeconfig too.
func TestCreateAndList(t *testing.T) {
	cp := Shared(t)
	t.Logf("control plane start: %v (etcd %s)", cp.StartDuration, cp.EtcdURL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cp.Healthy(ctx); err != nil {
		t.Fatal(err)
	}
	cs, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	// Start waited for the system namespaces: they are there already.
	for _, ns := range SystemNamespaces {
		if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			t.Errorf("system namespace %s after Start: %v", ns, err)
		}
	}
	// Generated names: the test can run again in the same process (-count).
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cp-test-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node := testobj.MakeNode().Obj()
	node.GenerateName = "cp-test-node-"
	node, err = cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })
	pod := testobj.MakePod().Name("p").Namespace(ns.Name).Container("c").Image("pause").Obj()
	if _, err := cs.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	file := t.TempDir() + "/kubeconfig"
	if err := cp.WriteKubeconfig(file); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", file)
	if err != nil {
		t.Fatal(err)
	}
	cs2, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := cs2.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Name != "p" {
		t.Errorf("pods listed through the kubeconfig: %v, want [p]", pods.Items)
	}
	nodes, err := cs2.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil || nodes.Name != node.Name {
		t.Errorf("node: %v, %v", nodes, err)
	}
}

// TestStartStop: a control plane of its own starts, answers, and leaves
// no directory behind once stopped; the etcd URL is what
// KUBE_INTEGRATION_ETCD_URL gets.
func TestStartStop(t *testing.T) {
	var lines int
	before := runtime.NumGoroutine()
	cp, err := Start(Options{Logf: func(string, ...any) { lines++ }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("control plane start: %v", cp.StartDuration)
	if err := cp.Healthy(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EtcdURLEnv, "")
	if err := cp.SetEtcdEnv(); err != nil || os.Getenv(EtcdURLEnv) != cp.EtcdURL {
		t.Errorf("%s=%q after SetEtcdEnv (%v), want %q", EtcdURLEnv, os.Getenv(EtcdURLEnv), err, cp.EtcdURL)
	}
	if len(cp.Dirs) != 2 {
		t.Errorf("directories: %v, want etcd's and the API server's", cp.Dirs)
	}
	during := runtime.NumGoroutine()
	cp.Stop()
	cp.Stop() // twice is fine

	// What stops asynchronously, given time to.
	time.Sleep(2 * time.Second)
	after := runtime.NumGoroutine()
	t.Logf("goroutines: %d before Start, %d running, %d after Stop", before, during, after)
	// A few stay (klog's flush daemon, grpc's and etcd's process-wide
	// helpers); a server left running would leave thousands.
	if after > before+50 {
		t.Errorf("%d goroutines after Stop, %d before Start: the control plane did not stop", after, before)
	}
	for _, d := range cp.Dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still there after Stop (%v)", d, err)
		}
	}
	if cp.Failed() {
		t.Errorf("the API server reported a failure")
	}
	if lines == 0 {
		t.Errorf("nothing logged through Logf")
	}
}
