package realizer

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// statusCollector reports at each scrape what the cache holds of owners' Ready, blueprints'
// rollouts and Runnables' Ready: what a person watches (docs/operating.md, "Dashboards"). It reads the
// informers' objects without copying them, and gives up on a cache that has not synced
// within scrapeTimeout (a scrape then lacks these families).
type statusCollector struct {
	cache                      client.Reader
	owners, rollout, runnables *prometheus.Desc
}

const scrapeTimeout = 2 * time.Second

func newStatusCollector(cache client.Reader) *statusCollector {
	return &statusCollector{
		cache: cache,
		owners: prometheus.NewDesc("surveyor_owners",
			"Workloads and Deliverables by kind and by the status and reason of their Ready condition (Unknown with reason \"\" when they have none yet).",
			[]string{"kind", "ready", "reason"}, nil),
		rollout: prometheus.NewDesc("surveyor_rollout_owners",
			"The owners of each blueprint with a rolloutStrategy, by their state in its current rollout (ToApply, Progressing, Succeeded, Failed, TimeOut, Skip).",
			[]string{"kind", "blueprint", "state"}, nil),
		runnables: prometheus.NewDesc("surveyor_runnables",
			"Runnables by the status and reason of their Ready condition.",
			[]string{"ready", "reason"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *statusCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.owners
	ch <- c.rollout
	ch <- c.runnables
}

// Collect implements prometheus.Collector.
func (c *statusCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	for _, kind := range v1alpha1.OwnerKinds {
		list := kind.NewList()
		if c.cache.List(ctx, list, client.UnsafeDisableDeepCopy) != nil {
			continue
		}
		counts := map[[2]string]int{}
		for _, o := range v1alpha1.Items(list) {
			counts[readiness(o.(v1alpha1.Owner).GetOwnerStatus().Conditions)]++
		}
		for k, n := range counts {
			ch <- prometheus.MustNewConstMetric(c.owners, prometheus.GaugeValue, float64(n), kind.Kind, k[0], k[1])
		}
	}
	for _, kind := range v1alpha1.BlueprintKinds {
		list := kind.NewList()
		if c.cache.List(ctx, list, client.UnsafeDisableDeepCopy) != nil {
			continue
		}
		for _, o := range v1alpha1.Items(list) {
			r := o.(v1alpha1.Blueprint).GetBlueprintStatus().Rollout
			if r == nil {
				continue
			}
			for state, n := range map[string]int32{
				"ToApply": r.Counts.ToApply, "Progressing": r.Counts.Progressing, "Succeeded": r.Counts.Succeeded,
				"Failed": r.Counts.Failed, "TimeOut": r.Counts.TimeOut, "Skip": r.Counts.Skip,
			} {
				ch <- prometheus.MustNewConstMetric(c.rollout, prometheus.GaugeValue, float64(n), kind.Kind, o.GetName(), state)
			}
		}
	}
	var runnables v1alpha1.RunnableList
	if c.cache.List(ctx, &runnables, client.UnsafeDisableDeepCopy) == nil {
		counts := map[[2]string]int{}
		for i := range runnables.Items {
			counts[readiness(runnables.Items[i].Status.Conditions)]++
		}
		for k, n := range counts {
			ch <- prometheus.MustNewConstMetric(c.runnables, prometheus.GaugeValue, float64(n), k[0], k[1])
		}
	}
}

// readiness is the status and reason of conditions' Ready.
func readiness(conditions []metav1.Condition) [2]string {
	if c := meta.FindStatusCondition(conditions, v1alpha1.ConditionReady); c != nil {
		return [2]string{string(c.Status), c.Reason}
	}
	return [2]string{"Unknown", ""}
}
