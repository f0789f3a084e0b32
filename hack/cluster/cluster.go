// Package cluster runs a real Kubernetes control plane on loopback: etcd,
// kube-apiserver (RBAC on), kube-controller-manager, kube-scheduler and kwok with one
// fake node, so Deployments become Available and Jobs complete without Docker or a
// kubelet. `make run`, the integration tests, the kuttl suites and the benchmark all
// start it through Start.
package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/surveyor-dev/surveyor/hack/tools"
)

// NodeName is the fake node kwok manages; pods are scheduled onto it.
const NodeName = "kwok-node-0"

// Options configure Start.
type Options struct {
	// Dir holds data, keys, logs and the kubeconfig. Empty means a new temporary
	// directory that Stop removes.
	Dir string
	// Log receives progress lines and tool build output; nil discards them.
	Log io.Writer
	// Install lists manifests (files or directories) applied as soon as the API
	// server is ready, before kube-controller-manager starts, so that its garbage
	// collector knows their CRDs from the start instead of after its 30 s resync.
	Install []string
}

// Cluster is a running control plane.
type Cluster struct {
	// Dir is the working directory; Kubeconfig the admin kubeconfig written there.
	Dir, Kubeconfig string
	// Config is the admin (system:masters) REST config.
	Config *rest.Config

	ownDir bool
	procs  []*process
}

// Start builds (once per machine) and starts every component, waits until the API
// server is ready and the fake node is Ready, and returns the running cluster. On
// error everything started so far is stopped.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	c := &Cluster{Dir: opts.Dir}
	if c.Dir == "" {
		if c.Dir, err = os.MkdirTemp("", "surveyor-cluster-"); err != nil {
			return nil, err
		}
		c.ownDir = true
	}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()

	bins := map[string]string{}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
		if bins[b], err = tools.Path(b, log); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{"pki", "logs", "etcd"} {
		if err := os.MkdirAll(filepath.Join(c.Dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	pki := filepath.Join(c.Dir, "pki")
	if err := writeServiceAccountKey(pki); err != nil {
		return nil, err
	}
	token, err := randomToken()
	if err != nil {
		return nil, err
	}
	tokens := filepath.Join(pki, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+",surveyor-admin,surveyor-admin,system:masters\n"), 0o600); err != nil {
		return nil, err
	}
	ports, err := freePorts(5)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	apiPort := ports[2]

	fmt.Fprintf(log, "starting etcd on %s\n", etcdURL)
	if err := c.Launch(ctx, "etcd", bins["etcd"],
		"--name=default",
		"--data-dir="+filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL,
		"--unsafe-no-fsync", "--log-level=warn",
	); err != nil {
		return nil, err
	}

	fmt.Fprintf(log, "starting kube-apiserver on https://127.0.0.1:%d\n", apiPort)
	certDir := filepath.Join(pki, "serving")
	if err := c.Launch(ctx, "kube-apiserver", bins["kube-apiserver"],
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(apiPort),
		"--cert-dir="+certDir,
		"--token-auth-file="+tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(pki, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		"--allow-privileged=true",
		"--profiling=false",
	); err != nil {
		return nil, err
	}
	host := "https://127.0.0.1:" + strconv.Itoa(apiPort)
	ca, err := waitForServingCert(ctx, filepath.Join(certDir, "apiserver.crt"))
	if err != nil {
		return nil, err
	}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	if err := writeKubeconfig(c.Kubeconfig, host, ca, token); err != nil {
		return nil, err
	}
	if c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		return nil, err
	}
	if err := waitReady(ctx, c.Config); err != nil {
		return nil, fmt.Errorf("kube-apiserver never became ready (see %s): %w", c.LogPath("kube-apiserver"), err)
	}

	if len(opts.Install) > 0 {
		if err := Apply(ctx, c.Config, opts.Install...); err != nil {
			return nil, fmt.Errorf("installing %v: %w", opts.Install, err)
		}
	}

	fmt.Fprintln(log, "starting kube-controller-manager, kube-scheduler and kwok")
	if err := c.Launch(ctx, "kube-controller-manager", bins["kube-controller-manager"],
		"--kubeconfig="+c.Kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(ports[3]),
		"--service-account-private-key-file="+filepath.Join(pki, "sa.key"),
		"--root-ca-file="+filepath.Join(certDir, "apiserver.crt"),
		"--cluster-cidr=10.244.0.0/16",
		// kwok's node heartbeat comes every 20-45 s; a grace period well above that
		// keeps the fake node (and the pods on it) from flapping NotReady.
		"--node-monitor-grace-period=5m",
		"--profiling=false",
	); err != nil {
		return nil, err
	}
	if err := c.Launch(ctx, "kube-scheduler", bins["kube-scheduler"],
		"--kubeconfig="+c.Kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(ports[4]),
		"--profiling=false",
	); err != nil {
		return nil, err
	}
	if err := c.Launch(ctx, "kwok", bins["kwok"],
		"--kubeconfig="+c.Kubeconfig,
		"--manage-single-node="+NodeName,
		// A node Lease, renewed apart from the status heartbeat: under a loaded kuttl run
		// the status heartbeat alone went unseen for 5 minutes and the node NotReady.
		"--node-lease-duration-seconds=40",
		"--cidr=10.244.0.1/24",
		"--node-ip=10.0.0.10",
	); err != nil {
		return nil, err
	}
	if err := createNode(ctx, c.Config); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "cluster ready; KUBECONFIG=%s\n", c.Kubeconfig)
	return c, nil
}

