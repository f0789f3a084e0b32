package realizer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/surveyor-dev/surveyor/internal/digestkey"
	"github.com/surveyor-dev/surveyor/internal/events"
	"github.com/surveyor-dev/surveyor/internal/impersonate"
	"github.com/surveyor-dev/surveyor/internal/transform"
	"github.com/surveyor-dev/surveyor/internal/watch"
	"github.com/surveyor-dev/surveyor/internal/yttworker"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/render"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

// The manager's own permissions; `make manifests` turns these markers into config/rbac.
// Stamped objects are written and pruned by impersonating each Workload's
// ServiceAccount, so the manager only reads them (any kind a template may stamp,
// hence the wildcard, always through label-filtered informers), reads carto.run
// kinds, writes their status, impersonates service accounts, records events and
// deletes owners whose ttlSecondsAfterFinished has passed; it creates and deletes the
// revisions of blueprints with a rolloutStrategy.
// +kubebuilder:rbac:groups=*,resources=*,verbs=get;list;watch
// +kubebuilder:rbac:groups=carto.run,resources=clustersupplychains/status;clusterdeliveries/status;clustersourcetemplates/status;clusterimagetemplates/status;clusterconfigtemplates/status;clusterdeploymenttemplates/status;clustertemplates/status;workloads/status;deliverables/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=carto.run,resources=workloads;deliverables,verbs=delete
// +kubebuilder:rbac:groups=carto.run,resources=blueprintrevisions,verbs=create;delete
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=impersonate
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch

// CacheOptions restricts the informers of every kind but Surveyor's own to objects
// carrying the carto.run/resource-name label, which every stamped object has, and keeps
// of those whole only the objects a Workload or Deliverable controls. A shard (nil for
// none) limits the owners (Workloads, Deliverables, Runnables) to those it selects, and
// the stamped objects to those of its owners (LabelShardKey).
func CacheOptions(shard labels.Selector) cache.Options {
	// Surveyor's own kinds are cached whole; every other kind's informer (a stamped
	// kind's) keeps whole only the objects an owner controls (transform.Stamped).
	everything := cache.ByObject{Label: labels.Everything(), Transform: transform.Intern}
	owners := everything
	if shard != nil {
		owners.Label = shard
	}
	byObject := map[client.Object]cache.ByObject{
		&v1alpha1.BlueprintRevision{}: everything,
		watch.CRDObject():             everything, // metadata only: a deleted CRD drops its kinds' informers
	}
	for _, k := range v1alpha1.OwnerKinds {
		byObject[k.New()], byObject[k.Blueprint.New()] = owners, everything
	}
	for _, k := range v1alpha1.TemplateKinds {
		byObject[k.New()] = everything
	}
	byObject[v1alpha1.Runnables.New()], byObject[v1alpha1.RunTemplates.New()] = owners, everything
	// No code reads managedFields (the no-write check compares fields, apply forces
	// ownership), and they are most of a small object's size: they stay out of memory.
	// Strings most objects hold alike are shared (intern.go). A labelled object no owner
	// controls is kept as a stub (foreign.go).
	return cache.Options{
		DefaultLabelSelector: labelled(v1alpha1.LabelResourceName, shard), ByObject: byObject,
		DefaultTransform: transform.Stamped,
	}
}

// labelled selects the objects carrying the label key, of the shard (nil for any).
func labelled(key string, shard labels.Selector) labels.Selector {
	has, err := labels.NewRequirement(key, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant, valid key
	}
	sel := labels.NewSelector().Add(*has)
	if shard != nil {
		reqs, _ := shard.Requirements()
		sel = sel.Add(reqs...)
	}
	return sel
}

// ParseShard parses a --watch-label-selector: a selector on LabelShardKey alone, since
// that is the one label stamped objects carry from their owner (nil for an empty one).
func ParseShard(s string) (labels.Selector, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	sel, err := labels.Parse(s)
	if err != nil {
		return nil, err
	}
	reqs, selectable := sel.Requirements()
	if !selectable || len(reqs) == 0 {
		return nil, fmt.Errorf("selector %q selects nothing", s)
	}
	for _, r := range reqs {
		if r.Key() != v1alpha1.LabelShardKey {
			return nil, fmt.Errorf("selector %q selects on %s: a shard is selected on %s alone, the one label objects stamped for an owner carry from it", s, r.Key(), v1alpha1.LabelShardKey)
		}
	}
	return sel, nil
}

// registerMetrics exposes the expression caches' compile counters, which stay flat in
// steady state: every expression and path is compiled once and cached; what CEL evaluations
// cost; the ytt workers' evaluations; and the event recorder's counts.
var registerMetrics = sync.OnceFunc(func() {
	collectors := append(events.Metrics(), yttworker.Metrics()...)
	for _, c := range []struct {
		name, help string
		count      func() uint64
	}{
		{"surveyor_cel_evaluations_total", "CEL evaluations run (health rules, condition rules, selectors), not counting those served again for the same object version.",
			func() uint64 { n, _, _ := expr.CELEvaluations(); return n }},
		{"surveyor_cel_cost_total", "Cost charged for CEL evaluations, in cel-go's cost units (the per-call limit and an object's budget are in the same units).",
			func() uint64 { _, c, _ := expr.CELEvaluations(); return c }},
		{"surveyor_cel_evaluations_stopped_total", "CEL evaluations stopped at a limit (cost, time, or a call that would allocate too much); each shows on its owner as a condition naming the limit.",
			func() uint64 { _, _, s := expr.CELEvaluations(); return s }},
		{"surveyor_cel_compilations_total", "CEL programs compiled; flat in steady state because programs are cached per expression.", expr.CELCompileCount},
		{"surveyor_jsonpath_parses_total", "Jsonpaths parsed; flat in steady state because parses are cached per path.", expr.PathParseCount},
	} {
		collectors = append(collectors, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: c.name, Help: c.help},
			func() float64 { return float64(c.count()) }))
	}
	metrics.Registry.MustRegister(collectors...)
})

