package metricsauth

import (
	"crypto/tls"
	"net/http"

	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The metrics endpoint asks the API server who a scraper is and whether it may get /metrics.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Options serve the metrics endpoint as kubebuilder projects do: over TLS, to a caller
// whose bearer token the API server accepts (TokenReview) and who may get /metrics
// (SubjectAccessReview; config/rbac's surveyor-metrics-reader grants it). The metrics
// name the kinds, blueprints and templates the controller works with, and their request
// counts show what tenants do, so they are not for anyone who can reach the port. A
// missing certificate in certDir (or no certDir) gives a self-signed one, held in
// memory, which suits the read-only root filesystem of config/manager.
//
// The server speaks HTTP/1.1 only: HTTP/2's stream resets let a client that is not
// even authenticated make the server work without bound (CVE-2023-44487), and a scrape
// gains nothing from HTTP/2.
func Options(addr, certDir, certName, keyName string) metricsserver.Options {
	return metricsserver.Options{
		BindAddress:    addr,
		SecureServing:  true,
		FilterProvider: FilterProvider,
		CertDir:        certDir,
		CertName:       certName,
		KeyName:        keyName,
		TLSOpts:        []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }},
	}
}

// FilterProvider is a metricsserver.Options FilterProvider that lets through only
// requests the API server authenticates and authorizes, asking it as cfg.
//
// It does what controller-runtime's filters.WithAuthenticationAndAuthorization does, in
// the few dozen lines of review.go: that one brings k8s.io/apiserver's authentication
// stack along, which made the controller's binary and its memory much larger (docs/tenancy.md),
// for two API calls.
func FilterProvider(cfg *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
	r, err := newReviewer(cfg, hc)
	if err != nil {
		return nil, err
	}
	return r.filter, nil
}
