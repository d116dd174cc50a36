// Package controlplane starts a real kube-apiserver (k8s.io/kubernetes
// v1.37.2, cmd/kube-apiserver/app/testing.StartTestServer) on an embedded
// etcd (go.etcd.io/etcd/server/v3/embed), both in this process, as
// upstream's integration tests and scheduler_perf run them: no container,
// no binary, no download. Start returns once the API server is healthy
// and its system namespaces exist (SystemNamespaces; 3-6 s on the
// project's 2-core machine when it is quiet, up to 15 s while other
// builds load it); Stop tears both down and removes their directories.
//
// It serves tests (StartT, and Shared for one control plane per test
// package from TestMain) and commands (Start, with a plain log function):
// StartTestServer wants a ktesting.TB, which this package implements
// without the testing package (processTB).
//
// The etcd it starts listens on EtcdURL: upstream's integration framework
// (scheduler_perf among its users) reuses an etcd already listening at
// KUBE_INTEGRATION_ETCD_URL, which SetEtcdEnv sets.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.etcd.io/etcd/server/v3/embed"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	apiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
)

// EtcdURLEnv is the variable upstream's integration framework
// (test/integration/framework.GetEtcdURL) reads the etcd URL from.
const EtcdURLEnv = "KUBE_INTEGRATION_ETCD_URL"

// DefaultFlags are the kube-apiserver flags scheduler_perf starts its API
// server with (test/integration/scheduler_perf/util.go mustSetupCluster):
// no ServiceAccount admission (no service account controller runs), no
// TaintNodesByCondition, no Priority admission (pods carry spec.priority
// directly, no PriorityClass needed).
var DefaultFlags = []string{
	"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition,Priority",
}

// Options configure Start. The zero value is usable.
type Options struct {
	// Logf receives the control plane's progress lines and the API
	// server's log (through its ktesting logger); nil discards them.
	Logf func(format string, args ...any)
	// Flags are kube-apiserver flags; nil means DefaultFlags.
	Flags []string
	// RequestTimeout is the API server's request timeout (0: its
	// default, 60 s).
	RequestTimeout time.Duration
}

// ControlPlane is a running etcd and kube-apiserver.
type ControlPlane struct {
	// Config is a client configuration of the API server with full
	// rights (its loopback configuration, QPS 1000, burst 10000). Copy it
	// (rest.CopyConfig) before changing it.
	Config *rest.Config
	// EtcdURL is the embedded etcd's client URL (http://localhost:PORT).
	EtcdURL string
	// EtcdPrefix is the key prefix the API server stores under.
	EtcdPrefix string
	// StartDuration is how long Start took: etcd, the API server, its
	// health and the default namespace.
	StartDuration time.Duration
	// Dirs are the directories Start made (etcd's data, the API server's
	// certificates); Stop removes them.
	Dirs []string

	stopOnce sync.Once
	tb       *processTB
	etcd     *embed.Etcd
}

// Start starts etcd and kube-apiserver in this process. Call Stop when done.
func Start(opts Options) (cp *ControlPlane, err error) {
	begin := time.Now()
	tb := newProcessTB("controlplane", opts.Logf)
	cp = &ControlPlane{tb: tb}
	defer func() {
		if err != nil {
			cp.Stop()
			cp = nil
		}
	}()

	etcd, dir, etcdURL, err := startEtcd()
	if dir != "" {
		cp.Dirs = append(cp.Dirs, dir)
	}
	if err != nil {
		return cp, err
	}
	cp.etcd, cp.EtcdURL = etcd, etcdURL
	tb.Logf("etcd ready at %s after %v", etcdURL, time.Since(begin).Round(time.Millisecond))

	storage := storagebackend.NewDefaultConfig(path.Join(uuid.New().String(), "registry"), nil)
	storage.Transport.ServerList = []string{etcdURL}
	cp.EtcdPrefix = storage.Prefix

	flags := opts.Flags
	if flags == nil {
		flags = DefaultFlags
	}
	serverOpts := apiservertesting.NewDefaultTestServerOptions()
	// The invariant checks scrape the API server's metrics at teardown
	// and report through the TB: they are for upstream's own tests.
	serverOpts.DisableInvariantChecks = true
	serverOpts.RequestTimeout = opts.RequestTimeout
	var server apiservertesting.TestServer
	if err := tb.run(func() error {
		var err error
		server, err = apiservertesting.StartTestServer(tb, serverOpts, flags, storage)
		return err
	}); err != nil {
		return cp, fmt.Errorf("starting kube-apiserver: %w", err)
	}
	if server.TmpDir != "" {
		cp.Dirs = append(cp.Dirs, server.TmpDir)
	}
	// StartTestServer's teardown runs before etcd stops (cleanups run
	// last in, first out; etcd is stopped by Stop after them).
	tb.Cleanup(server.TearDownFn)
	cp.Config = server.ClientConfig
	if err := cp.waitSystemNamespaces(time.Minute); err != nil {
		return cp, err
	}
	cp.StartDuration = time.Since(begin)
	tb.Logf("kube-apiserver ready at %s after %v", cp.Config.Host, cp.StartDuration.Round(time.Millisecond))
	return cp, nil
}

