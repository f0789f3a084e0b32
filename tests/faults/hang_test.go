package faults

import (
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// hangingWorkloads is how many Workloads stamp a kind whose conversion webhook hangs.
const hangingWorkloads = 200

// 200 Workloads stamp a kind whose conversion webhook never answers, so its informer
// never syncs. No worker waits on it (DESIGN §12, "Kinds"): each of the 200 reports
// ResourcesSubmitted=Unknown KindNotServed, while 50 Workloads of another kind, created
// after them, converge. How long they take against the same 50 without the hanging kind
// is BenchmarkHangingKind's figure.
func TestHangingConversionWebhookHoldsNoWorker(t *testing.T) {
	c := launchController(t, "surveyor-hang")
	c.waitLeader(t, 2*time.Minute)
	hanging := hangingKind(t, "hang")
	healthy := convergeHealthy(t, "faults-hang-healthy")
	t.Logf("%d workloads of another kind ready with %d on a hanging kind: p50 %s, p99 %s",
		stallWorkloads, hangingWorkloads, percentile(healthy, 50), percentile(healthy, 99))
	names := make([]string, hangingWorkloads)
	for i := range names {
		names[i] = workloadName(i)
	}
	waitNotServed(t, hanging, names, "Gizmo", hangGroup("hang")+"/v2", 2*time.Minute)
	if ready, _, err := readiness(hanging); err != nil || ready != 0 {
		t.Fatalf("%d workloads on the hanging kind ready (err %v), want 0", ready, err)
	}
}

// benchRuns numbers BenchmarkHangingKind's runs, whose objects must not collide.
var benchRuns atomic.Int32

// BenchmarkHangingKind measures, with a controller of its own, the p99 time to Ready of 50
// Workloads alone, then of 50 more created after 200 Workloads that stamp a kind whose
// conversion webhook hangs: "hanging/alone-p99" is the figure (DESIGN §12: a kind that is
// not served costs its own owners a retry, never a worker). Run it as
//
//	go test ./tests/faults -run '^$' -bench BenchmarkHangingKind -benchtime 1x -count 3
//
// since each iteration leaves a hanging kind behind for the next.
func BenchmarkHangingKind(b *testing.B) {
	run := benchRuns.Add(1)
	c := launchController(b, fmt.Sprintf("surveyor-bench-hang-%d", run))
	c.waitLeader(b, 2*time.Minute)
	// Warmed up first: the controller's first ConfigMaps start its informer and prove the kind.
	convergeHealthy(b, fmt.Sprintf("faults-warm-%d", run))
	b.ResetTimer()
	for i := range b.N {
		name := fmt.Sprintf("bench-%d-%d", run, i)
		alone := convergeHealthy(b, "faults-alone-"+name)
		hangingKind(b, name)
		with := convergeHealthy(b, "faults-with-"+name)
		p99Alone, p99With := percentile(alone, 99), percentile(with, 99)
		b.ReportMetric(float64(p99Alone.Milliseconds()), "alone-p99-ms")
		b.ReportMetric(float64(p99With.Milliseconds()), "hanging-p99-ms")
		b.ReportMetric(p99With.Seconds()/p99Alone.Seconds(), "hanging/alone-p99")
	}
}

// hangGroup is the API group of the hanging kind named after name.
func hangGroup(name string) string { return name + ".faults.example.com" }

// hangingKind installs the kind Gizmo of hangGroup(name), stored at v1 and served at v2
// through a conversion webhook that never answers, with one Gizmo stored, and creates 200
// Workloads that stamp Gizmos at v2. It returns their namespace.
func hangingKind(t testing.TB, name string) string {
	t.Helper()
	group := hangGroup(name)
	hook := hangingWebhook(t)
	crd := newCRD(group, "Gizmo")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	v2 := map[string]any{
		"name": "v2", "served": true, "storage": false,
		"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
	}
	if err := unstructured.SetNestedSlice(crd.Object, append(versions, v2), "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hook.Certificate().Raw})
	crd.Object["spec"].(map[string]any)["conversion"] = map[string]any{
		"strategy": "Webhook",
		"webhook": map[string]any{
			"conversionReviewVersions": []any{"v1"},
			"clientConfig":             map[string]any{"url": hook.URL + "/convert", "caBundle": base64.StdEncoding.EncodeToString(caBundle)},
		},
	}
	createCRD(t, crd)

	ns := newNamespace(t, "faults-"+name)
	allowStamping(t, ns, group)
	// Stored at v1, so every read of v2 goes through the webhook. It carries Surveyor's
	// label, so the controller's informer lists it.
	gizmo := &unstructured.Unstructured{}
	gizmo.SetAPIVersion(group + "/v1")
	gizmo.SetKind("Gizmo")
	gizmo.SetNamespace(ns)
	gizmo.SetName("stored")
	gizmo.SetLabels(map[string]string{v1alpha1.LabelResourceName: "gizmo"})
	if err := k8s.Create(ctx, gizmo); err != nil {
		t.Fatal(err)
	}
	chain := "faults-" + name
	kindChainAt(t, chain, group+"/v2", "Gizmo")
	createWorkloads(t, ns, chain, 0, hangingWorkloads)
	return ns
}

// hangingWebhook is an HTTPS server on loopback whose every request hangs until the
// client gives up or the test ends.
func hangingWebhook(t testing.TB) *httptest.Server {
	return hangingServer(t, func(*http.Request) {})
}

// hangingServer is a TLS server that calls seen with each request, then never answers it
// until the test ends.
func hangingServer(t testing.TB, seen func(*http.Request)) *httptest.Server {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen(r)
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	srv.StartTLS()
	t.Cleanup(func() {
		close(done)
		srv.Close()
	})
	return srv
}

// convergeHealthy creates 50 Workloads of a configMapChain named chain, in a namespace of
// their own, and returns how long each took from its create until a watch saw it Ready.
func convergeHealthy(t testing.TB, chain string) []time.Duration {
	t.Helper()
	ns := newNamespace(t, chain)
	configMapChain(t, chain)
	history := harness.Record(ctx, t, env, &v1alpha1.Workload{}, harness.InNamespace(ns))
	created := map[string]time.Time{}
	for i := range stallWorkloads {
		wl := newWorkload(ns, chain, i)
		created[wl.Name] = time.Now()
		if err := k8s.Create(ctx, wl); err != nil {
			t.Fatal(err)
		}
	}
	var ready map[string]time.Duration
	eventually(t, 3*time.Minute, func() (bool, string) {
		ready = readyAfter(history.States(), created)
		return len(ready) == stallWorkloads, fmt.Sprintf("%d of %d workloads seen ready", len(ready), stallWorkloads)
	})
	out := make([]time.Duration, 0, len(ready))
	for _, d := range ready {
		out = append(out, d)
	}
	return out
}

// readyAfter is, for each Workload of created that the watch saw Ready, how long after
// its create the watch first saw it so.
func readyAfter(states []harness.Observed[*v1alpha1.Workload], created map[string]time.Time) map[string]time.Duration {
	ready := map[string]time.Duration{}
	for _, o := range states {
		at, ok := created[o.Object.Name]
		if _, seen := ready[o.Object.Name]; ok && !seen && isReady(o.Object) {
			ready[o.Object.Name] = o.At.Sub(at)
		}
	}
	return ready
}

// percentile is the p-th percentile of ds (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[max(0, min(len(s)-1, (len(s)*p+99)/100-1))].Round(time.Millisecond)
}
