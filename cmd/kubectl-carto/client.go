package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// kind is a carto.run kind the plugin reads, as the table of kinds describes it.
type kind = v1alpha1.KindInfo

var (
	workloads    = &v1alpha1.Workloads.KindInfo
	deliverables = &v1alpha1.Deliverables.KindInfo
	supplyChains = &v1alpha1.SupplyChains.KindInfo
	deliveries   = &v1alpha1.Deliveries.KindInfo
	runnables    = v1alpha1.Runnables
)

// cluster reads carto.run objects with the user's kubeconfig and RBAC.
type cluster struct {
	rest rest.Interface
	// namespace is -n, or the kubeconfig context's namespace.
	namespace string
}

// newCluster makes a client from the kubeconfig flags. It does no request: a cluster that
// cannot be reached is reported by the first one.
func newCluster(flags *genericclioptions.ConfigFlags) (*cluster, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion = &v1alpha1.GroupVersion
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	// A user's command: a handful of requests, never throttled by the client.
	cfg.QPS, cfg.Burst = 50, 100
	if cfg.UserAgent == "" {
		cfg.UserAgent = "kubectl-carto"
	}
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &cluster{rest: rc, namespace: ns}, nil
}

// get reads one object of kind k.
func (c *cluster) get(ctx context.Context, k *kind, namespace, name string) (v1alpha1.Object, error) {
	obj := k.New()
	err := c.rest.Get().NamespaceIfScoped(namespace, k.Namespaced).Resource(k.Resource).Name(name).Do(ctx).Into(obj)
	return obj, explain(err, k, namespace, name)
}

// list reads the objects of kind k in namespace ("" for all namespaces).
func (c *cluster) list(ctx context.Context, k *kind, namespace string) ([]v1alpha1.Object, error) {
	l := k.NewList()
	err := c.rest.Get().NamespaceIfScoped(namespace, k.Namespaced && namespace != "").Resource(k.Resource).Do(ctx).Into(l)
	if err != nil {
		return nil, explain(err, k, namespace, "")
	}
	return v1alpha1.Items(l), nil
}

// watch calls seen with every version of the objects of kind k in namespace (and named
// name, unless empty), the current ones first, until seen says it is done or ctx ends.
// It returns the context's error when ctx ends first.
func (c *cluster) watch(ctx context.Context, k *kind, namespace, name string, seen func(v1alpha1.Object, bool) (bool, error)) error {
	selector := fields.Everything()
	if name != "" {
		selector = fields.OneTermEqualSelector("metadata.name", name)
	}
	ns := namespace
	if !k.Namespaced {
		ns = metav1.NamespaceAll
	}
	lw := cache.NewListWatchFromClient(c.rest, k.Resource, ns, selector)
	_, err := watchtools.UntilWithSync(ctx, lw, k.New(), nil, func(e watch.Event) (bool, error) {
		obj, ok := e.Object.(v1alpha1.Object)
		if !ok {
			return false, nil
		}
		return seen(obj, e.Type == watch.Deleted)
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return explain(err, k, namespace, name)
}

// explain turns an API error into one line a user can act on: a kind the cluster does
// not serve is a missing CRD, a denial says which permission is missing.
func explain(err error, k *kind, namespace, name string) error {
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	var urlErr *url.Error
	switch {
	case errors.As(err, &urlErr):
		return fmt.Errorf("cannot reach the cluster: %w", err)
	case !errors.As(err, &status):
		return err
	}
	resource := k.Resource + "." + v1alpha1.GroupVersion.Group
	where := ""
	if k.Namespaced && namespace != "" {
		where = " in namespace " + namespace
	}
	switch {
	case apierrors.IsNotFound(err) && (status.Status().Details == nil || status.Status().Details.Name == "" ||
		// client-go's words for a 404 that is not a Status: the resource is not served.
		strings.HasPrefix(status.Status().Message, "the server could not find the requested resource")):
		return fmt.Errorf("the cluster does not serve %s (%s): is Surveyor installed? Its CRDs are in config/crd", resource, v1alpha1.GroupVersion)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s %q not found%s", strings.ToLower(k.Kind), name, where)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("not allowed by RBAC: %s", status.Status().Message)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the cluster did not accept your credentials: %s", status.Status().Message)
	}
	return fmt.Errorf("reading %s%s: %s", resource, where, status.Status().Message)
}