// Stop stops the API server, then etcd, and removes their directories.
// It may be called more than once.
func (cp *ControlPlane) Stop() {
	cp.stopOnce.Do(func() {
		cp.tb.runCleanups()
		if cp.etcd != nil {
			cp.etcd.Close()
		}
		for _, d := range cp.Dirs {
			os.RemoveAll(d)
		}
	})
}

// Failed reports whether the API server reported an error through the
// TB after Start (StartTestServer's teardown logs shutdown errors).
func (cp *ControlPlane) Failed() bool { return cp.tb.Failed() }

// Client is a clientset of Config.
func (cp *ControlPlane) Client() (kubernetes.Interface, error) {
	return kubernetes.NewForConfig(cp.Config)
}

// SetEtcdEnv sets KUBE_INTEGRATION_ETCD_URL to the embedded etcd, for
// upstream's integration framework (scheduler_perf).
func (cp *ControlPlane) SetEtcdEnv() error { return os.Setenv(EtcdURLEnv, cp.EtcdURL) }

// Kubeconfig is a kubeconfig of Config: what a kube-scheduler started
// with --kubeconfig needs.
func (cp *ControlPlane) Kubeconfig() clientcmdapi.Config {
	c := cp.Config
	return clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{"local": {
			Server:                   c.Host,
			CertificateAuthorityData: c.TLSClientConfig.CAData,
			TLSServerName:            c.TLSClientConfig.ServerName,
			InsecureSkipTLSVerify:    c.TLSClientConfig.Insecure,
		}},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{"admin": {
			Token:                 c.BearerToken,
			ClientCertificateData: c.TLSClientConfig.CertData,
			ClientKeyData:         c.TLSClientConfig.KeyData,
		}},
		Contexts:       map[string]*clientcmdapi.Context{"local": {Cluster: "local", AuthInfo: "admin"}},
		CurrentContext: "local",
	}
}

// WriteKubeconfig writes Kubeconfig to file.
func (cp *ControlPlane) WriteKubeconfig(file string) error {
	return clientcmd.WriteToFile(cp.Kubeconfig(), file)
}

// startEtcd starts an embedded single-member etcd as upstream's
// k8s.io/apiserver/pkg/storage/etcd3/testserver.NewTestConfig configures
// it (no fsync, free ports, errors only in its log), in a directory of its
// own. (testserver.RunEtcd itself wants a *testing.T.)
func startEtcd() (*embed.Etcd, string, string, error) {
	dir, err := os.MkdirTemp("", "preemptbench-etcd")
	if err != nil {
		return nil, "", "", err
	}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{"stderr"}
	etcdPortMu.Lock()
	defer etcdPortMu.Unlock()
	ports, err := freePorts(2)
	if err != nil {
		return nil, dir, "", err
	}
	client := url.URL{Scheme: "http", Host: net.JoinHostPort("localhost", strconv.Itoa(ports[0]))}
	peer := url.URL{Scheme: "http", Host: net.JoinHostPort("localhost", strconv.Itoa(ports[1]))}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, dir, "", fmt.Errorf("starting etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, dir, "", fmt.Errorf("etcd: %w", err)
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, dir, "", errors.New("etcd took more than 60s to start")
	}
	return e, dir, client.String(), nil
}

// etcdPortMu serialises picking free ports and binding them, as
// testserver.RunEtcd does.
var etcdPortMu sync.Mutex

func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "localhost:0")
		if err != nil {
			return nil, fmt.Errorf("no free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// SystemNamespaces are the namespaces kube-apiserver v1.37.2 creates
// itself, after it is healthy (its system-namespaces controller;
// pkg/controlplane/apiserver/options and cmd/kube-apiserver/app/options).
var SystemNamespaces = []string{metav1.NamespaceSystem, metav1.NamespacePublic, metav1.NamespaceDefault, v1.NamespaceNodeLease}

// waitSystemNamespaces waits until every one of SystemNamespaces exists,
// so that a cluster a test starts from does not change under it (a
// scheduler reads every namespace: kube-node-lease appearing in the
// middle of a test is a change it must follow).
func (cp *ControlPlane) waitSystemNamespaces(timeout time.Duration) error {
	cs, err := cp.Client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var missing string
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, ns := range SystemNamespaces {
			if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
				missing = fmt.Sprintf("%s: %v", ns, err)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("kube-apiserver's system namespaces after %v: %s", timeout, missing)
	}
	return nil
}

// Healthy reports whether the API server answers /healthz.
func (cp *ControlPlane) Healthy(ctx context.Context) error {
	cs, err := cp.Client()
	if err != nil {
		return err
	}
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/healthz").DoRaw(ctx)
	if err != nil {
		return err
	}
	if string(body) != "ok" {
		return fmt.Errorf("/healthz: %q", body)
	}
	return nil
}
