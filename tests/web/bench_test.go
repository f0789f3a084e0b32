package web

import (
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/web"
)

// firstPaintWorkloads is how many Ready Workloads BenchmarkFirstPaint lists.
const firstPaintWorkloads = 5000

// BenchmarkFirstPaint times the list page over 5,000 Ready Workloads (three stamped
// resources each, in 10 namespaces) in the browser: navigation start to the first
// contentful paint, to the end of the response, and to the 100th row on screen. It also
// times a new web view's watches until they have listed every Workload. It is not run by
// `go test` without -bench, and takes several minutes to create the Workloads:
//
//	go test -count=1 -run '^$' -bench FirstPaint -benchtime 5x -timeout 30m ./tests/web/
func BenchmarkFirstPaint(b *testing.B) {
	env.ReadyWorkloads(ctx, b, "bench-web", firstPaintWorkloads, 10, 25*time.Minute)

	// A web view of its own, started now: how long until it has every Workload.
	store := web.NewStore()
	start := time.Now()
	go func() { _ = web.Watch(ctx, viewerClient, "", store) }()
	env.Eventually(ctx, b, time.Minute, func() (bool, string) {
		return store.KindState(v1alpha1.KindWorkload).Synced, "the Workloads are not listed yet"
	})
	synced := time.Since(start)
	srv, err := web.NewServer(ctx, store, web.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	b.Cleanup(ts.Close)

	browserCtx := browser(b)
	var paint, response, rows []float64
	for b.Loop() {
		tab, cancel := chromedp.NewContext(browserCtx)
		var timing struct{ Paint, Response, Rows float64 }
		err := chromedp.Run(tab,
			chromedp.Navigate(ts.URL+"/"),
			chromedp.WaitVisible(`tbody tr:nth-child(100)`, chromedp.ByQuery),
			chromedp.Evaluate(`(async () => {
				const rows = performance.now();
				// The paint entry is recorded once the frame is presented, which can be
				// after the rows are laid out.
				const paint = await new Promise((resolve) => new PerformanceObserver((l, o) => {
					const e = l.getEntriesByName("first-contentful-paint")[0];
					if (e) { o.disconnect(); resolve(e.startTime); }
				}).observe({type: "paint", buffered: true}));
				return {Paint: paint, Response: performance.getEntriesByType("navigation")[0].responseEnd, Rows: rows};
			})()`, &timing, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		paint, response, rows = append(paint, timing.Paint), append(response, timing.Response), append(rows, timing.Rows)
	}
	b.ReportMetric(median(paint), "ms-first-paint")
	b.ReportMetric(median(response), "ms-response")
	b.ReportMetric(median(rows), "ms-100-rows")
	b.ReportMetric(float64(synced.Milliseconds()), "ms-watch-synced")
	b.Logf("%d Workloads: first contentful paint %.0f ms, response %.0f ms, 100 rows on screen %.0f ms after navigation start (medians of %d); a new web view listed them in %s",
		firstPaintWorkloads, median(paint), median(response), median(rows), len(paint), synced.Round(time.Millisecond))
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
