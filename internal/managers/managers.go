package managers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/realizer"
)

// The leader-election leases; the realizer's permissions are in pkg/realizer.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=surveyor-system,resources=leases,verbs=get;list;watch;create;update;patch;delete

// ClusterLease is the leader-election lease of an unsharded controller, and of the
// cluster-wide reconcilers of a sharded one.
const ClusterLease = "surveyor.carto.run"

// shardLease is a shard's own lease, named after its selector.
func shardLease(shard labels.Selector) string {
	sum := sha256.Sum256([]byte(shard.String()))
	return ClusterLease + "-shard-" + hex.EncodeToString(sum[:])[:10]
}

// LeaderElection is how a manager holds its lease.
type LeaderElection struct {
	// Enabled holds a lease, so that only one replica reconciles at a time.
	Enabled bool
	// Namespace is the lease's namespace; empty means the pod's.
	Namespace string
	// LeaseDuration, RenewDeadline and RetryPeriod are controller-runtime's timings of
	// the lease.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Options are the settings of the controller's managers.
type Options struct {
	// MaxConcurrentReconciles is how many reconciles each controller runs at once.
	MaxConcurrentReconciles int
	// LeaderElection is how the managers hold their leases.
	LeaderElection LeaderElection
	// Metrics is the metrics endpoint, served by one manager of the process.
	Metrics metricsserver.Options
	// HealthProbeBindAddress and PprofBindAddress are the addresses of /healthz and
	// /readyz, and of net/http/pprof (empty disables it).
	HealthProbeBindAddress, PprofBindAddress string
	// Realizer are the realizer's settings; its Shard, when not nil, makes the process a
	// shard's replica.
	Realizer realizer.Options
}

// ErrShardNeedsLeaderElection is why a shard cannot run without leader election: every
// shard's replica would run the cluster-wide reconcilers.
var ErrShardNeedsLeaderElection = errors.New("a shard needs leader election")

// Run makes the managers opts describe, with the realizer set up in them, and runs them
// until ctx ends or one of them fails.
func Run(ctx context.Context, cfg *rest.Config, opts Options, log logr.Logger) error {
	shard := opts.Realizer.Shard
	if shard != nil && !opts.LeaderElection.Enabled {
		return ErrShardNeedsLeaderElection
	}
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	mgrOpts := opts.withLease(scheme, ClusterLease)
	if shard != nil {
		mgrOpts.LeaderElectionID = shardLease(shard)
	}
	mgrOpts.Cache = realizer.CacheOptions(shard)
	mgrOpts.Metrics = opts.Metrics
	mgrOpts.HealthProbeBindAddress, mgrOpts.PprofBindAddress = opts.HealthProbeBindAddress, opts.PprofBindAddress
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	if err := realizer.Setup(ctx, mgr, opts.Realizer); err != nil {
		return fmt.Errorf("setting up the realizer: %w", err)
	}
	log.Info("starting manager", "leaderElection", opts.LeaderElection.Enabled, "lease", mgrOpts.LeaderElectionID,
		"shard", shardString(shard), "qps", cfg.QPS, "burst", cfg.Burst)
	if shard == nil {
		return mgr.Start(ctx)
	}
	gate, err := clusterWideGate(cfg, opts.withLease(scheme, ClusterLease), log)
	if err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return mgr.Start(ctx) })
	g.Go(func() error { return gate.Start(ctx) })
	return g.Wait()
}

// clusterWideGate is the manager of a shard's replica that stands for the cluster-wide
// lease: whichever replica holds it reconciles templates and blueprints (their rollouts
// span every shard's owners). The gate holds the lease with nothing to cache; the manager
// of the cluster-wide reconcilers, whose cache holds every owner, is made once the lease
// is won, so that the replicas waiting for it hold nothing for it.
func clusterWideGate(cfg *rest.Config, gateOpts ctrl.Options, log logr.Logger) (manager.Manager, error) {
	gateOpts.Metrics.BindAddress = "0" // one endpoint per process: the shard manager's
	gate, err := ctrl.NewManager(cfg, gateOpts)
	if err != nil {
		return nil, fmt.Errorf("creating the cluster-wide lease's manager: %w", err)
	}
	err = gate.Add(manager.RunnableFunc(func(ctx context.Context) error { // run while leading
		clusterOpts := ctrl.Options{Scheme: gateOpts.Scheme, Cache: realizer.CacheOptions(nil),
			Controller: gateOpts.Controller, Metrics: gateOpts.Metrics}
		cluster, err := ctrl.NewManager(cfg, clusterOpts)
		if err != nil {
			return fmt.Errorf("creating the cluster-wide manager: %w", err)
		}
		if err := realizer.SetupClusterWide(ctx, cluster); err != nil {
			return fmt.Errorf("setting up the cluster-wide reconcilers: %w", err)
		}
		log.Info("reconciling templates and blueprints", "lease", ClusterLease)
		return cluster.Start(ctx)
	}))
	if err != nil {
		return nil, err
	}
	return gate, nil
}

// withLease are the options every manager of the process shares, holding the lease id.
func (o Options) withLease(scheme *runtime.Scheme, id string) ctrl.Options {
	le := o.LeaderElection
	return ctrl.Options{
		Scheme:                  scheme,
		Controller:              config.Controller{MaxConcurrentReconciles: o.MaxConcurrentReconciles},
		LeaderElection:          le.Enabled,
		LeaderElectionID:        id,
		LeaderElectionNamespace: le.Namespace,
		LeaseDuration:           &le.LeaseDuration,
		RenewDeadline:           &le.RenewDeadline,
		RetryPeriod:             &le.RetryPeriod,
		// Stepping down ends the process, so a new leader never overlaps a
		// reconcile still running in the old one.
		LeaderElectionReleaseOnCancel: true,
	}
}

// newScheme is the scheme of the controller's managers: client-go's kinds and carto.run's.
func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}

// shardString is the shard's selector as logged, "" for none.
func shardString(shard labels.Selector) string {
	if shard == nil {
		return ""
	}
	return shard.String()
}
