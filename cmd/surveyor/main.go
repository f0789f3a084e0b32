// Command surveyor is the Surveyor controller manager: flags and wiring only.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/surveyor-dev/surveyor/internal/digestkey"
	"github.com/surveyor-dev/surveyor/internal/managers"
	"github.com/surveyor-dev/surveyor/internal/metricsauth"
	"github.com/surveyor-dev/surveyor/internal/proclimit"
	"github.com/surveyor-dev/surveyor/internal/yttworker"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/realizer"
)

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
	// below its capacity only makes the controller slower (docs/performance.md).
	flag.Float64Var(&qps, "kube-api-qps", 1000, "Sustained queries per second to the API server: per resource for the controller's own requests, and in all for those it makes as ServiceAccounts (stamping); a negative value disables the client-side limit.")
	flag.IntVar(&burst, "kube-api-burst", 2000, "Burst of queries to the API server, counted as -kube-api-qps is.")
	logOpts := zap.Options{}
	logOpts.BindFlags(flag.CommandLine)
	flag.Parse()

	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&logOpts)))
	klog.SetLogger(ctrl.Log) // client-go and leader election log through the same sink
	log := ctrl.Log.WithName("setup")
	if limit, from := proclimit.SetMemoryLimit(); limit > 0 {
		log.Info("soft memory limit", "bytes", limit, "from", from)
	}
	log.Info("processors", "GOMAXPROCS", proclimit.SetMaxProcs())

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
	return managers.Run(ctrl.SetupSignalHandler(), cfg, managers.Options{
		MaxConcurrentReconciles: concurrency,
		LeaderElection: managers.LeaderElection{
			Enabled: leaderElect, Namespace: leaderNamespace,
			LeaseDuration: *leaseDuration, RenewDeadline: *renewDeadline, RetryPeriod: *retryPeriod,
		},
		Metrics:                metricsauth.Options(metricsAddr, metricsCertDir, metricsCertName, metricsKeyName),
		HealthProbeBindAddress: probeAddr, PprofBindAddress: pprofAddr,
		Realizer: realizer.Options{
			DigestKeyNamespace: digestKeyNamespace, KStatusConditions: kstatusConditions,
			AdoptFieldManagers: splitList(adoptManagers), Shard: shard,
		},
	}, log)
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
