package yttworker

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/surveyor-dev/surveyor/pkg/render/ytt"
)

var (
	evaluations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "surveyor_ytt_evaluations_total",
		Help: "ytt evaluations by result: output, error (ytt's, the template's fault), limit (the time or memory limit), failed (a worker that could not start or died), remembered (served from the memo, no worker).",
	}, []string{"result"})
	evaluationSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "surveyor_ytt_evaluation_seconds",
		Help:    "Time of the ytt evaluations a worker ran (not those served from the memo), waiting for a free worker included.",
		Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8},
	})
)

// Metrics are the pools' metrics, for the controller's registry.
func Metrics() []prometheus.Collector { return []prometheus.Collector{evaluations, evaluationSeconds} }

// observe counts an evaluation a worker ran.
func observe(start time.Time, err error) {
	evaluationSeconds.Observe(time.Since(start).Seconds())
	var yerr *ytt.Error
	switch {
	case err == nil:
		evaluations.WithLabelValues("output").Inc()
	case errors.As(err, &yerr) && yerr.Limit:
		evaluations.WithLabelValues("limit").Inc()
	case errors.As(err, &yerr):
		evaluations.WithLabelValues("error").Inc()
	default:
		evaluations.WithLabelValues("failed").Inc()
	}
}
