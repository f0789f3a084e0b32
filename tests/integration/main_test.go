// Package integration tests Surveyor against the real local control plane of
// hack/cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok.
package integration

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"bytes"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/surveyor-dev/surveyor/hack/cluster"
	cartov1alpha1 "github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/realizer"
)

var (
	// ctx lives as long as the test binary.
	ctx context.Context
	// k8sClient is an admin client with the carto.run and built-in kinds registered.
	k8sClient client.Client
	// testCluster is the running control plane, CRDs installed.
	testCluster *cluster.Cluster
	// controllerLog collects the in-process controller's log.
	controllerLog = &syncBuffer{}
)

// syncBuffer is a bytes.Buffer safe for the controller's concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var cancel context.CancelFunc
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()

	var err error
	testCluster, err = cluster.Start(ctx, cluster.Options{Log: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the local cluster:", err)
		return 1
	}
	defer testCluster.Stop()
	if err := cluster.Apply(ctx, testCluster.Config, "../../config/crd/bases", "../../config/rbac"); err != nil {
		fmt.Fprintln(os.Stderr, "installing CRDs and RBAC:", err)
		return 1
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := cartov1alpha1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if k8sClient, err = client.New(testCluster.Config, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, "creating a client:", err)
		return 1
	}
	if err := startController(scheme); err != nil {
		fmt.Fprintln(os.Stderr, "starting the controller:", err)
		return 1
	}
	return m.Run()
}

// startController runs the realizer in this process, authenticated as the
// controller's own ServiceAccount so that its generated RBAC is what is tested.
func startController(scheme *runtime.Scheme) error {
	kubeconfig, err := testCluster.ServiceAccountKubeconfig(ctx, "surveyor-system", "surveyor-controller")
	if err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 100, 200
	ctrl.SetLogger(zap.New(zap.WriteTo(controllerLog), zap.UseDevMode(true)))
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  realizer.CacheOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	if err := realizer.Setup(ctx, mgr); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "controller stopped:", err)
		}
	}()
	return nil
}

// eventually polls cond every 200ms until it returns true or timeout passes, then
// fails the test with the last observation cond reported.
func eventually(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, observed := cond()
		last = observed
		return ok, nil
	})
	if err != nil {
		t.Logf("controller log:\n%s", controllerLog.String())
		t.Fatalf("condition not met within %s; last observed: %s", timeout, last)
	}
}
