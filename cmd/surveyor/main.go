// Command surveyor is the Surveyor controller manager: flags and wiring only.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/surveyor-dev/surveyor/internal/digestkey"
	"github.com/surveyor-dev/surveyor/internal/metricsauth"
	"github.com/surveyor-dev/surveyor/internal/yttworker"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/realizer"
)

// The leader-election lease; the realizer's permissions are in pkg/realizer.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=surveyor-system,resources=leases,verbs=get;list;watch;create;update;patch;delete

// The metrics endpoint asks the API server who a scraper is and whether it may get
// /metrics (internal/metricsauth; make manifests reads markers in cmd and pkg only).
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

func main() {
	// Before anything else: this binary is also its own ytt worker (internal/yttworker).
	yttworker.RunIfWorker()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "surveyor:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		metricsAddr, probeAddr, pprofAddr, leaderNamespace string
		digestKeyNamespace, adoptManagers, shardSelector   string
		metricsCertDir, metricsCertName, metricsKeyName    string
		leaderElect, kstatusConditions                     bool
		qps                                                float64
		burst, concurrency                                 int
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8443", "Address the Prometheus metrics endpoint binds to, served over HTTPS to callers the API server authenticates and authorizes (get on the /metrics non-resource URL); \"0\" disables it.")
	flag.StringVar(&metricsCertDir, "metrics-cert-dir", "", "Directory of the metrics endpoint's serving certificate and key (reloaded when they change); without them the endpoint serves a self-signed certificate made at start.")
	flag.StringVar(&metricsCertName, "metrics-cert-name", "tls.crt", "File name of the metrics serving certificate in -metrics-cert-dir.")
	flag.StringVar(&metricsKeyName, "metrics-key-name", "tls.key", "File name of the metrics serving key in -metrics-cert-dir.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz endpoints bind to.")
	flag.StringVar(&pprofAddr, "pprof-bind-address", "", "Address of the net/http/pprof endpoint; empty disables it.")
	flag.IntVar(&concurrency, "max-concurrent-reconciles", 8, "Reconciles each controller runs at once; reconciles wait on the API server, not the CPU.")
	flag.BoolVar(&leaderElect, "leader-elect", false, "Hold a leader-election lease so that only one replica reconciles at a time.")
	flag.StringVar(&leaderNamespace, "leader-election-namespace", "", "Namespace of the leader-election lease (default: the pod's namespace).")
	flag.BoolVar(&kstatusConditions, "kstatus-conditions", false, "Also give Workloads and Deliverables kstatus's Stalled (while Ready is False for a failure only a change can fix) and Reconciling (while Ready is otherwise not True), so that tools waiting with kstatus fail fast; off by default, since Cartographer's condition lists are exact.")
	flag.StringVar(&digestKeyNamespace, "digest-key-namespace", digestkey.DefaultNamespace, "Namespace of the Secret "+digestkey.Secret+", which holds the key of the digests of Secret-derived outputs (created when missing).")
	flag.StringVar(&adoptManagers, "adopt-field-managers", realizer.CartographerFieldManager, "Comma-separated field managers whose fields Surveyor takes over, in one write, on a stamped object it finds already as its template stamps it (moving from Cartographer in place); empty adopts none.")
	flag.StringVar(&shardSelector, "watch-label-selector", "", "Realize only the Workloads, Deliverables and Runnables this label selector on "+v1alpha1.LabelShardKey+" selects (one shard, e.g. \""+v1alpha1.LabelShardKey+" in (shard1)\"; \"!"+v1alpha1.LabelShardKey+"\" for the unlabelled), and the objects stamped for them. Each shard holds a leader-election lease of its own; templates and blueprints, with their rollouts, are reconciled by the one replica of all shards holding the cluster-wide lease.")
	leaseDuration := flag.Duration("leader-elect-lease-duration", 15*time.Second, "How long a standby waits after the last renewal before taking the lease over.")
	renewDeadline := flag.Duration("leader-elect-renew-deadline", 10*time.Second, "How long the leader keeps trying to renew before it steps down (and exits); raise it to ride out longer API server outages.")
	retryPeriod := flag.Duration("leader-elect-retry-period", 2*time.Second, "How often leader-election clients retry.")
	// The API server protects itself with priority and fairness; a client-side limit
	// below its capacity only makes the controller slower (README, Performance).
	flag.Float64Var(&qps, "kube-api-qps", 1000, "Sustained queries per second to the API server: per resource for the controller's own requests, and in all for those it makes as ServiceAccounts (stamping); a negative value disables the client-side limit.")
	flag.IntVar(&burst, "kube-api-burst", 2000, "Burst of queries to the API server, counted as -kube-api-qps is.")
	logOpts := zap.Options{}
	logOpts.BindFlags(flag.CommandLine)
	flag.Parse()

	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&logOpts)))
	klog.SetLogger(ctrl.Log) // client-go and leader election log through the same sink
	log := ctrl.Log.WithName("setup")
	if limit, from := setMemoryLimit(); limit > 0 {
		log.Info("soft memory limit", "bytes", limit, "from", from)
	}
	log.Info("processors", "GOMAXPROCS", setMaxProcs())

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = float32(qps), burst

	shard, err := realizer.ParseShard(shardSelector)
	if err != nil {
		return fmt.Errorf("-watch-label-selector: %w", err)
	}
	if shard != nil && !leaderElect {
		// Without it every shard's replica would run the cluster-wide reconcilers.
		return errors.New("-watch-label-selector needs -leader-elect")
	}
	leaderElection := func(id string) ctrl.Options {
		return ctrl.Options{
			Scheme:                  scheme,
			Controller:              config.Controller{MaxConcurrentReconciles: concurrency},
			LeaderElection:          leaderElect,
			LeaderElectionID:        id,
			LeaderElectionNamespace: leaderNamespace,
			LeaseDuration:           leaseDuration,
			RenewDeadline:           renewDeadline,
			RetryPeriod:             retryPeriod,
			// Stepping down ends the process, so a new leader never overlaps a
			// reconcile still running in the old one.
			LeaderElectionReleaseOnCancel: true,
		}
	}
	opts := leaderElection(clusterLease)
	if shard != nil {
		opts.LeaderElectionID = shardLease(shard)
	}
	opts.Cache = realizer.CacheOptions(shard)
	opts.Metrics = metricsauth.Options(metricsAddr, metricsCertDir, metricsCertName, metricsKeyName)
	opts.HealthProbeBindAddress, opts.PprofBindAddress = probeAddr, pprofAddr
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}

	ctx := ctrl.SetupSignalHandler()
	err = realizer.Setup(ctx, mgr, realizer.Options{
		DigestKeyNamespace: digestKeyNamespace, KStatusConditions: kstatusConditions,
		AdoptFieldManagers: splitList(adoptManagers), Shard: shard,
	})
	if err != nil {
		return fmt.Errorf("setting up the realizer: %w", err)
	}
	log.Info("starting manager", "leaderElection", leaderElect, "lease", opts.LeaderElectionID, "shard", shardSelector, "qps", qps, "burst", burst)
	if shard == nil {
		return mgr.Start(ctx)
	}
	// A shard's replica also stands for the cluster-wide lease: whichever holds it
	// reconciles templates and blueprints (their rollouts span every shard's owners). The
	// lease is held by a manager of its own with nothing to cache; the manager of the
	// cluster-wide reconcilers, whose cache holds every owner, is made once it is won, so
	// that the replicas waiting for it hold nothing for it.
	gateOpts := leaderElection(clusterLease)
	gateOpts.Metrics.BindAddress = "0" // one endpoint per process: the shard manager's
	gate, err := ctrl.NewManager(cfg, gateOpts)
	if err != nil {
		return fmt.Errorf("creating the cluster-wide lease's manager: %w", err)
	}
	err = gate.Add(manager.RunnableFunc(func(ctx context.Context) error { // run while leading
		clusterOpts := ctrl.Options{Scheme: scheme, Cache: realizer.CacheOptions(nil),
			Controller: gateOpts.Controller, Metrics: gateOpts.Metrics}
		cluster, err := ctrl.NewManager(cfg, clusterOpts)
		if err != nil {
			return fmt.Errorf("creating the cluster-wide manager: %w", err)
		}
		if err := realizer.SetupClusterWide(ctx, cluster); err != nil {
			return fmt.Errorf("setting up the cluster-wide reconcilers: %w", err)
		}
		log.Info("reconciling templates and blueprints", "lease", clusterLease)
		return cluster.Start(ctx)
	}))
	if err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return mgr.Start(ctx) })
	g.Go(func() error { return gate.Start(ctx) })
	return g.Wait()
}

