package impersonate

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// impersonationServer answers every GET with an empty ConfigMap and records the
// impersonated user of each request.
func impersonationServer(t *testing.T) (*rest.Config, func() []string) {
	var mu sync.Mutex
	var users []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		users = append(users, r.Header.Get("Impersonate-User"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"apps"}}`)
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), users...)
	}
}

func testImpersonator(t *testing.T, cfg *rest.Config, size int) *Impersonator {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	return New(cfg, scheme, mapper, size)
}

func getConfigMap(ctx context.Context, c client.Client) error {
	return c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "c"}, &corev1.ConfigMap{})
}

// TestImpersonatingClientsShareOneRateLimiter: the burst is the controller's, not one
// per ServiceAccount. With a burst of 3 and a refill too slow to matter, three accounts
// spend it, and a fourth account's request is refused by the limiter at once (the wait
// would outlast its deadline) instead of getting a bucket of its own.
func TestImpersonatingClientsShareOneRateLimiter(t *testing.T) {
	cfg, users := impersonationServer(t)
	cfg.QPS, cfg.Burst = 0.001, 3
	imp := testImpersonator(t, cfg, 16)
	for i := range 4 {
		c, err := imp.ClientFor("apps", fmt.Sprintf("sa-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = getConfigMap(ctx, c)
		cancel()
		switch {
		case i < 3 && err != nil:
			t.Fatalf("request %d, within the burst: %v", i, err)
		case i == 3 && err == nil:
			t.Fatal("a fourth ServiceAccount got past a burst of 3 already spent: each account has its own limiter")
		}
	}
	got := users()
	if len(got) != 3 || got[0] != "system:serviceaccount:apps:sa-0" {
		t.Errorf("requests reached the server as %v, want sa-0, sa-1, sa-2", got)
	}
}

// TestImpersonatingClientsAreBounded: past its size the cache evicts the account used
// least recently; an account in use keeps its client.
func TestImpersonatingClientsAreBounded(t *testing.T) {
	cfg, _ := impersonationServer(t)
	imp := testImpersonator(t, cfg, 4)
	hot, err := imp.ClientFor("apps", "hot")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if _, err := imp.ClientFor("apps", fmt.Sprintf("sa-%d", i)); err != nil {
			t.Fatal(err)
		}
		again, err := imp.ClientFor("apps", "hot")
		if err != nil {
			t.Fatal(err)
		}
		if again != hot {
			t.Fatalf("after %d other accounts: the account in use got a new client", i+1)
		}
		if n := imp.clients.Len(); n > 4 {
			t.Fatalf("after %d accounts: %d clients kept, want at most 4", i+1, n)
		}
	}
	if _, ok := imp.clients.Get("system:serviceaccount:apps:sa-0"); ok {
		t.Error("an account unused since 99 others is still cached")
	}
}
