package realizer

import (
	"context"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/surveyor-dev/surveyor/internal/echo"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// TestPanicStatusKeepsANewerStatus: a reconcile panics while the cache still holds the
// owner from before its last status write (Complete=True). The panic's condition is
// written on top of that status, not over it with the cache's older one.
func TestPanicStatusKeepsANewerStatus(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	wl := workloadNamed("w", "uid-w")
	wl.Generation = 1
	server := fake.NewClientBuilder().WithScheme(scheme).WithObjects(wl).WithStatusSubresource(wl).Build()
	stale := &v1alpha1.Workload{}
	if err := server.Get(ctx, client.ObjectKeyFromObject(wl), stale); err != nil {
		t.Fatal(err)
	}
	// The write the cache has not seen yet.
	done := stale.DeepCopy()
	done.Status.Conditions = []metav1.Condition{{
		Type: v1alpha1.ConditionComplete, Status: metav1.ConditionTrue, Reason: "Succeeded", LastTransitionTime: metav1.Now(),
	}}
	if err := server.Status().Update(ctx, done); err != nil {
		t.Fatal(err)
	}

	// The cache: its first read panics (standing in for a bug anywhere in a
	// reconcile), and it serves the copy from before the write.
	var reads atomic.Int32
	cache := interceptor.NewClient(server, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if reads.Add(1) == 1 {
				panic("a bug")
			}
			stale.DeepCopyInto(obj.(*v1alpha1.Workload))
			return nil
		},
	})
	r := &OwnerReconciler{kind: v1alpha1.Workloads, client: cache, live: server, echoes: &echo.Echoes{}, status: clientStatusWriter{server}}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(wl)}); err == nil {
		t.Fatal("a panicking reconcile returned no error: the owner would not be retried")
	}

	got := &v1alpha1.Workload{}
	if err := server.Get(ctx, client.ObjectKeyFromObject(wl), got); err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionComplete) {
		t.Errorf("Complete=True was dropped by the panic's status write: %+v", got.Status.Conditions)
	}
	if ready := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady); ready == nil || ready.Reason != v1alpha1.ReasonReconcilePanicked {
		t.Errorf("Ready = %+v, want reason %s", ready, v1alpha1.ReasonReconcilePanicked)
	}
}

// clientStatusWriter writes status through a controller-runtime client, for tests against
// its fake; like restStatusWriter, a stale resourceVersion is a conflict.
type clientStatusWriter struct{ client.Client }

func (w clientStatusWriter) update(ctx context.Context, obj v1alpha1.Object) error {
	return w.Status().Update(ctx, obj)
}
