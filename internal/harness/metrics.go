package harness

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"k8s.io/client-go/rest"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics is one reading of Prometheus metric families, by family name.
type Metrics map[string]*dto.MetricFamily

// Sum adds up the counter and gauge values of the family's series whose labels
// include every pair of labels (nil: all of its series).
func (m Metrics) Sum(family string, labels map[string]string) float64 {
	var n float64
series:
	for _, s := range m[family].GetMetric() {
		for k, v := range labels {
			if Label(s, k) != v {
				continue series
			}
		}
		n += s.GetCounter().GetValue() + s.GetGauge().GetValue()
	}
	return n
}

// ReconcileTotal is how many reconciles controller finished, whatever their result
// (controller-runtime's controller_runtime_reconcile_total).
func (m Metrics) ReconcileTotal(controller string) float64 {
	return m.Sum("controller_runtime_reconcile_total", map[string]string{"controller": controller})
}

// Label is the value of the series' label name ("" when it has none).
func Label(s *dto.Metric, name string) string {
	for _, p := range s.GetLabel() {
		if p.GetName() == name {
			return p.GetValue()
		}
	}
	return ""
}

// ScrapeMetrics reads the Prometheus text endpoint at url with hc.
func ScrapeMetrics(hc *http.Client, url string) (Metrics, error) {
	resp, err := hc.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	var parser expfmt.TextParser
	return parser.TextToMetricFamilies(resp.Body)
}

// MetricsClient is an HTTP client for the controller's metrics endpoint: it presents
// token as a bearer token, which the controller has the API server review (it must
// belong to an identity that may get /metrics, e.g. one bound to config/rbac's
// surveyor-metrics-reader, or the cluster admin), and it trusts the endpoint's
// certificate unchecked, since the controller serves a self-signed one by default.
func MetricsClient(token string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // a loopback test endpoint with a self-signed certificate
	return &http.Client{Timeout: 10 * time.Second, Transport: bearer{token: token, next: tr}}
}

// bearer adds an Authorization header to each request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token == "" {
		return b.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// AdminMetricsClient is MetricsClient with the cluster admin's token.
func (e *Env) AdminMetricsClient() *http.Client { return MetricsClient(e.Cluster.Config.BearerToken) }

// APIServerMetrics scrapes kube-apiserver's /metrics as the cluster admin.
func (e *Env) APIServerMetrics(t testing.TB) Metrics {
	t.Helper()
	hc, err := rest.HTTPClientFor(e.Cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ScrapeMetrics(hc, e.Cluster.Config.Host+"/metrics")
	if err != nil {
		t.Fatalf("scraping kube-apiserver: %v", err)
	}
	return m
}

// ControllerMetrics gathers the in-process controller's metrics from
// controller-runtime's registry (it serves none on a port here).
func ControllerMetrics(t testing.TB) Metrics {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	m := make(Metrics, len(families))
	for _, f := range families {
		m[f.GetName()] = f
	}
	return m
}

// ReconcileTotal is how many reconciles the in-process controller named controller
// finished, whatever their result.
func ReconcileTotal(t testing.TB, controller string) float64 {
	t.Helper()
	return ControllerMetrics(t).ReconcileTotal(controller)
}
