// Package integration tests Surveyor against the real local control plane of
// hack/cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok.
package integration

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/hack/cluster"
	cartov1alpha1 "github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

var (
	// ctx lives as long as the test binary.
	ctx context.Context
	// k8sClient is an admin client with the carto.run and built-in kinds registered.
	k8sClient client.Client
	// testCluster is the running control plane, CRDs installed.
	testCluster *cluster.Cluster
)

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
	if err := cluster.Apply(ctx, testCluster.Config, "../../config/crd/bases"); err != nil {
		fmt.Fprintln(os.Stderr, "installing CRDs:", err)
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
	return m.Run()
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
		t.Fatalf("condition not met within %s; last observed: %s", timeout, last)
	}
}
