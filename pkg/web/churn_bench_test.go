package web_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surveyor-dev/surveyor/pkg/web"
)

// Churn is the load of BenchmarkListUnderChurn: DESIGN §12's web view over 10,000 owners
// with 500 owner changes per second, a few list pages open.
const (
	churnOwners    = 10000
	churnPerSecond = 500
	churnDuration  = 4 * time.Second
	churnStreams   = 4
)

// BenchmarkListUnderChurn serves the list page over 10,000 Workloads while one
// goroutine, standing in for the informer's handler, changes 500 of them a second (each
// change makes one more Workload not Ready, so every change alters the open pages) and
// churnStreams list pages stay open. It reports the p99 time to render the list page
// (one GET every 100 ms, served in process), the p99 latency from a change to the first
// event of an open page that includes it, and the longest a single store update (the
// handler's work) took: it must stay at or under 10 ms. Run it as
//
//	go test -count=3 -run '^$' -bench ListUnderChurn -benchtime 1x ./pkg/web/
//
// and take the medians of the three runs.
func BenchmarkListUnderChurn(b *testing.B) {
	var render, latency []time.Duration
	var blocked time.Duration
	for b.Loop() {
		r, l, m := churn(b)
		render, latency, blocked = append(render, r...), append(latency, l...), max(blocked, m)
	}
	b.ReportMetric(ms(percentile(render, 0.99)), "ms-render-p99")
	b.ReportMetric(ms(percentile(latency, 0.99)), "ms-update-p99")
	b.ReportMetric(ms(blocked), "ms-handler-max")
	b.Logf("%d owners, %d changes/s, %d open list pages: render p99 %s (%d renders), update latency p99 %s (%d changes), handler blocked at most %s",
		churnOwners, churnPerSecond, churnStreams, percentile(render, 0.99), len(render), percentile(latency, 0.99), len(latency), blocked)
}

// churn runs one churnDuration of changes and returns the render times of the list page,
// the update latencies seen by the first open page, and the longest store update.
func churn(b *testing.B) (render, latency []time.Duration, blocked time.Duration) {
	store := web.NewStore()
	for i := range churnOwners {
		store.SetOwner(workload(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("w-%05d", i), True, ""))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := web.NewServer(ctx, store, web.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer cancel()

	// changedAt is when each change (by its store sequence number) was made.
	var mu sync.Mutex
	changedAt := map[uint64]time.Time{}
	delivered := uint64(0)
	first, _ := store.Position()

	var wg sync.WaitGroup
	for i := range churnStreams {
		resp, err := http.Get(ts.URL + "/events/?since=" + store.EventID(first))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for sc.Scan() {
				id, ok := strings.CutPrefix(sc.Text(), "id: ")
				if !ok || i != 0 {
					continue
				}
				_, n, _ := strings.Cut(id, "-")
				seq, _ := strconv.ParseUint(n, 10, 64)
				at := time.Now()
				mu.Lock()
				for s := delivered + 1; s <= seq; s++ {
					if t, ok := changedAt[s]; ok {
						latency = append(latency, at.Sub(t))
					}
				}
				delivered = max(delivered, seq)
				mu.Unlock()
			}
		}()
	}

	// The list page, rendered in process every 100 ms while the changes go on: a few users
	// opening it, not so many that the benchmark starves its own handler of CPU.
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			start := time.Now()
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/", nil))
			if w.Code != http.StatusOK {
				b.Error(w.Code)
				return
			}
			mu.Lock()
			render = append(render, time.Since(start))
			mu.Unlock()
		}
	}()

	// The informer's handler: a change every 2 ms, each making one more owner not Ready.
	order := rand.Perm(churnOwners)
	tick := time.NewTicker(time.Second / churnPerSecond)
	n := int(churnDuration * churnPerSecond / time.Second)
	for k, i := range order[:n] {
		<-tick.C
		o := workload(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("w-%05d", i), False, "changed")
		// This goroutine is the only writer: the change is numbered first+k+1, recorded
		// before it is made so that no event can include it unseen.
		start := time.Now()
		mu.Lock()
		changedAt[first+uint64(k)+1] = start
		mu.Unlock()
		start = time.Now()
		store.SetOwner(o)
		blocked = max(blocked, time.Since(start))
	}
	tick.Stop()
	// Time for the last changes to reach the pages.
	time.Sleep(time.Second)
	close(stop)
	cancel()
	ts.CloseClientConnections()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(latency) < n/2 {
		b.Fatalf("only %d of %d changes reached the open page", len(latency), n)
	}
	return render, latency, blocked
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