// Options are the realizer's settings.
type Options struct {
	// DigestKeyNamespace is the namespace of the Secret digestkey.Secret, which holds the key
	// of the digests of Secret-derived outputs; empty means digestkey.DefaultNamespace.
	DigestKeyNamespace string
	// YTT evaluates the templates written in ytt; nil means a pool of worker processes of
	// this binary (internal/yttworker), whose main must call yttworker.RunIfWorker first.
	YTT render.YTT
	// KStatusConditions adds kstatus's Stalled and Reconciling to owners (DESIGN §13).
	KStatusConditions bool
	// AdoptFieldManagers are the field managers (Update operations) whose fields on a
	// stamped object Surveyor takes over when it finds the object already as stamped
	// (DESIGN §13, "From Cartographer, in place").
	AdoptFieldManagers []string
	// Shard, when not nil, is the one shard of owners the manager realizes (its cache is
	// CacheOptions(Shard)); the cluster-wide reconcilers (templates, blueprints and their
	// rollouts) are then left to another manager, under a lease all shards share
	// (SetupClusterWide).
	Shard labels.Selector
}

// Setup registers the realizer's indexes, reconcilers and metrics with the manager. It reads
// the digest key first (creating it on the first start), and fails without it: a digest of a
// Secret-derived value made without the key could be brute-forced.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	registerMetrics()
	// One per process: a second manager in the same process (tests) keeps the first's.
	if err := metrics.Registry.Register(newStatusCollector(mgr.GetCache())); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
		return err
	}
	namespace := opts.DigestKeyNamespace
	if namespace == "" {
		namespace = digestkey.DefaultNamespace
	}
	key, err := digestkey.Load(ctx, mgr.GetAPIReader(), mgr.GetClient(), namespace)
	if err != nil {
		return err
	}
	if err := SetupIndexes(ctx, mgr); err != nil {
		return err
	}
	recorder, err := newRecorder(mgr)
	if err != nil {
		return err
	}
	if opts.Shard == nil {
		if err := setupClusterWide(mgr, recorder); err != nil {
			return err
		}
	}
	imp := impersonate.New(mgr.GetConfig(), mgr.GetScheme(), mgr.GetRESTMapper(), impersonate.MaxClients)
	evaluator, err := yttEvaluator(mgr, opts.YTT)
	if err != nil {
		return err
	}
	for _, kind := range v1alpha1.OwnerKinds {
		status, err := newStatusWriter(mgr, &kind.KindInfo)
		if err != nil {
			return err
		}
		or := newOwnerReconciler(mgr, kind, status, recorder, imp, stamp.KeyedDigest(key))
		or.ytt = evaluator
		or.kstatus = opts.KStatusConditions
		or.adopt = sets.New(opts.AdoptFieldManagers...)
		if err := or.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	// Runnables (DESIGN §11) stamp through the same impersonator: one rate limit for all.
	return setupRunnables(ctx, mgr, recorder, imp, opts.Shard)
}

// SetupClusterWide registers, for a sharded controller, what all shards share: the
// reconcilers of templates and blueprints, which run the blueprints' rollouts over the
// owners of every shard. Its manager caches every owner and no stamped object, and holds a
// leader-election lease of its own, the one an unsharded controller holds (DESIGN §13).
func SetupClusterWide(ctx context.Context, mgr ctrl.Manager) error {
	if err := SetupIndexes(ctx, mgr); err != nil {
		return err
	}
	recorder, err := newRecorder(mgr)
	if err != nil {
		return err
	}
	return setupClusterWide(mgr, recorder)
}

func setupClusterWide(mgr ctrl.Manager, recorder record.EventRecorder) error {
	// Every status, and the owners' rollout records, through the one statusWriter.
	for _, kind := range v1alpha1.TemplateKinds {
		status, err := newStatusWriter(mgr, &kind.KindInfo)
		if err != nil {
			return err
		}
		if err := (&TemplateReconciler{client: mgr.GetClient(), kind: kind, status: status}).SetupWithManager(mgr); err != nil {
			return err
		}
	}
	for _, kind := range v1alpha1.OwnerKinds {
		status, err := newStatusWriter(mgr, &kind.Blueprint.KindInfo)
		if err != nil {
			return err
		}
		records, err := newStatusWriter(mgr, &kind.KindInfo)
		if err != nil {
			return err
		}
		br := &BlueprintReconciler{client: mgr.GetClient(), kind: kind.Blueprint, status: status, records: records, recorder: recorder, now: metav1.Now}
		if err := br.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	return nil
}

// newRecorder is the manager's event recorder, started with it.
func newRecorder(mgr ctrl.Manager) (*events.Recorder, error) {
	recorder, err := events.NewRecorder(mgr.GetConfig(), mgr.GetScheme(), FieldManager)
	if err != nil {
		return nil, err
	}
	return recorder, mgr.Add(recorder)
}

// yttEvaluator is given, or else a pool of ytt worker processes that stop with the manager.
func yttEvaluator(mgr ctrl.Manager, given render.YTT) (render.YTT, error) {
	if given != nil {
		return given, nil
	}
	pool, err := yttworker.New(yttworker.Options{})
	if err != nil {
		return nil, err
	}
	return pool, mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		pool.Close()
		return nil
	}))
}
