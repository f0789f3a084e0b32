package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// shardRun is one convergence of N Workloads on a fresh cluster by one unsharded replica
// (Replicas 1) or by Replicas replicas started with --watch-label-selector, one per
// shard, the Workloads spread over the shards round robin (-shards).
type shardRun struct {
	N        int     `json:"n"`
	Replicas int     `json:"replicas"`
	Seconds  float64 `json:"seconds"`
	// CPUSeconds is each replica's CPU while converging, PeakRSSMiB its peak RSS over its
	// life (VmHWM), and LiveHeapMiB the bytes its Go heap holds once converged, right after a
	// garbage collection: what it holds, without the garbage its peak also counts.
	CPUSeconds  []float64 `json:"cpuSeconds"`
	PeakRSSMiB  []float64 `json:"peakRSSMiB"`
	LiveHeapMiB []float64 `json:"liveHeapMiB"`
}

// shardName is the value of the shard label of shard i, and its replica's process name.
func shardName(i int) string { return fmt.Sprintf("shard%d", i) }

// runShardRun converges n Workloads with one unsharded replica (shards 1) or with one
// replica per shard, and measures each replica.
func runShardRun(ctx context.Context, opts *options, n, shards int) (*shardRun, error) {
	if shards > 1 && !opts.leaderElect {
		return nil, errors.New("-shards needs leader election: each shard holds a lease of its own")
	}
	e, err := newEnv(ctx, opts, "", logf)
	if err != nil {
		return nil, err
	}
	defer e.Stop()
	if err := e.waitQuiet(ctx); err != nil {
		return nil, err
	}
	var replicas []*harness.Controller
	for i := range shards {
		name, args := controllerName, []string(nil)
		if shards > 1 {
			name, args = "surveyor-"+shardName(i), []string{"--watch-label-selector=" + v1alpha1.LabelShardKey + " in (" + shardName(i) + ")"}
		}
		c, err := e.launch(ctx, name, args...)
		if err != nil {
			return nil, err
		}
		replicas = append(replicas, c)
	}
	t, stopTracker, err := e.applySupplyChain(ctx, n)
	if err != nil {
		return nil, err
	}
	defer stopTracker()
	before := make([]harness.ProcStat, len(replicas))
	for i, c := range replicas {
		if before[i], err = c.Proc(); err != nil {
			return nil, err
		}
	}
	logf("converging %d Workloads with %d replica(s)", n, shards)
	start := time.Now()
	created := make(chan error, 1)
	go func() {
		created <- createParallel(ctx, n, opts.creators, func(ctx context.Context, i int) error {
			wl := newWorkload(benchNamespace, workloadName(i), "bench", "")
			if shards > 1 {
				wl.Labels[v1alpha1.LabelShardKey] = shardName(i % shards)
			}
			return e.admin.Create(ctx, wl)
		})
	}()
	deadline := time.After(opts.timeout)
	alive := time.NewTicker(time.Second)
	defer alive.Stop()
	for done := false; !done; {
		select {
		case err := <-created:
			if err != nil {
				return nil, fmt.Errorf("creating Workloads: %w", err)
			}
		case <-t.allReady:
			done = true
		case <-alive.C:
			for _, c := range replicas {
				if _, err := c.Proc(); err != nil {
					return nil, fmt.Errorf("%s exited (log: %s)", c.Name, c.LogPath())
				}
			}
		case <-deadline:
			return nil, fmt.Errorf("only %d of %d Workloads Ready after %s", t.readyCount(), n, opts.timeout)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	r := &shardRun{N: n, Replicas: shards, Seconds: latest(t.readyTimes()).Sub(start).Seconds()}
	for i, c := range replicas {
		st, err := c.Proc()
		if err != nil {
			return nil, err
		}
		r.CPUSeconds = append(r.CPUSeconds, (st.CPU - before[i].CPU).Seconds())
		r.PeakRSSMiB = append(r.PeakRSSMiB, float64(st.HWM)/mib)
		live, err := liveHeap(ctx, c)
		if err != nil {
			return nil, err
		}
		r.LiveHeapMiB = append(r.LiveHeapMiB, live/mib)
	}
	logf("converged in %.1f s; per replica CPU %v s, peak RSS %v MiB, live heap %v MiB",
		r.Seconds, rounded(r.CPUSeconds), rounded(r.PeakRSSMiB), rounded(r.LiveHeapMiB))
	return r, nil
}

// printShards prints, for one replica and for the shards, the medians over the runs of
// the convergence time and of each replica's CPU and peak RSS (replicas in shard order).
func printShards(w io.Writer, runs []*shardRun) {
	byReplicas := map[int][]*shardRun{}
	var order []int
	for _, r := range runs {
		if _, ok := byReplicas[r.Replicas]; !ok {
			order = append(order, r.Replicas)
		}
		byReplicas[r.Replicas] = append(byReplicas[r.Replicas], r)
	}
	fmt.Fprintf(w, "\nSharding (medians of each configuration's runs):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "N\treplicas\truns\tconvergence\tCPU per replica\tpeak RSS per replica\tlive heap per replica\tCPU in all\tpeak RSS in all")
	for _, k := range order {
		rs := byReplicas[k]
		var secs, cpuAll, rssAll []float64
		cpu, rss, heap := make([][]float64, k), make([][]float64, k), make([][]float64, k)
		for _, r := range rs {
			secs = append(secs, r.Seconds)
			cpuAll, rssAll = append(cpuAll, sum(r.CPUSeconds)), append(rssAll, sum(r.PeakRSSMiB))
			for i := range k {
				cpu[i], rss[i], heap[i] = append(cpu[i], r.CPUSeconds[i]), append(rss[i], r.PeakRSSMiB[i]), append(heap[i], r.LiveHeapMiB[i])
			}
		}
		var cpuM, rssM, heapM []string
		for i := range k {
			cpuM = append(cpuM, fmt.Sprintf("%.2f s", median(cpu[i])))
			rssM = append(rssM, fmt.Sprintf("%.1f MiB", median(rss[i])))
			heapM = append(heapM, fmt.Sprintf("%.1f MiB", median(heap[i])))
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.1f s\t%s\t%s\t%s\t%.2f s\t%.1f MiB\n", rs[0].N, k, len(rs), median(secs),
			strings.Join(cpuM, ", "), strings.Join(rssM, ", "), strings.Join(heapM, ", "), median(cpuAll), median(rssAll))
	}
	tw.Flush()
}

// liveHeap has the controller collect its garbage (its pprof heap endpoint with gc=1) and
// then reads the bytes its heap holds (all live: the collection has swept every span).
func liveHeap(ctx context.Context, c *harness.Controller) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.PprofURL+"/heap?gc=1", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	m, err := c.Metrics(ctx, "go_memstats_heap_alloc_bytes")
	if err != nil {
		return 0, err
	}
	return m.Sum("go_memstats_heap_alloc_bytes", nil), nil
}

func sum(vs []float64) float64 {
	var s float64
	for _, v := range vs {
		s += v
	}
	return s
}

func rounded(vs []float64) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf("%.1f", v)
	}
	return out
}
