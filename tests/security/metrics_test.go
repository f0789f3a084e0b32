package security

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/surveyor-dev/surveyor/hack/cluster"
	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/internal/metricsauth"
)

// The controller's metrics endpoint, as cmd/surveyor serves it and authenticated as the
// controller's own ServiceAccount (so its generated role is what is tested), answers
// nobody it cannot identify (401), nobody who may not get /metrics (403), and a
// ServiceAccount bound to config/rbac's surveyor-metrics-reader (200); plain HTTP gets
// no metrics at all.
func TestMetricsNeedAuthenticationAndAuthorization(t *testing.T) {
	cfg := controllerConfig(t)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	port, err := cluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	srv, err := metricsserver.NewServer(metricsauth.Options(addr, t.TempDir(), "tls.crt", "tls.key"), cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Start(ctx) }()
	url := "https://" + addr + "/metrics"

	ns := newNamespace(t, "sec-metrics")
	reader, stranger := metricsToken(t, ns, "scraper", true), metricsToken(t, ns, "stranger", false)
	status := func(token string) (int, string) {
		resp, err := harness.MetricsClient(token).Get(url)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		return resp.StatusCode, resp.Status
	}
	// The reader's binding reaches the authorizer's informers a moment after it is made.
	eventually(t, 30*time.Second, func() (bool, string) {
		code, s := status(reader)
		return code == http.StatusOK, "a metrics reader got " + s
	})
	families, err := harness.ScrapeMetrics(ctx, harness.MetricsClient(reader), url)
	if err != nil {
		t.Fatalf("a metrics reader's scrape: %v", err)
	}
	// The reviews are counted apart from the controller's own requests.
	for _, kind := range []string{"TokenReview", "SubjectAccessReview"} {
		if n := families.Sum("surveyor_metrics_reviews_total", map[string]string{"kind": kind}); n < 1 {
			t.Errorf("surveyor_metrics_reviews_total{kind=%q} = %v after a scrape, want at least 1", kind, n)
		}
	}
	for _, tc := range []struct {
		who, token string
		want       int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"a token the API server does not know", "not-a-token", http.StatusUnauthorized},
		{"a ServiceAccount without the role", stranger, http.StatusForbidden},
	} {
		if code, s := status(tc.token); code != tc.want {
			t.Errorf("%s: %s, want %d", tc.who, s, tc.want)
		}
	}
	// Over plain HTTP the TLS server answers with an error, never with metrics.
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP got the metrics")
		}
	}
}

// metricsToken makes ServiceAccount ns/name, bound to surveyor-metrics-reader when
// reader is set, and returns a token for it.
func metricsToken(t *testing.T, ns, name string, reader bool) string {
	t.Helper()
	env.CreateAll(ctx, t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	if reader {
		env.CreateAll(ctx, t, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "surveyor-metrics-reader"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
		})
	}
	cs, err := kubernetes.NewForConfig(env.Cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(fmt.Errorf("requesting a token for %s/%s: %w", ns, name, err))
	}
	return tr.Status.Token
}
