package metricsauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/lru"
)

// fakeTokens knows the tokens in users; err, when set, is every answer.
type fakeTokens struct {
	users map[string]authenticationv1.UserInfo
	err   error
	calls int
}

func (f *fakeTokens) Create(_ context.Context, tr *authenticationv1.TokenReview, _ metav1.CreateOptions) (*authenticationv1.TokenReview, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	out := tr.DeepCopy()
	if u, ok := f.users[tr.Spec.Token]; ok {
		out.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: u}
	} else {
		out.Status = authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}
	}
	return out, nil
}

// fakeAccess allows the users in allowed to get /metrics, and remembers the last review.
type fakeAccess struct {
	allowed map[string]bool
	last    *authorizationv1.SubjectAccessReview
	calls   int
}

func (f *fakeAccess) Create(_ context.Context, sar *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	f.calls++
	f.last = sar.DeepCopy()
	out := sar.DeepCopy()
	a := sar.Spec.NonResourceAttributes
	out.Status.Allowed = f.allowed[sar.Spec.User] && a != nil && a.Path == "/metrics" && a.Verb == "get"
	return out, nil
}

func testReviewer(tokens *fakeTokens, access *fakeAccess, now *time.Time) http.Handler {
	r := &reviewer{tokens: tokens, access: access, now: func() time.Time { return *now }, decisions: lru.New(maxDecisions)}
	h, _ := r.filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("metrics"))
	}))
	return h
}

func serve(h http.Handler, method, path, authorization string) int {
	req := httptest.NewRequest(method, path, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

func TestFilter(t *testing.T) {
	users := map[string]authenticationv1.UserInfo{
		"reader-token":   {Username: "system:serviceaccount:monitoring:prometheus", UID: "u1", Groups: []string{"system:serviceaccounts"}, Extra: map[string]authenticationv1.ExtraValue{"k": {"v"}}},
		"stranger-token": {Username: "system:serviceaccount:apps:default"},
	}
	tests := []struct {
		name, method, path, authorization string
		want                              int
	}{
		{"no token", http.MethodGet, "/metrics", "", http.StatusUnauthorized},
		{"not a bearer token", http.MethodGet, "/metrics", "Basic cmVhZGVyOnB3", http.StatusUnauthorized},
		{"empty bearer token", http.MethodGet, "/metrics", "Bearer ", http.StatusUnauthorized},
		{"a token the API server does not know", http.MethodGet, "/metrics", "Bearer nobody", http.StatusUnauthorized},
		{"a known token without the right", http.MethodGet, "/metrics", "Bearer stranger-token", http.StatusForbidden},
		{"a metrics reader", http.MethodGet, "/metrics", "Bearer reader-token", http.StatusOK},
		{"a metrics reader, scheme in lower case", http.MethodGet, "/metrics", "bearer reader-token", http.StatusOK},
		{"a metrics reader, another path", http.MethodGet, "/debug", "Bearer reader-token", http.StatusForbidden},
		{"a metrics reader, another verb", http.MethodPost, "/metrics", "Bearer reader-token", http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Unix(1000, 0)
			access := &fakeAccess{allowed: map[string]bool{"system:serviceaccount:monitoring:prometheus": true}}
			h := testReviewer(&fakeTokens{users: users}, access, &now)
			if got := serve(h, tt.method, tt.path, tt.authorization); got != tt.want {
				t.Errorf("status %d, want %d", got, tt.want)
			}
		})
	}
	t.Run("the reviewed user is the token's, with its groups and extra", func(t *testing.T) {
		now := time.Unix(1000, 0)
		access := &fakeAccess{allowed: map[string]bool{}}
		serve(testReviewer(&fakeTokens{users: users}, access, &now), http.MethodGet, "/metrics", "Bearer reader-token")
		s := access.last.Spec
		if s.User != "system:serviceaccount:monitoring:prometheus" || s.UID != "u1" || len(s.Groups) != 1 || s.Extra["k"][0] != "v" {
			t.Errorf("reviewed %+v", s)
		}
	})
}

// TestFilterReusesDecisions: a scraper's token is reviewed once a minute, not once a
// scrape; a refusal is reviewed again sooner.
func TestFilterReusesDecisions(t *testing.T) {
	now := time.Unix(1000, 0)
	tokens := &fakeTokens{users: map[string]authenticationv1.UserInfo{"reader-token": {Username: "reader"}}}
	access := &fakeAccess{allowed: map[string]bool{"reader": true}}
	h := testReviewer(tokens, access, &now)
	for range 4 {
		if got := serve(h, http.MethodGet, "/metrics", "Bearer reader-token"); got != http.StatusOK {
			t.Fatalf("status %d", got)
		}
		now = now.Add(15 * time.Second)
	}
	if tokens.calls != 1 || access.calls != 1 {
		t.Errorf("4 scrapes within a minute: %d token and %d access reviews, want 1 and 1", tokens.calls, access.calls)
	}
	now = now.Add(allowTTL)
	serve(h, http.MethodGet, "/metrics", "Bearer reader-token")
	if tokens.calls != 2 {
		t.Errorf("after the decision expired: %d token reviews, want 2", tokens.calls)
	}
	// Refused now, allowed once the binding exists: the refusal is not kept long.
	delete(access.allowed, "reader")
	now = now.Add(allowTTL + time.Second)
	if got := serve(h, http.MethodGet, "/metrics", "Bearer reader-token"); got != http.StatusForbidden {
		t.Fatalf("status %d, want 403", got)
	}
	access.allowed["reader"] = true
	now = now.Add(denyTTL + time.Second)
	if got := serve(h, http.MethodGet, "/metrics", "Bearer reader-token"); got != http.StatusOK {
		t.Errorf("status %d after the refusal expired, want 200", got)
	}
}

// TestFilterWhenTheAPIServerFails: no metrics, and a status that says to try again.
func TestFilterWhenTheAPIServerFails(t *testing.T) {
	now := time.Unix(1000, 0)
	h := testReviewer(&fakeTokens{err: errors.New("connection refused")}, &fakeAccess{}, &now)
	if got := serve(h, http.MethodGet, "/metrics", "Bearer reader-token"); got != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503", got)
	}
}
