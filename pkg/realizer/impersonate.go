package realizer

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// impersonator hands out clients that act as a ServiceAccount, so RBAC decides what
// an owner may stamp. Clients are cached per account; they share the base config's
// TLS transport (client-go caches it by TLS settings), so the cost is one map entry.
type impersonator struct {
	base   *rest.Config
	scheme *runtime.Scheme
	mapper meta.RESTMapper

	mu      sync.Mutex
	clients map[string]client.Client
}

func newImpersonator(base *rest.Config, scheme *runtime.Scheme, mapper meta.RESTMapper) *impersonator {
	return &impersonator{base: base, scheme: scheme, mapper: mapper, clients: map[string]client.Client{}}
}

// clientFor returns a client authenticated as system:serviceaccount:<namespace>:<name>.
func (i *impersonator) clientFor(namespace, name string) (client.Client, error) {
	user := "system:serviceaccount:" + namespace + ":" + name
	i.mu.Lock()
	defer i.mu.Unlock()
	if c, ok := i.clients[user]; ok {
		return c, nil
	}
	cfg := rest.CopyConfig(i.base)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(cfg, client.Options{Scheme: i.scheme, Mapper: i.mapper})
	if err != nil {
		return nil, fmt.Errorf("creating a client for %s: %w", user, err)
	}
	i.clients[user] = c
	return c, nil
}
