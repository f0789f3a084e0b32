package realizer

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/surveyor-dev/surveyor/internal/echo"
	"github.com/surveyor-dev/surveyor/internal/watch"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

func workloadNamed(name string, uid types.UID) *v1alpha1.Workload {
	return &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, UID: uid}}
}

func createdObject(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetName(name)
	return u
}

func TestCreatedObjectsKeepsOneOwnerGeneration(t *testing.T) {
	var c createdObjects
	old := workloadNamed("w", "uid-1")
	c.remember(old, "run", createdObject("run-1"))
	if got := c.get(old, "run"); got == nil || got.GetName() != "run-1" {
		t.Fatalf("get after remember = %v", got)
	}
	// The same name, recreated: the old owner's objects are not the new one's.
	recreated := workloadNamed("w", "uid-2")
	if got := c.get(recreated, "run"); got != nil {
		t.Errorf("a recreated owner sees its predecessor's object %s", got.GetName())
	}
	c.remember(recreated, "run", createdObject("run-2"))
	if n := c.len(); n != 1 {
		t.Errorf("%d owners held after a recreate, want 1", n)
	}
	c.forget(recreated, "run")
	if n := c.len(); n != 0 {
		t.Errorf("%d owners held after their last entry was forgotten, want 0", n)
	}
	c.remember(recreated, "run", createdObject("run-3"))
	c.forgetOwner(types.NamespacedName{Namespace: "apps", Name: "w"})
	if n := c.len(); n != 0 {
		t.Errorf("%d owners held after forgetOwner, want 0", n)
	}
}

func TestCreatedObjectsIsBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	c := createdObjects{max: 10, ttl: time.Minute, now: func() time.Time { return now }}
	for i := range 1000 {
		now = now.Add(time.Second)
		c.remember(workloadNamed(fmt.Sprintf("w%d", i), types.UID(fmt.Sprint(i))), "run", createdObject("o"))
		if n := c.len(); n > 10 {
			t.Fatalf("after %d owners: %d held, want at most 10", i+1, n)
		}
	}
	// The newest owner's entry survived the eviction that made room for it.
	if c.get(workloadNamed("w999", "999"), "run") == nil {
		t.Error("the entry just remembered was evicted")
	}
}

// TestReconcileForgetsCreatedObjectsOfGoneOwners: an owner that is deleted, or being
// deleted, leaves no entry behind (it used to stay for the life of the process).
func TestReconcileForgetsCreatedObjectsOfGoneOwners(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	deleting := workloadNamed("deleting", "uid-d")
	deleting.Finalizers = []string{"example.com/hold"}
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(deleting).Build()
	// What the watcher forgets of a gone owner is internal/watch's TestForget.
	r := &OwnerReconciler{kind: v1alpha1.Workloads, client: cl, echoes: &echo.Echoes{}, watch: &watch.Watcher{}}
	gone := workloadNamed("gone", "uid-g")
	r.created.remember(gone, "run", createdObject("a"))
	r.created.remember(deleting, "run", createdObject("b"))
	for _, name := range []string{"gone", "deleting"} {
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "apps", Name: name}}); err != nil {
			t.Fatalf("reconciling %s: %v", name, err)
		}
	}
	if n := r.created.len(); n != 0 {
		t.Errorf("%d owners still have created objects remembered, want 0", n)
	}
}

// TestReconcileForgetsCreatedObjectsOfCompleteOwners: a Complete owner creates nothing
// more, so its entries go (they used to stay for the life of the process).
func TestReconcileForgetsCreatedObjectsOfCompleteOwners(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	done := workloadNamed("done", "uid-c")
	done.Status.Conditions = []metav1.Condition{{
		Type: v1alpha1.ConditionComplete, Status: metav1.ConditionTrue, Reason: "Succeeded", LastTransitionTime: metav1.Now(),
	}}
	cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(done).WithStatusSubresource(done).Build()
	// The status write goes to a server that accepts it.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"metadata":{"resourceVersion":"99"}}`)
	}))
	defer srv.Close()
	rc, err := rest.RESTClientFor(&rest.Config{
		Host: srv.URL, APIPath: "/apis",
		ContentConfig: rest.ContentConfig{
			GroupVersion: &v1alpha1.GroupVersion, ContentType: runtime.ContentTypeJSON,
			NegotiatedSerializer: serializer.NewCodecFactory(scheme).WithoutConversion(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &OwnerReconciler{
		kind: v1alpha1.Workloads, client: cl, echoes: &echo.Echoes{}, now: metav1.Now,
		status: &restStatusWriter{rest: rc, gvk: v1alpha1.GroupVersion.WithKind(v1alpha1.KindWorkload), resource: "workloads"},
	}
	r.created.remember(done, "run", createdObject("a"))
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "apps", Name: "done"}}); err != nil {
		t.Fatal(err)
	}
	if n := r.created.len(); n != 0 {
		t.Errorf("a Complete owner still has %d created objects remembered, want 0", n)
	}
}
