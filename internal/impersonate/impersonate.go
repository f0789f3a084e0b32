package impersonate

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MaxClients bounds the clients kept, one per ServiceAccount that stamps:
// a cluster has far fewer accounts in active use, and one evicted is rebuilt on its
// next use for the cost of a map entry and a few allocations.
const MaxClients = 1024

// Impersonator hands out clients that act as a ServiceAccount, so RBAC decides what
// an owner may stamp. Clients are kept per account, the most recently used
// MaxClients of them; they share the base config's TLS transport
// (client-go caches it by TLS settings), so the cost is one cache entry.
//
// Every client it makes shares one rate limiter, built from the base config's QPS and
// burst: with a limiter per client, as client-go makes by default, the controller's
// requests per second would grow with the number of ServiceAccounts, which tenants
// choose. One Impersonator serves every owner kind for the same reason.
type Impersonator struct {
	base    *rest.Config
	scheme  *runtime.Scheme
	mapper  meta.RESTMapper
	limiter flowcontrol.RateLimiter // nil: no client-side limit (a QPS below zero)

	mu      sync.Mutex // held across get-or-create, so an account gets one client
	clients *lru.Cache
}

// New returns an Impersonator that derives its clients from base, with scheme and
// mapper, and keeps the size most recently used of them.
func New(base *rest.Config, scheme *runtime.Scheme, mapper meta.RESTMapper, size int) *Impersonator {
	return &Impersonator{base: base, scheme: scheme, mapper: mapper, limiter: sharedLimiter(base), clients: lru.New(size)}
}

// sharedLimiter is the limiter client-go would give one client of cfg, made once.
func sharedLimiter(cfg *rest.Config) flowcontrol.RateLimiter {
	if cfg.RateLimiter != nil {
		return cfg.RateLimiter
	}
	qps, burst := cfg.QPS, cfg.Burst
	if qps == 0 {
		qps = rest.DefaultQPS
	}
	if burst == 0 {
		burst = rest.DefaultBurst
	}
	if qps < 0 {
		return nil
	}
	return flowcontrol.NewTokenBucketRateLimiter(qps, burst)
}

// ClientFor returns a client authenticated as system:serviceaccount:<namespace>:<name>.
func (i *Impersonator) ClientFor(namespace, name string) (client.Client, error) {
	user := "system:serviceaccount:" + namespace + ":" + name
	i.mu.Lock()
	defer i.mu.Unlock()
	if c, ok := i.clients.Get(user); ok {
		return c.(client.Client), nil
	}
	cfg := rest.CopyConfig(i.base)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	cfg.RateLimiter = i.limiter // nil only when the base config's QPS, copied, is below zero
	c, err := client.New(cfg, client.Options{Scheme: i.scheme, Mapper: i.mapper})
	if err != nil {
		return nil, fmt.Errorf("creating a client for %s: %w", user, err)
	}
	i.clients.Add(user, c)
	return c, nil
}