// Stop terminates every component, newest first, and removes a temporary Dir.
func (c *Cluster) Stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop()
	}
	c.procs = nil
	if c.ownDir {
		_ = os.RemoveAll(c.Dir)
	}
}

// LogPath is where the output of the named component goes.
func (c *Cluster) LogPath(name string) string {
	return filepath.Join(c.Dir, "logs", name+".log")
}

// waitForServingCert waits for the self-signed certificate kube-apiserver writes at
// startup; clients trust exactly that certificate.
func waitForServingCert(ctx context.Context, path string) ([]byte, error) {
	var ca []byte
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		b, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(b, []byte("END CERTIFICATE")) {
			return false, nil
		}
		ca = b
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for %s: %w", path, err)
	}
	return ca, nil
}

func writeKubeconfig(path, host string, ca []byte, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["surveyor"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: ca}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["surveyor"] = &clientcmdapi.Context{Cluster: "surveyor", AuthInfo: "admin", Namespace: "default"}
	cfg.CurrentContext = "surveyor"
	return clientcmd.WriteToFile(*cfg, path)
}

// waitReady polls /readyz until the API server answers ok, which includes its RBAC
// bootstrap roles.
func waitReady(ctx context.Context, cfg *rest.Config) error {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/readyz", nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// createNode registers the fake node and waits until kwok reports it Ready and the
// node lifecycle controller has lifted its not-ready taint, so pods can be scheduled.
func createNode(ctx context.Context, cfg *rest.Config) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        NodeName,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{
				"type": "kwok", "kubernetes.io/hostname": NodeName, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			},
		},
		Status: corev1.NodeStatus{
			Capacity:    nodeResources(),
			Allocatable: nodeResources(),
		},
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating node %s: %w", NodeName, err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, t := range n.Spec.Taints {
			if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
				return false, nil
			}
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("node %s never became Ready and untainted: %w", NodeName, err)
	}
	return nil
}

func nodeResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("1000"),
	}
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// handedOut are the ports freePorts returned in this process. A port is free only
// until its user binds it, and the kernel may offer a just-released port again: two
// calls in a row (a controller's metrics and health-probe ports) could get the same one.
// locks are the files that claim them from other processes (see claim).
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
	locks []*os.File
}{ports: map[int]bool{}}

// claim takes a port for this process against the others that use freePorts: make test
// runs the suites side by side, and one suite's kube-apiserver may bind its port seconds
// after freePorts released it, while another process is handed out ports. The claim is an
// exclusive lock on a file named after the port, held until the process exits (its
// components' ports stay in use as long), so the kernel drops it however the process ends.
// Where the lock cannot be had at all (no shared temporary directory), the port is taken
// unclaimed, as before. The caller holds handedOut.
func claim(port int) bool {
	dir := filepath.Join(os.TempDir(), "surveyor-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return true
	}
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return true
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close() // a lock file: nothing was written to it
		return !errors.Is(err, syscall.EWOULDBLOCK)
	}
	handedOut.locks = append(handedOut.locks, f)
	return true
}

// freePorts reserves n distinct loopback ports, never one it returned before nor one
// another process claimed, by listening on :0 at once, then releases them for the
// components to bind.
func freePorts(n int) ([]int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close() // the port is free again either way
		}
	}()
	for len(ports) < n {
		if len(ls) > n+1000 {
			return nil, errors.New("finding a free port: every port offered was handed out before")
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, errors.Join(errors.New("finding a free port"), err)
		}
		ls = append(ls, l) // held until the end, so the kernel offers another
		port := l.Addr().(*net.TCPAddr).Port
		if !handedOut.ports[port] && claim(port) {
			handedOut.ports[port] = true
			ports = append(ports, port)
		}
	}
	return ports, nil
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) {
	ports, err := freePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}
