package main

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/hack/cluster"
	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

const (
	// controllerName names the controller's process among the cluster's (its log is
	// <cluster dir>/logs/surveyor.log).
	controllerName = "surveyor"
	// stamperAccount is the ServiceAccount stamping runs as (the supply chain's
	// serviceAccountRef), bound to an ordinary Role in each namespace it stamps into.
	stamperAccount     = "bench-stamper"
	benchNamespace     = "bench"
	isolationNamespace = "bench-isolation"
	// chainLabel selects the bench supply chain; floor Workloads carry another value,
	// so even a running controller would not realize them.
	chainLabel = "bench.surveyor.dev/chain"
	// groupLabel puts each Workload in one of the rollout phase's groups, g0, g1, ...
	groupLabel = "bench.surveyor.dev/group"
)

//go:embed supplychain.yaml
var supplyChainYAML []byte

//go:embed supplychain-ytt.yaml
var supplyChainYTT []byte

// env is one benchmark run's cluster (internal/harness) and controller.
type env struct {
	*harness.Env
	opts *options
	// admin is a system:masters client (exempt from API Priority and Fairness, so its
	// requests never land in the bench FlowSchemas) with the -create-qps limit.
	admin client.Client

	logf func(string, ...any)

	// controller is the controller process, once startController launched it.
	controller *harness.Controller
}

// newEnv starts the cluster and installs the CRDs, the controller's RBAC, the bench
// namespace with the stamping ServiceAccount, and the counting FlowSchemas.
func newEnv(ctx context.Context, opts *options, dir string, logf func(string, ...any)) (_ *env, err error) {
	clusterLog := &prefixWriter{w: os.Stderr, prefix: "  cluster: ", quiet: !opts.verbose}
	if dir != "" {
		if dir, err = filepath.Abs(dir); err != nil {
			return nil, err
		}
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
	}
	h, err := harness.Start(ctx, harness.StartOptions{Dir: dir, Log: clusterLog})
	if err != nil {
		return nil, err
	}
	e := &env{Env: h, opts: opts, logf: logf}
	defer func() {
		if err != nil {
			h.Stop()
		}
	}()
	adminCfg := rest.CopyConfig(h.Cluster.Config)
	adminCfg.QPS, adminCfg.Burst = float32(opts.createQPS), 2*int(opts.createQPS)
	if e.admin, err = client.New(adminCfg, client.Options{Scheme: h.Scheme}); err != nil {
		return nil, err
	}
	if err := e.createStamper(ctx, benchNamespace); err != nil {
		return nil, err
	}
	if err := e.createFlowSchemas(ctx); err != nil {
		return nil, err
	}
	logf("cluster up (%s)", h.Cluster.Dir)
	return e, nil
}

// controlPlaneCPU reads the CPU time each control-plane process has used so far.
func (e *env) controlPlaneCPU() (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for _, name := range controlPlane {
		st, err := harness.ReadProc(e.Cluster.Pid(name))
		if err != nil {
			return nil, fmt.Errorf("reading %s's /proc: %w", name, err)
		}
		out[name] = st.CPU
	}
	return out, nil
}

// createStamper makes a namespace with the stamping ServiceAccount and an ordinary
// Role (ConfigMaps and Services only) bound to it, and waits until RBAC allows it.
func (e *env) createStamper(ctx context.Context, ns string) error {
	objs := append([]client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}},
		harness.Stamper(ns, stamperAccount, "configmaps", "services")...)
	for _, o := range objs {
		if err := e.admin.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %T %s/%s: %w", o, ns, o.GetName(), err)
		}
	}
	// The authorizer's informers lag the write; stamping before they catch up would
	// start the benchmark with denials.
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               serviceAccountUser(ns, stamperAccount),
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "patch", Resource: "services"},
		}}
		if err := e.admin.Create(ctx, sar); err != nil {
			return false, nil
		}
		return sar.Status.Allowed, nil
	})
}

func serviceAccountUser(ns, name string) string { return "system:serviceaccount:" + ns + ":" + name }

// controllerMetrics are the controller's own metric families the benchmark reads.
var controllerMetrics = []string{
	"controller_runtime_reconcile_total", "workqueue_adds_total", "rest_client_requests_total",
	"go_memstats_heap_inuse_bytes", "go_goroutines", "surveyor_events_failed_total",
}

