package harness

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics is one reading of Prometheus metric families, by family name.
type Metrics map[string]*dto.MetricFamily

// Sum adds up the values of the family's counter, gauge and untyped series whose labels
// include every pair of labels (nil: all of its series).
func (m Metrics) Sum(family string, labels map[string]string) float64 {
	var n float64
	for _, s := range m[family].GetMetric() {
		if matches(s, labels) {
			n += value(s)
		}
	}
	return n
}

// By sums the values of the family's series whose labels include every pair of labels,
// grouped by the values of keys joined with " " (e.g. keys verb and resource: "GET pods").
func (m Metrics) By(family string, labels map[string]string, keys ...string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range m[family].GetMetric() {
		if !matches(s, labels) {
			continue
		}
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = Label(s, k)
		}
		out[strings.Join(parts, " ")] += value(s)
	}
	return out
}

// matches says whether the series has every pair of labels.
func matches(s *dto.Metric, labels map[string]string) bool {
	for k, v := range labels {
		if Label(s, k) != v {
			return false
		}
	}
	return true
}

// value is a counter's, a gauge's or an untyped series' value (a family without a TYPE
// line is untyped).
func value(s *dto.Metric) float64 {
	return s.GetCounter().GetValue() + s.GetGauge().GetValue() + s.GetUntyped().GetValue()
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

// ScrapeMetrics reads the Prometheus text endpoint at url with hc: every family, or with
// families only those (ParseMetrics).
func ScrapeMetrics(ctx context.Context, hc *http.Client, url string, families ...string) (Metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return ParseMetrics(resp.Body, families...)
}

// ParseMetrics reads the Prometheus text format: every family, or with families only
// those. kube-apiserver's /metrics runs to megabytes of histograms that a caller
// interested in two counters never reads, so the lines of other families are dropped
// before parsing: a scrape stays cheap for a benchmark that shares the machine's cores
// with the controller it measures.
func ParseMetrics(r io.Reader, families ...string) (Metrics, error) {
	var parser expfmt.TextParser
	if len(families) == 0 {
		return parser.TextToMetricFamilies(r)
	}
	keep := map[string]bool{}
	for _, f := range families {
		keep[f] = true
	}
	var kept bytes.Buffer
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		if line := sc.Bytes(); inFamilies(line, keep) {
			kept.Write(line)
			kept.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return parser.TextToMetricFamilies(&kept)
}

// inFamilies says whether a line of the text format belongs to one of the families keep
// holds: a HELP or TYPE comment that describes one, or a sample of one (a histogram's or
// summary's sample by its name less the _bucket, _sum or _count suffix). Other comments
// and blank lines belong to none.
func inFamilies(line []byte, keep map[string]bool) bool {
	if rest, ok := bytes.CutPrefix(line, []byte("# ")); ok {
		kind, rest, _ := bytes.Cut(rest, []byte(" "))
		if string(kind) != "HELP" && string(kind) != "TYPE" {
			return false
		}
		name, _, _ := bytes.Cut(rest, []byte(" "))
		return keep[string(name)]
	}
	end := bytes.IndexAny(line, "{ ")
	if end <= 0 {
		return false
	}
	name := string(line[:end])
	if keep[name] {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && keep[base] {
			return true
		}
	}
	return false
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

// ScrapeAPIServer reads kube-apiserver's /metrics as the cluster admin: every family, or
// with families only those.
func (e *Env) ScrapeAPIServer(ctx context.Context, families ...string) (Metrics, error) {
	return ScrapeMetrics(ctx, e.adminHTTP, e.Cluster.Config.Host+"/metrics", families...)
}

// APIServerMetrics scrapes kube-apiserver's /metrics as the cluster admin.
func (e *Env) APIServerMetrics(t testing.TB) Metrics {
	t.Helper()
	m, err := e.ScrapeAPIServer(t.Context())
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
