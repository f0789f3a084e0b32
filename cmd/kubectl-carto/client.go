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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// kind is a carto.run kind the plugin reads: its resource, how users name it, and how
// to make one.
type kind struct {
	// Kind is the kind, e.g. Workload.
	Kind string
	// Resource is its plural resource, e.g. workloads.
	Resource string
	// Namespaced kinds are read in a namespace.
	Namespaced bool
	// Names are what users may call it on the command line.
	Names   []string
	newObj  func() client.Object
	newList func() runtime.Object
	// items are the objects of a list of this kind; nil for the blueprint kinds, which
	// the plugin reads one by one.
	items func(runtime.Object) []client.Object
}

var (
	workloads = &kind{
		Kind: v1alpha1.KindWorkload, Resource: "workloads", Namespaced: true,
		Names:   []string{"workload", "workloads", "wld"},
		newObj:  func() client.Object { return &v1alpha1.Workload{} },
		newList: func() runtime.Object { return &v1alpha1.WorkloadList{} },
		items: func(l runtime.Object) []client.Object {
			var out []client.Object
			for i := range l.(*v1alpha1.WorkloadList).Items {
				out = append(out, &l.(*v1alpha1.WorkloadList).Items[i])
			}
			return out
		},
	}
	deliverables = &kind{
		Kind: v1alpha1.KindDeliverable, Resource: "deliverables", Namespaced: true,
		Names:   []string{"deliverable", "deliverables", "dlv"},
		newObj:  func() client.Object { return &v1alpha1.Deliverable{} },
		newList: func() runtime.Object { return &v1alpha1.DeliverableList{} },
		items: func(l runtime.Object) []client.Object {
			var out []client.Object
			for i := range l.(*v1alpha1.DeliverableList).Items {
				out = append(out, &l.(*v1alpha1.DeliverableList).Items[i])
			}
			return out
		},
	}
	supplyChains = &kind{
		Kind: v1alpha1.KindClusterSupplyChain, Resource: "clustersupplychains",
		Names:   []string{"clustersupplychain", "clustersupplychains", "csc", "supplychain"},
		newObj:  func() client.Object { return &v1alpha1.ClusterSupplyChain{} },
		newList: func() runtime.Object { return &v1alpha1.ClusterSupplyChainList{} },
	}
	deliveries = &kind{
		Kind: v1alpha1.KindClusterDelivery, Resource: "clusterdeliveries",
		Names:   []string{"clusterdelivery", "clusterdeliveries", "cd", "delivery"},
		newObj:  func() client.Object { return &v1alpha1.ClusterDelivery{} },
		newList: func() runtime.Object { return &v1alpha1.ClusterDeliveryList{} },
	}
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
func (c *cluster) get(ctx context.Context, k *kind, namespace, name string) (client.Object, error) {
	obj := k.newObj()
	err := c.rest.Get().NamespaceIfScoped(namespace, k.Namespaced).Resource(k.Resource).Name(name).Do(ctx).Into(obj)
	return obj, explain(err, k, namespace, name)
}

// list reads the objects of kind k in namespace ("" for all namespaces).
func (c *cluster) list(ctx context.Context, k *kind, namespace string) ([]client.Object, error) {
	l := k.newList()
	err := c.rest.Get().NamespaceIfScoped(namespace, k.Namespaced && namespace != "").Resource(k.Resource).Do(ctx).Into(l)
	if err != nil {
		return nil, explain(err, k, namespace, "")
	}
	return k.items(l), nil
}

// watch calls seen with every version of the objects of kind k in namespace (and named
// name, unless empty), the current ones first, until seen says it is done or ctx ends.
// It returns the context's error when ctx ends first.
func (c *cluster) watch(ctx context.Context, k *kind, namespace, name string, seen func(client.Object, bool) (bool, error)) error {
	selector := fields.Everything()
	if name != "" {
		selector = fields.OneTermEqualSelector("metadata.name", name)
	}
	ns := namespace
	if !k.Namespaced {
		ns = metav1.NamespaceAll
	}
	lw := cache.NewListWatchFromClient(c.rest, k.Resource, ns, selector)
	_, err := watchtools.UntilWithSync(ctx, lw, k.newObj(), nil, func(e watch.Event) (bool, error) {
		obj, ok := e.Object.(client.Object)
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
