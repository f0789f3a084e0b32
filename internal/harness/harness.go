package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	apiruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/surveyor-dev/surveyor/hack/cluster"
	cartov1alpha1 "github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/realizer"
)

// Controller identity: the ServiceAccount config/rbac binds the manager's role to.
const (
	ControllerNamespace = "surveyor-system"
	ControllerAccount   = "surveyor-controller"
)

// Env is a running cluster with Surveyor's CRDs and RBAC.
type Env struct {
	Cluster *cluster.Cluster
	// Client is an admin client with the carto.run and built-in kinds registered.
	Client client.Client
	Scheme *apiruntime.Scheme
	// Log collects the in-process controller's log.
	Log *SyncBuffer

	// adminHTTP reads kube-apiserver's /metrics as the cluster admin.
	adminHTTP *http.Client

	// controllerBin is cmd/surveyor built for this run (Options.BuildController).
	controllerBin string
	// reconciles counts the in-process controller's reconciles per object.
	reconciles *reconcileCounts
}

// Root is the repository root, found from this file's location.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// StartOptions say where Start keeps the cluster's files and its progress lines.
type StartOptions struct {
	// Dir holds the cluster's data, keys, logs and kubeconfig; empty means a temporary
	// directory that Stop removes.
	Dir string
	// Log receives the cluster's progress lines; nil means standard error.
	Log io.Writer
}

// Start brings up the cluster and installs the CRDs and the controller's RBAC. The test
// suites (Main) and the benchmark (hack/bench) both start their cluster with it.
func Start(ctx context.Context, opts StartOptions) (_ *Env, err error) {
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	c, err := cluster.Start(ctx, cluster.Options{
		Dir:     opts.Dir,
		Log:     opts.Log,
		Install: []string{filepath.Join(Root(), "config/crd/bases"), filepath.Join(Root(), "config/rbac")},
	})
	if err != nil {
		return nil, fmt.Errorf("starting the local cluster: %w", err)
	}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	env := &Env{Cluster: c, Log: &SyncBuffer{}, Scheme: apiruntime.NewScheme()}
	if err := clientgoscheme.AddToScheme(env.Scheme); err != nil {
		return nil, err
	}
	if err := cartov1alpha1.AddToScheme(env.Scheme); err != nil {
		return nil, err
	}
	if env.Client, err = client.New(c.Config, client.Options{Scheme: env.Scheme}); err != nil {
		return nil, err
	}
	if env.adminHTTP, err = rest.HTTPClientFor(c.Config); err != nil {
		return nil, err
	}
	return env, nil
}

// Stop stops the cluster and everything it launched.
func (e *Env) Stop() { e.Cluster.Stop() }

// ControllerConfig is a REST config that authenticates as the controller's own
// ServiceAccount (with a freshly requested token), so that a client made from it has
// exactly the controller's generated RBAC.
func (e *Env) ControllerConfig(ctx context.Context) (*rest.Config, error) {
	kubeconfig, err := e.Cluster.ServiceAccountKubeconfig(ctx, ControllerNamespace, ControllerAccount)
	if err != nil {
		return nil, err
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}

// StartController runs the realizer in this process until ctx ends, authenticated as
// the controller's own ServiceAccount so that its generated RBAC is what is tested.
func (e *Env) StartController(ctx context.Context) error {
	cfg, err := e.ControllerConfig(ctx)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 100, 200
	e.reconciles = &reconcileCounts{}
	ctrl.SetLogger(countReconciles(zap.New(zap.WriteTo(e.Log), zap.UseDevMode(true)), e.reconciles))
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 e.Scheme,
		Cache:                  realizer.CacheOptions(nil),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	if err := realizer.Setup(ctx, mgr, realizer.Options{DigestKeyNamespace: ControllerNamespace}); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "controller stopped:", err)
		}
	}()
	return nil
}

// buildController compiles cmd/surveyor into dir and returns the binary's path, for
// suites that run the controller as a separate process (to kill or restart it).
func buildController(dir string) (string, error) {
	bin := filepath.Join(dir, "surveyor")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/surveyor")
	cmd.Dir = Root()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the controller: %w: %s", err, out)
	}
	return bin, nil
}

// SyncBuffer is a bytes.Buffer safe for the controller's concurrent writers.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p to the buffer, as bytes.Buffer.Write does, under the lock.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// CreateAll creates the objects with the admin client and deletes the cluster-scoped
// ones when the test ends (namespaced ones go with their test's namespace).
func (e *Env) CreateAll(ctx context.Context, t testing.TB, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := e.Client.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
		if o.GetNamespace() == "" {
			t.Cleanup(func() { _ = e.Client.Delete(ctx, o) })
		}
	}
}

// RawTemplate is a template object from its JSON, for building templates in Go.
func RawTemplate(t testing.TB, j string) *cartov1alpha1.TemplateObject {
	t.Helper()
	var obj cartov1alpha1.TemplateObject
	if err := obj.UnmarshalJSON([]byte(j)); err != nil {
		t.Fatal(err)
	}
	return &obj
}
