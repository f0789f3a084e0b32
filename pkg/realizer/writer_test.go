package realizer

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// TestStatusWriterPaths: the one status writer PUTs the status subresource of namespaced kinds
// (owners, Runnables) in their namespace and of cluster-scoped ones (blueprints, templates)
// without one, and takes the resourceVersion of the answer.
func TestStatusWriterPaths(t *testing.T) {
	tests := []struct {
		name string
		kind *v1alpha1.KindInfo
		obj  v1alpha1.Object
		want string
	}{
		{"workload", &v1alpha1.OwnerKinds[0].KindInfo,
			&v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}},
			"/apis/carto.run/v1alpha1/namespaces/ns/workloads/w/status"},
		{"supply chain", &v1alpha1.OwnerKinds[0].Blueprint.KindInfo,
			&v1alpha1.ClusterSupplyChain{ObjectMeta: metav1.ObjectMeta{Name: "sc"}},
			"/apis/carto.run/v1alpha1/clustersupplychains/sc/status"},
		{"template", &v1alpha1.TemplateKinds[0].KindInfo,
			v1alpha1.TemplateKinds[0].New(),
			"/apis/carto.run/v1alpha1/" + v1alpha1.TemplateKinds[0].Resource + "/t/status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = r.Method + " " + r.URL.Path
				_, _ = w.Write([]byte(`{"metadata":{"resourceVersion":"42"}}`))
			}))
			defer srv.Close()
			scheme := runtime.NewScheme()
			if err := v1alpha1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			rc, err := rest.RESTClientFor(&rest.Config{Host: srv.URL, APIPath: "/apis", ContentConfig: rest.ContentConfig{
				GroupVersion: &v1alpha1.GroupVersion, ContentType: runtime.ContentTypeJSON,
				NegotiatedSerializer: serializer.NewCodecFactory(scheme).WithoutConversion(),
			}})
			if err != nil {
				t.Fatal(err)
			}
			w := &restStatusWriter{rest: rc, gvk: v1alpha1.GroupVersion.WithKind(tt.kind.Kind), resource: tt.kind.Resource, namespaced: tt.kind.Namespaced}
			if tt.obj.GetName() == "" {
				tt.obj.SetName("t")
			}
			if err := w.update(context.Background(), tt.obj); err != nil {
				t.Fatal(err)
			}
			if want := "PUT " + tt.want; got != want {
				t.Errorf("request %q, want %q", got, want)
			}
			if rv := tt.obj.GetResourceVersion(); rv != "42" {
				t.Errorf("resourceVersion %q, want 42", rv)
			}
		})
	}
}