// clusterLease is the leader-election lease of an unsharded controller, and of the
// cluster-wide reconcilers of a sharded one.
const clusterLease = "surveyor.carto.run"

// shardLease is a shard's own lease, named after its selector.
func shardLease(shard labels.Selector) string {
	sum := sha256.Sum256([]byte(shard.String()))
	return clusterLease + "-shard-" + hex.EncodeToString(sum[:])[:10]
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// setMaxProcs runs the controller on one processor unless GOMAXPROCS says otherwise.
// It spends most of its time waiting on the API server, and with two processors the Go
// scheduler's parking and waking of threads (futex, findRunnable) cost more CPU for no
// faster convergence (README, "What changed (issue 15)", has the make bench figures).
func setMaxProcs() int {
	if os.Getenv("GOMAXPROCS") == "" {
		goruntime.GOMAXPROCS(1)
	}
	return goruntime.GOMAXPROCS(0)
}

// setMemoryLimit gives the Go runtime a soft memory limit, so that the garbage collector
// works harder as the process nears its container's limit instead of being killed at it.
// GOMEMLIMIT, when set (config/manager sets it from the container's limits.memory), is
// the runtime's own; otherwise the limit is 90% of the memory limit of the process's
// cgroup, when it has one (make run inside a container, a Deployment without the variable).
func setMemoryLimit() (int64, string) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1), "GOMEMLIMIT"
	}
	file, limit := cgroupMemoryLimit()
	if limit <= 0 {
		return 0, ""
	}
	limit = limit / 10 * 9
	debug.SetMemoryLimit(limit)
	return limit, file
}

// cgroupMemoryLimit reads the memory limit of the process's cgroup (v2, else v1), and
// the file it read it from; 0 when there is none.
func cgroupMemoryLimit() (string, int64) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", 0
	}
	var files []string
	for _, line := range strings.Split(strings.TrimSpace(string(own)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		switch {
		case len(parts) != 3:
		case parts[0] == "0" && parts[1] == "":
			files = append(files, filepath.Join("/sys/fs/cgroup", parts[2], "memory.max"))
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			files = append(files, filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes"))
		}
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		limit, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || limit <= 0 || limit >= 1<<60 { // "max", or cgroup v1's "unlimited"
			continue
		}
		return file, limit
	}
	return "", 0
}
