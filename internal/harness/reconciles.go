package harness

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cartov1alpha1 "github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// Reconciles counts the reconciles of one object that the in-process controller
// finished, by how they ended.
type Reconciles struct {
	// Succeeded returned neither an error nor a requeue.
	Succeeded int
	// Requeued asked to run again (Requeue or RequeueAfter).
	Requeued int
	// Failed returned an error, which controller-runtime retries with backoff.
	Failed int
}

// Total is every finished reconcile.
func (r Reconciles) Total() int { return r.Succeeded + r.Requeued + r.Failed }

// ReconcilesOf is how many reconciles of the object key the in-process controller
// named controller (e.g. "workload") finished so far. The metrics count per controller
// only; a test that asks whether one object is retried needs this.
func (e *Env) ReconcilesOf(controller string, key client.ObjectKey) Reconciles {
	if e.reconciles == nil {
		return Reconciles{}
	}
	return e.reconciles.get(reconcileKey{controller, key.Namespace, key.Name})
}

// ForceReconciles re-queues the Workloads of the supply chain n times without changing
// anything they stamp (it sets an unrelated annotation on the supply chain), and after
// each time waits until the in-process controller finished one more reconcile of the
// Workload wl. It returns how many reconciles of wl finished meanwhile.
func (e *Env) ForceReconciles(ctx context.Context, t testing.TB, supplyChain string, wl client.ObjectKey, n int) int {
	t.Helper()
	start := e.ReconcilesOf("workload", wl).Total()
	sc := &cartov1alpha1.ClusterSupplyChain{}
	for i := range n {
		if err := e.Client.Get(ctx, client.ObjectKey{Name: supplyChain}, sc); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(sc.DeepCopy())
		metav1.SetMetaDataAnnotation(&sc.ObjectMeta, "test.surveyor.dev/touch", fmt.Sprint(i))
		if err := e.Client.Patch(ctx, sc, patch); err != nil {
			t.Fatal(err)
		}
		want := start + i + 1
		e.Eventually(ctx, t, 30*time.Second, func() (bool, string) {
			got := e.ReconcilesOf("workload", wl).Total()
			return got >= want, fmt.Sprintf("%d reconciles of workload %s finished, want %d", got, wl, want)
		})
	}
	return e.ReconcilesOf("workload", wl).Total() - start
}

type reconcileKey struct{ controller, namespace, name string }

// reconcileCounts is shared by every logger derived from the controller's.
type reconcileCounts struct {
	mu sync.Mutex
	m  map[reconcileKey]Reconciles
}

func (c *reconcileCounts) get(k reconcileKey) Reconciles {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

func (c *reconcileCounts) add(k reconcileKey, count func(*Reconciles)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[reconcileKey]Reconciles{}
	}
	r := c.m[k]
	count(&r)
	c.m[k] = r
}

// reconcileDoneLevel is the verbosity at which controller-runtime logs how a reconcile
// ended ("Reconcile successful", "Reconcile done, requeueing [after ...]"); a failure
// is logged as the error "Reconciler error". Each line carries the controller, namespace
// and name among its values (pkg/internal/controller, reconcileHandler).
const reconcileDoneLevel = 5

// countReconciles wraps the controller's logger so that every logger derived from it
// counts finished reconciles per object in counts. What it writes is unchanged: the
// V(5) lines are counted, not written, unless the wrapped logger writes them itself.
func countReconciles(l logr.Logger, counts *reconcileCounts) logr.Logger {
	sink := l.GetSink()
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1) // countingSink's own frame
	}
	return logr.New(&countingSink{LogSink: sink, counts: counts})
}

// countingSink passes everything to the wrapped sink and counts reconcile outcomes.
type countingSink struct {
	logr.LogSink
	counts *reconcileCounts
	// values are those of every WithValues so far, where the reconcile's key is.
	values []any
}

// Init does nothing: the wrapped sink was initialised by the logger it came from.
func (s *countingSink) Init(logr.RuntimeInfo) {}

func (s *countingSink) Enabled(level int) bool {
	return level <= reconcileDoneLevel || s.LogSink.Enabled(level)
}

func (s *countingSink) Info(level int, msg string, kv ...any) {
	if level == reconcileDoneLevel {
		switch {
		case msg == "Reconcile successful":
			s.count(kv, func(r *Reconciles) { r.Succeeded++ })
		case strings.HasPrefix(msg, "Reconcile done, requeueing"):
			s.count(kv, func(r *Reconciles) { r.Requeued++ })
		}
	}
	if s.LogSink.Enabled(level) {
		s.LogSink.Info(level, msg, kv...)
	}
}

func (s *countingSink) Error(err error, msg string, kv ...any) {
	if msg == "Reconciler error" {
		s.count(kv, func(r *Reconciles) { r.Failed++ })
	}
	s.LogSink.Error(err, msg, kv...)
}

func (s *countingSink) count(kv []any, count func(*Reconciles)) {
	var k reconcileKey
	values := append(slices.Clip(s.values), kv...)
	for i := 0; i+1 < len(values); i += 2 {
		v, _ := values[i+1].(string)
		switch values[i] {
		case "controller":
			k.controller = v
		case "namespace":
			k.namespace = v
		case "name":
			k.name = v
		}
	}
	if k.controller != "" && k.name != "" {
		s.counts.add(k, count)
	}
}

func (s *countingSink) WithValues(kv ...any) logr.LogSink {
	return &countingSink{LogSink: s.LogSink.WithValues(kv...), counts: s.counts, values: append(slices.Clip(s.values), kv...)}
}

func (s *countingSink) WithName(name string) logr.LogSink {
	return &countingSink{LogSink: s.LogSink.WithName(name), counts: s.counts, values: s.values}
}

func (s *countingSink) WithCallDepth(depth int) logr.LogSink {
	sink := s.LogSink
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(depth)
	}
	return &countingSink{LogSink: sink, counts: s.counts, values: s.values}
}
