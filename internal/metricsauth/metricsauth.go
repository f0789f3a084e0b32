package metricsauth

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Options serve the metrics endpoint as kubebuilder projects do: over TLS, to a
// caller whose bearer token the API server accepts (TokenReview) and who may get
// /metrics (SubjectAccessReview; config/rbac's surveyor-metrics-reader grants it). The
// metrics name the kinds, blueprints and templates the controller works with, and their
// request counts show what tenants do, so they are not for anyone who can reach the
// port. A missing certificate in certDir (or no certDir) gives a self-signed one, held
// in memory, which suits the read-only root filesystem of config/manager.
//
// The server speaks HTTP/1.1 only: HTTP/2's stream resets let a client that is not
// even authenticated make the server work without bound (CVE-2023-44487), and a scrape
// gains nothing from HTTP/2.
func Options(addr, certDir, certName, keyName string) metricsserver.Options {
	return metricsserver.Options{
		BindAddress:    addr,
		SecureServing:  true,
		FilterProvider: countingReviews(filters.WithAuthenticationAndAuthorization),
		CertDir:        certDir,
		CertName:       certName,
		KeyName:        keyName,
		TLSOpts:        []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }},
	}
}

// metricsReviews counts the reviews the metrics endpoint asks of the API server. They
// are POSTs, and client-go's rest_client_requests_total counts them with the
// controller's own requests, by method only: a reader who wants what the controller
// wrote (a test asserting that a standby writes nothing) subtracts these.
var metricsReviews = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "surveyor_metrics_reviews_total",
	Help: "TokenReviews and SubjectAccessReviews the metrics endpoint sent to authenticate and authorize scrapers (results are cached for a minute or more).",
}, []string{"kind"})

// countingReviews wraps a filter provider so that the requests of its review clients
// are counted in metricsReviews.
func countingReviews(provide func(*rest.Config, *http.Client) (metricsserver.Filter, error)) func(*rest.Config, *http.Client) (metricsserver.Filter, error) {
	return func(cfg *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
		// Registered when the endpoint starts, not at init: a process that serves no
		// metrics has no such counter. A second endpoint (in a test) shares the first's.
		if err := metrics.Registry.Register(metricsReviews); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return nil, fmt.Errorf("registering surveyor_metrics_reviews_total: %w", err)
		}
		counted := *hc
		next := hc.Transport
		if next == nil {
			next = http.DefaultTransport
		}
		counted.Transport = reviewCounter{next: next}
		return provide(cfg, &counted)
	}
}

// reviewCounter counts each request by the kind of review it posts.
type reviewCounter struct{ next http.RoundTripper }

func (c reviewCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	kind := "other"
	switch {
	case strings.HasSuffix(r.URL.Path, "/tokenreviews"):
		kind = "TokenReview"
	case strings.HasSuffix(r.URL.Path, "/subjectaccessreviews"):
		kind = "SubjectAccessReview"
	}
	metricsReviews.WithLabelValues(kind).Inc()
	return c.next.RoundTrip(r)
}
