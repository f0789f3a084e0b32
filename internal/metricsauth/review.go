package metricsauth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// How long a decision is reused for the same token and request: a scraper comes every
// 15 to 60 s, and asks nothing new. An allowed token is trusted for a minute after the
// API server said so (a revoked binding takes that long to bite, as with
// controller-runtime's filter); a refusal is kept shorter, so that a binding just made
// works soon.
const (
	allowTTL      = time.Minute
	denyTTL       = 10 * time.Second
	maxDecisions  = 1024
	reviewTimeout = 10 * time.Second
)

// tokenReviewer and accessReviewer are the two calls the filter makes; the typed
// clients satisfy them, and tests give fakes.
type tokenReviewer interface {
	Create(ctx context.Context, tr *authenticationv1.TokenReview, opts metav1.CreateOptions) (*authenticationv1.TokenReview, error)
}

type accessReviewer interface {
	Create(ctx context.Context, sar *authorizationv1.SubjectAccessReview, opts metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error)
}

// reviews counts the reviews the filter asks of the API server. They are POSTs, and
// client-go's rest_client_requests_total counts them with the controller's own requests,
// by method only: a reader who wants what the controller wrote (a test asserting that a
// standby writes nothing) subtracts these.
var reviews = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "surveyor_metrics_reviews_total",
	Help: "TokenReviews and SubjectAccessReviews the metrics endpoint sent to authenticate and authorize scrapers (decisions are reused for up to a minute).",
}, []string{"kind"})

// reviewer authenticates and authorizes requests to the metrics endpoint.
type reviewer struct {
	tokens tokenReviewer
	access accessReviewer
	now    func() time.Time

	mu        sync.Mutex
	decisions *lru.Cache // decisionKey → decision
}

// decisionKey is what a decision was made for: a digest of the token (the token itself
// is not kept), the verb and the path.
type decisionKey struct {
	token      [sha256.Size]byte
	verb, path string
}

type decision struct {
	status int // http.StatusOK, StatusUnauthorized or StatusForbidden
	until  time.Time
}

func newReviewer(cfg *rest.Config, hc *http.Client) (*reviewer, error) {
	authn, err := authenticationclient.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("creating the TokenReview client: %w", err)
	}
	authz, err := authorizationclient.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("creating the SubjectAccessReview client: %w", err)
	}
	// Registered when an endpoint is made, not at init: a process that serves no
	// metrics has no such counter. A second endpoint (in a test) shares the first's.
	if err := metrics.Registry.Register(reviews); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
		return nil, fmt.Errorf("registering surveyor_metrics_reviews_total: %w", err)
	}
	return &reviewer{tokens: authn.TokenReviews(), access: authz.SubjectAccessReviews(), now: time.Now, decisions: lru.New(maxDecisions)}, nil
}

// filter is a metricsserver.Filter: it serves next only to requests the API server
// authenticates and authorizes.
func (r *reviewer) filter(log logr.Logger, next http.Handler) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		status, err := r.decide(req)
		switch {
		case err != nil:
			// The API server could not answer: the caller may try again.
			log.Error(err, "reviewing a metrics request")
			http.Error(w, "the API server could not review this request", http.StatusServiceUnavailable)
		case status == http.StatusOK:
			next.ServeHTTP(w, req)
		default:
			http.Error(w, http.StatusText(status), status)
		}
	}), nil
}

// decide is the status a request gets: 200 when its bearer token belongs to someone
// the API server says may make it, 401 when there is no token or the API server does
// not know it, 403 when its owner may not; an error when a review failed.
func (r *reviewer) decide(req *http.Request) (int, error) {
	token, ok := bearerToken(req)
	if !ok {
		return http.StatusUnauthorized, nil
	}
	key := decisionKey{token: sha256.Sum256([]byte(token)), verb: strings.ToLower(req.Method), path: req.URL.Path}
	r.mu.Lock()
	d, ok := r.decisions.Get(key)
	r.mu.Unlock()
	if ok && r.now().Before(d.(decision).until) {
		return d.(decision).status, nil
	}
	ctx, cancel := context.WithTimeout(req.Context(), reviewTimeout)
	defer cancel()
	status, err := r.review(ctx, token, key)
	if err != nil {
		return 0, err
	}
	ttl := denyTTL
	if status == http.StatusOK {
		ttl = allowTTL
	}
	r.mu.Lock()
	r.decisions.Add(key, decision{status: status, until: r.now().Add(ttl)})
	r.mu.Unlock()
	return status, nil
}

// review asks the API server who token belongs to, then whether they may make the
// request key describes.
func (r *reviewer) review(ctx context.Context, token string, key decisionKey) (int, error) {
	reviews.WithLabelValues("TokenReview").Inc()
	tr, err := r.tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return 0, fmt.Errorf("token review: %w", err)
	}
	if !tr.Status.Authenticated {
		return http.StatusUnauthorized, nil
	}
	user := tr.Status.User
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	reviews.WithLabelValues("SubjectAccessReview").Inc()
	sar, err := r.access.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: key.path, Verb: key.verb},
	}}, metav1.CreateOptions{})
	if err != nil {
		return 0, fmt.Errorf("subject access review of %s: %w", user.Username, err)
	}
	if !sar.Status.Allowed || sar.Status.Denied {
		return http.StatusForbidden, nil
	}
	return http.StatusOK, nil
}

// bearerToken is the request's bearer token, if it has one.
func bearerToken(req *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