// scrapeController reads the controller's metrics endpoint, which serves HTTPS with a
// self-signed certificate to callers the API server authenticates and authorizes: the
// benchmark presents the cluster admin's token.
func (e *env) scrapeController(ctx context.Context) (harness.Metrics, error) {
	return e.controller.Metrics(ctx, controllerMetrics...)
}

// startController launches bin/surveyor as its ServiceAccount with the benchmark's
// client settings and its metrics and pprof endpoints on loopback, and waits until it
// is ready.
func (e *env) startController(ctx context.Context) (err error) {
	e.controller, err = e.launch(ctx, controllerName)
	return err
}

// launch starts a controller process named name with the benchmark's flags and extra
// ones, and waits until it is ready.
func (e *env) launch(ctx context.Context, name string, extra ...string) (*harness.Controller, error) {
	c, err := e.LaunchController(ctx, harness.Process{
		Name: name, Bin: e.opts.controller, Env: strings.Fields(e.opts.controllerEnv),
		NoLeaderElection: !e.opts.leaderElect, Metrics: true, Pprof: true,
		Args: append(append([]string{
			"--kube-api-qps=" + strconv.FormatFloat(e.opts.qps, 'f', -1, 64),
			"--kube-api-burst=" + strconv.Itoa(e.opts.burst),
			"--max-concurrent-reconciles=" + strconv.Itoa(e.opts.concurrency),
		}, strings.Fields(e.opts.controllerArgs)...), extra...),
	})
	if err != nil {
		return nil, err
	}
	return c, c.WaitReady(ctx, time.Minute)
}

// applySupplyChain installs the bench templates and supply chain, waits until the
// controller reports the supply chain Ready, which also proves the controller (and, with
// leader election, its lease) is up, and then tracks the n Workloads to come until stop.
func (e *env) applySupplyChain(ctx context.Context, n int) (t *tracker, stop func(), err error) {
	path := filepath.Join(e.Cluster.Dir, "bench-supplychain.yaml")
	chain := supplyChainYAML
	if e.opts.ytt {
		chain = supplyChainYTT
	}
	if err := os.WriteFile(path, chain, 0o644); err != nil {
		return nil, nil, err
	}
	if err := cluster.Apply(ctx, e.Cluster.Config, path); err != nil {
		return nil, nil, fmt.Errorf("applying the bench supply chain: %w", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		sc := &v1alpha1.ClusterSupplyChain{}
		if err := e.admin.Get(ctx, client.ObjectKey{Name: "bench"}, sc); err != nil {
			return false, nil
		}
		ready := meta.FindStatusCondition(sc.Status.Conditions, v1alpha1.ConditionReady)
		return ready != nil && ready.Status == metav1.ConditionTrue && sc.Status.ObservedGeneration == sc.Generation, nil
	})
	if err != nil {
		return nil, nil, err
	}
	t = newTracker(n)
	if stop, err = t.run(ctx, e.Env, benchNamespace); err != nil {
		return nil, nil, err
	}
	return t, stop, nil
}

// waitQuiet waits until the API server serves fewer than quietRate requests per second
// (every client; the control plane's own heartbeats are a few per second), so that the
// measured run starts on an idle server; it gives up after 2 minutes.
func (e *env) waitQuiet(ctx context.Context) error {
	const quietRate, poll = 15.0, 2 * time.Second
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	prev, err := e.scrapeAPIServer(ctx)
	if err != nil {
		return err
	}
	quiet := 0
	var rate float64
	for quiet < 2 {
		select {
		case <-time.After(poll):
		case <-ctx.Done():
			return fmt.Errorf("the API server never went quiet (last %.0f requests/s): %w", rate, ctx.Err())
		}
		cur, err := e.scrapeAPIServer(ctx)
		if err != nil {
			return err
		}
		rate = (cur.Sum("apiserver_request_total", nil) - prev.Sum("apiserver_request_total", nil)) / poll.Seconds()
		if rate < quietRate {
			quiet++
		} else {
			quiet = 0
		}
		prev = cur
	}
	e.logf("API server quiet (%.1f requests/s)", rate)
	return nil
}

// prefixWriter writes each line with a prefix, or nothing when quiet.
type prefixWriter struct {
	w      *os.File
	prefix string
	quiet  bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	if p.quiet {
		return len(b), nil
	}
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line != "" {
			fmt.Fprint(p.w, p.prefix+line)
		}
	}
	return len(b), nil
}
