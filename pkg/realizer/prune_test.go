package realizer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/surveyor-dev/surveyor/internal/watch"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

func configMapRef(name string) *v1alpha1.StampedRef {
	return &v1alpha1.StampedRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "apps", Name: name}
}

// deniedDeletes is a fake cluster holding the ConfigMaps named, whose deletes of the
// names in denied are forbidden.
func deniedDeletes(t *testing.T, objects []string, denied ...string) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(coreMapper())
	for _, name := range objects {
		b = b.WithObjects(ownedConfigMap(name, prunedOwner))
	}
	return b.WithInterceptorFuncs(interceptor.Funcs{
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			for _, d := range denied {
				if obj.GetName() == d {
					return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, d, errors.New("no delete for you"))
				}
			}
			return c.Delete(ctx, obj, opts...)
		},
	}).Build()
}

// coreMapper maps ConfigMaps and Namespaces as the API server does: a Namespace is
// cluster-scoped.
func coreMapper() meta.RESTMapper {
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{corev1.SchemeGroupVersion})
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), meta.RESTScopeRoot)
	return mapper
}

// prunedOwner is the owner the prune tests realize: it stamped the ConfigMaps of deniedDeletes.
var prunedOwner = workloadNamed("wl", "uid")

// ownedConfigMap is a ConfigMap in apps that owner controls, or no one when owner is nil.
func ownedConfigMap(name string, owner *v1alpha1.Workload) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name}}
	if owner != nil {
		cm.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, v1alpha1.GroupVersion.WithKind("Workload"))}
	}
	return cm
}

// TestPrune: what prune deletes, and what it lists as pending because it could not, or
// may not yet.
func TestPrune(t *testing.T) {
	now := metav1.NewTime(time.Unix(2000, 0))
	earlier := metav1.NewTime(time.Unix(1000, 0))
	denied := `unable to delete ConfigMap/old: configmaps "old" is forbidden: no delete for you`
	immutable := render.Template{Spec: &v1alpha1.TemplateSpec{Lifecycle: v1alpha1.LifecycleImmutable}}
	tests := []struct {
		name    string
		objects []string // ConfigMaps in the cluster
		denied  []string // whose deletes are forbidden
		prev    []v1alpha1.ResourceStatus
		pending []v1alpha1.PendingDeletion
		now     []*render.Result
		unclean bool

		want     []v1alpha1.PendingDeletion
		wantErr  bool
		left     []string // ConfigMaps left
		warnings int
	}{{
		name:    "a resource gone from the blueprint: its object is deleted",
		objects: []string{"old", "app"},
		prev:    []v1alpha1.ResourceStatus{{Name: "old", StampedRef: configMapRef("old")}, {Name: "app", StampedRef: configMapRef("app")}},
		now:     []*render.Result{{Status: v1alpha1.ResourceStatus{Name: "app", StampedRef: configMapRef("app")}}},
		left:    []string{"app"},
	}, {
		name:    "a resource that stamps another object now: the old one is deleted",
		objects: []string{"old", "new"},
		prev:    []v1alpha1.ResourceStatus{{Name: "app", StampedRef: configMapRef("old")}},
		now:     []*render.Result{{Status: v1alpha1.ResourceStatus{Name: "app", StampedRef: configMapRef("new")}}},
		left:    []string{"new"},
	}, {
		name:    "a denied delete is listed with the API server's answer, and warned about",
		objects: []string{"old"},
		denied:  []string{"old"},
		prev:    []v1alpha1.ResourceStatus{{Name: "old", StampedRef: configMapRef("old")}},
		want:    []v1alpha1.PendingDeletion{{Resource: "old", StampedRef: *configMapRef("old"), Message: denied, Since: now}},
		wantErr: true, left: []string{"old"}, warnings: 1,
	}, {
		name:    "a delete denied again keeps its time and is not warned about again",
		objects: []string{"old"},
		denied:  []string{"old"},
		pending: []v1alpha1.PendingDeletion{{Resource: "old", StampedRef: *configMapRef("old"), Message: denied, Since: earlier}},
		want:    []v1alpha1.PendingDeletion{{Resource: "old", StampedRef: *configMapRef("old"), Message: denied, Since: earlier}},
		wantErr: true, left: []string{"old"},
	}, {
		name:    "after a pass that was not clean nothing is deleted, and everything is listed",
		objects: []string{"old", "gone-before"},
		prev:    []v1alpha1.ResourceStatus{{Name: "old", StampedRef: configMapRef("old")}},
		pending: []v1alpha1.PendingDeletion{{Resource: "gone-before", StampedRef: *configMapRef("gone-before"), Message: denied, Since: earlier}},
		unclean: true,
		want: []v1alpha1.PendingDeletion{
			{Resource: "gone-before", StampedRef: *configMapRef("gone-before"), Message: denied, Since: earlier},
			{Resource: "old", StampedRef: *configMapRef("old"), Message: waitingForSubmission, Since: now},
		},
		left: []string{"gone-before", "old"},
	}, {
		name:    "a pending deletion is deleted once allowed",
		objects: []string{"old"},
		pending: []v1alpha1.PendingDeletion{{Resource: "old", StampedRef: *configMapRef("old"), Message: denied, Since: earlier}},
	}, {
		name:    "a pending deletion of an object that is gone already is dropped",
		pending: []v1alpha1.PendingDeletion{{Resource: "old", StampedRef: *configMapRef("old"), Message: denied, Since: earlier}},
	}, {
		name:    "a pending deletion stamped again is kept, and no longer listed",
		objects: []string{"old"},
		pending: []v1alpha1.PendingDeletion{{Resource: "old", StampedRef: *configMapRef("old"), Message: denied, Since: earlier}},
		now:     []*render.Result{{Status: v1alpha1.ResourceStatus{Name: "old", StampedRef: configMapRef("old")}}},
		left:    []string{"old"},
	}, {
		name:    "a pending deletion stamped again at another version is kept, and no longer listed",
		objects: []string{"old"},
		pending: []v1alpha1.PendingDeletion{{Resource: "old", StampedRef: v1alpha1.StampedRef{APIVersion: "v1beta1", Kind: "ConfigMap", Namespace: "apps", Name: "old"}, Message: denied, Since: earlier}},
		now:     []*render.Result{{Status: v1alpha1.ResourceStatus{Name: "new", StampedRef: configMapRef("old")}}},
		left:    []string{"old"},
	}, {
		name:    "an immutable resource's older object is its retention policy's",
		objects: []string{"run-1", "run-2"},
		prev:    []v1alpha1.ResourceStatus{{Name: "run", StampedRef: configMapRef("run-1")}},
		now:     []*render.Result{{Status: v1alpha1.ResourceStatus{Name: "run", StampedRef: configMapRef("run-2")}, Object: &unstructured.Unstructured{}, Template: immutable}},
		left:    []string{"run-1", "run-2"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := deniedDeletes(t, tt.objects, tt.denied...)
			rz := &realization{
				r: &OwnerReconciler{kind: v1alpha1.Workloads, now: func() metav1.Time { return now }, live: cl}, ctx: context.Background(),
				owner:  prunedOwner,
				writer: writer{watch: &watch.Watcher{}, client: cl},
				prev:   tt.prev, pending: tt.pending,
			}
			got, err := rz.prune(tt.now, !tt.unclean)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pending (-want +got):\n%s", diff)
			}
			if (err != nil) != tt.wantErr {
				t.Errorf("error %v, want one: %v", err, tt.wantErr)
			}
			var list corev1.ConfigMapList
			if err := cl.List(context.Background(), &list); err != nil {
				t.Fatal(err)
			}
			var left []string
			for _, cm := range list.Items {
				left = append(left, cm.Name)
			}
			if diff := cmp.Diff(tt.left, left); diff != "" {
				t.Errorf("ConfigMaps left (-want +got):\n%s", diff)
			}
			rec := record.NewFakeRecorder(10)
			rz.events.Record(rec, rz.owner)
			close(rec.Events)
			warnings := 0
			for e := range rec.Events {
				if strings.HasPrefix(e, "Warning "+v1alpha1.EventStampedObjectRemovalFailed+" ") {
					warnings++
				}
			}
			if warnings != tt.warnings {
				t.Errorf("%d warnings, want %d", warnings, tt.warnings)
			}
		})
	}
}

// TestRetain: the one retention routine of immutable objects and runs deletes the oldest
// finished objects beyond the policy, never the newest nor one still running, and returns
// what is left, with the failures, which stay.
func TestRetain(t *testing.T) {
	verdicts := map[string]metav1.ConditionStatus{
		"ok-1": metav1.ConditionTrue, "ok-2": metav1.ConditionTrue, "running": metav1.ConditionUnknown,
		"failed-1": metav1.ConditionFalse, "failed-2": metav1.ConditionFalse, "ok-3": metav1.ConditionTrue,
	}
	names := []string{"ok-1", "failed-1", "ok-2", "running", "failed-2", "ok-3"} // oldest first
	cl := deniedDeletes(t, names, "ok-2")
	var objects []*unstructured.Unstructured
	for _, name := range names {
		o := &unstructured.Unstructured{}
		o.SetAPIVersion("v1")
		o.SetKind("ConfigMap")
		o.SetNamespace("apps")
		o.SetName(name)
		objects = append(objects, o)
	}
	w := writer{watch: &watch.Watcher{}, client: cl}
	var removed, failed []string
	kept, err := w.retain(context.Background(), objects, v1alpha1.RetentionPolicy{MaxSuccessfulRuns: 1, MaxFailedRuns: 1},
		func(o *unstructured.Unstructured) metav1.ConditionStatus { return verdicts[o.GetName()] },
		func(o *unstructured.Unstructured) { removed = append(removed, o.GetName()) },
		func(o *unstructured.Unstructured, _ error) { failed = append(failed, o.GetName()) })
	var left []string
	for _, o := range kept {
		left = append(left, o.GetName())
	}
	if diff := cmp.Diff([]string{"ok-2", "running", "failed-2", "ok-3"}, left); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	slices.Sort(removed)
	if diff := cmp.Diff([]string{"failed-1", "ok-1"}, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ok-2"}, failed); diff != "" {
		t.Errorf("failed (-want +got):\n%s", diff)
	}
	if err == nil || !apierrors.IsForbidden(err) {
		t.Errorf("error %v, want the denial", err)
	}
}

// TestDeleteFailureQuotesNoSecret: a webhook's answer about a Secret's delete may quote its
// data, so only the reason is told (DESIGN §12).
func TestDeleteFailureQuotesNoSecret(t *testing.T) {
	err := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "token", errors.New("data.password is hunter2"))
	got := deleteFailure(v1alpha1.StampedRef{APIVersion: "v1", Kind: "Secret", Name: "token"}, err)
	if strings.Contains(got, "hunter2") || !strings.Contains(got, "Forbidden") || !strings.Contains(got, "Secret/token") {
		t.Errorf("deleteFailure = %q", got)
	}
	if got := deleteFailure(*configMapRef("app"), err); !strings.Contains(got, "hunter2") {
		t.Errorf("a ConfigMap's failure does not quote the API server: %q", got)
	}
}

// TestPruneDeletesOnlyWhatTheOwnerControls: status is not proof of what the owner stamped.
// Anyone who can write an owner's status can list any object there: prune deletes only an
// object of the owner's namespace that the owner controls (and that one at whatever version
// its kind is served), and drops the rest without a delete.
func TestPruneDeletesOnlyWhatTheOwnerControls(t *testing.T) {
	now := metav1.NewTime(time.Unix(2000, 0))
	other := workloadNamed("other", "other-uid")
	pending := func(ref v1alpha1.StampedRef) []v1alpha1.PendingDeletion {
		return []v1alpha1.PendingDeletion{{Resource: "forged", StampedRef: ref, Since: now}}
	}
	tests := []struct {
		name    string
		prev    []v1alpha1.ResourceStatus
		pending []v1alpha1.PendingDeletion
		left    []string // ConfigMaps and Namespaces left, kind/name
		removed int      // StampedObjectRemoved events
	}{{
		name:    "a forged pending deletion of a ConfigMap no one controls",
		pending: pending(*configMapRef("team-b")),
		left:    []string{"ConfigMap/other-team", "ConfigMap/ours", "ConfigMap/team-b", "Namespace/apps", "Namespace/team-b"},
	}, {
		name:    "a forged pending deletion of another owner's ConfigMap",
		pending: pending(*configMapRef("other-team")),
		left:    []string{"ConfigMap/other-team", "ConfigMap/ours", "ConfigMap/team-b", "Namespace/apps", "Namespace/team-b"},
	}, {
		name: "a forged resource's stampedRef to a ConfigMap no one controls",
		prev: []v1alpha1.ResourceStatus{{Name: "forged", StampedRef: configMapRef("team-b")}},
		left: []string{"ConfigMap/other-team", "ConfigMap/ours", "ConfigMap/team-b", "Namespace/apps", "Namespace/team-b"},
	}, {
		name:    "a forged pending deletion of a cluster-scoped object",
		pending: pending(v1alpha1.StampedRef{APIVersion: "v1", Kind: "Namespace", Name: "team-b"}),
		left:    []string{"ConfigMap/other-team", "ConfigMap/ours", "ConfigMap/team-b", "Namespace/apps", "Namespace/team-b"},
	}, {
		name:    "a forged pending deletion of the owner's own namespace",
		pending: pending(v1alpha1.StampedRef{APIVersion: "v1", Kind: "Namespace", Namespace: "apps", Name: "apps"}),
		left:    []string{"ConfigMap/other-team", "ConfigMap/ours", "ConfigMap/team-b", "Namespace/apps", "Namespace/team-b"},
	}, {
		name:    "the owner's own object is deleted",
		pending: pending(*configMapRef("ours")),
		left:    []string{"ConfigMap/other-team", "ConfigMap/team-b", "Namespace/apps", "Namespace/team-b"},
		removed: 1,
	}, {
		name:    "the owner's own object, listed at a version its kind is not served at, is deleted at the one it is",
		pending: pending(v1alpha1.StampedRef{APIVersion: "v2", Kind: "ConfigMap", Namespace: "apps", Name: "ours"}),
		left:    []string{"ConfigMap/other-team", "ConfigMap/team-b", "Namespace/apps", "Namespace/team-b"},
		removed: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := corev1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			cl := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(coreMapper()).WithObjects(
				ownedConfigMap("ours", prunedOwner), ownedConfigMap("other-team", other), ownedConfigMap("team-b", nil),
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}},
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}},
			).Build()
			rz := &realization{
				r: &OwnerReconciler{kind: v1alpha1.Workloads, now: func() metav1.Time { return now }, live: cl}, ctx: context.Background(),
				owner: prunedOwner, writer: writer{watch: &watch.Watcher{}, client: cl},
				prev: tt.prev, pending: tt.pending,
			}
			got, err := rz.prune(nil, true)
			if len(got) != 0 || err != nil {
				t.Errorf("pending %v, error %v; want none", got, err)
			}
			var left []string
			var cms corev1.ConfigMapList
			var nss corev1.NamespaceList
			if err := cl.List(context.Background(), &cms); err != nil {
				t.Fatal(err)
			}
			if err := cl.List(context.Background(), &nss); err != nil {
				t.Fatal(err)
			}
			for _, cm := range cms.Items {
				left = append(left, "ConfigMap/"+cm.Name)
			}
			for _, ns := range nss.Items {
				left = append(left, "Namespace/"+ns.Name)
			}
			if diff := cmp.Diff(tt.left, left); diff != "" {
				t.Errorf("objects left (-want +got):\n%s", diff)
			}
			rec := record.NewFakeRecorder(10)
			rz.events.Record(rec, rz.owner)
			close(rec.Events)
			removed := 0
			for e := range rec.Events {
				if strings.HasPrefix(e, "Normal "+v1alpha1.EventStampedObjectRemoved+" ") {
					removed++
				}
			}
			if removed != tt.removed {
				t.Errorf("%d removal events, want %d", removed, tt.removed)
			}
		})
	}
}

// TestPruneImmutableResourceGone: status names an immutable resource's newest object only;
// its older ones (kept by its retention policy) are the resource's too. When the resource
// leaves the blueprint, or stamps another kind, no retention runs for them any more: prune
// deletes every object of the resource's old kind that the owner controls, not the newest
// alone. While the resource still stamps its kind, they stay its retention policy's, a
// stamp that failed included.
func TestPruneImmutableResourceGone(t *testing.T) {
	now := metav1.NewTime(time.Unix(2000, 0))
	immutable := render.Template{Spec: &v1alpha1.TemplateSpec{Lifecycle: v1alpha1.LifecycleImmutable}}
	run := func(name, resource string, owner *v1alpha1.Workload) *corev1.ConfigMap {
		cm := ownedConfigMap(name, owner)
		cm.Labels = map[string]string{v1alpha1.LabelWorkloadName: owner.Name, v1alpha1.LabelWorkloadNamespace: owner.Namespace, v1alpha1.LabelResourceName: resource}
		return cm
	}
	secretRef := &v1alpha1.StampedRef{APIVersion: "v1", Kind: "Secret", Namespace: "apps", Name: "run-3"}
	tests := []struct {
		name string
		now  []*render.Result
		left []string
	}{{
		name: "the resource left the blueprint: all its objects are deleted",
		left: []string{"other-run-1", "test-1"},
	}, {
		name: "the resource stamps another kind now: all its objects of the old kind are deleted",
		now:  []*render.Result{{Status: v1alpha1.ResourceStatus{Name: "run", StampedRef: secretRef}, Object: &unstructured.Unstructured{}, Template: immutable}},
		left: []string{"other-run-1", "test-1"},
	}, {
		name: "the resource still stamps its kind: its older objects are its retention policy's",
		now:  []*render.Result{{Status: v1alpha1.ResourceStatus{Name: "run", StampedRef: configMapRef("run-2")}, Object: &unstructured.Unstructured{}, Template: immutable}},
		left: []string{"other-run-1", "run-1", "run-2", "test-1"},
	}, {
		name: "the resource's stamp failed: nothing of it is deleted",
		now:  []*render.Result{{Status: v1alpha1.ResourceStatus{Name: "run", StampedRef: configMapRef("run-2")}}},
		left: []string{"other-run-1", "run-1", "run-2", "test-1"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := corev1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			other := workloadNamed("other", "other-uid")
			cl := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(coreMapper()).WithObjects(
				run("run-1", "run", prunedOwner), run("run-2", "run", prunedOwner),
				run("test-1", "test", prunedOwner), // another resource's
				run("other-run-1", "run", other),   // another owner's
			).Build()
			rz := &realization{
				r: &OwnerReconciler{kind: v1alpha1.Workloads, now: func() metav1.Time { return now }, live: cl}, ctx: context.Background(),
				owner: prunedOwner, writer: writer{watch: &watch.Watcher{}, client: cl},
				prev: []v1alpha1.ResourceStatus{{Name: "run", StampedRef: configMapRef("run-2")}, {Name: "test", StampedRef: configMapRef("test-1")}},
			}
			got, err := rz.prune(append(tt.now, &render.Result{Status: v1alpha1.ResourceStatus{Name: "test", StampedRef: configMapRef("test-1")}}), true)
			if len(got) != 0 || err != nil {
				t.Errorf("pending %v, error %v; want none", got, err)
			}
			var cms corev1.ConfigMapList
			if err := cl.List(context.Background(), &cms); err != nil {
				t.Fatal(err)
			}
			var left []string
			for _, cm := range cms.Items {
				left = append(left, cm.Name)
			}
			if diff := cmp.Diff(tt.left, left); diff != "" {
				t.Errorf("ConfigMaps left (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPruneMessagesAreBounded: a webhook may answer a delete with a message of any length,
// and an owner may have many deletions pending at once (a blueprint that drops 50
// resources, or one that stamps a new name each generation while deletes fail). Each
// message is cut to 1024 bytes, with a marker, so that the list cannot push the owner's
// status past what the API server stores (1.5 MiB): 50 messages of the API's 32 KiB
// condition limit would, and the owner's status would never be written again.
func TestPruneMessagesAreBounded(t *testing.T) {
	now := metav1.NewTime(time.Unix(2000, 0))
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var prev []v1alpha1.ResourceStatus
	b := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(coreMapper())
	for i := range 50 {
		name := fmt.Sprintf("old-%d", i)
		b = b.WithObjects(ownedConfigMap(name, prunedOwner))
		prev = append(prev, v1alpha1.ResourceStatus{Name: name, StampedRef: configMapRef(name)})
	}
	long := strings.Repeat("the webhook explains at length why ", 1000) // 35 KB
	cl := b.WithInterceptorFuncs(interceptor.Funcs{
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, obj.GetName(), errors.New(long))
		},
	}).Build()
	rz := &realization{
		r: &OwnerReconciler{kind: v1alpha1.Workloads, now: func() metav1.Time { return now }, live: cl}, ctx: context.Background(),
		owner: prunedOwner, writer: writer{watch: &watch.Watcher{}, client: cl}, prev: prev,
	}
	got, err := rz.prune(nil, true)
	if len(got) != 50 || !apierrors.IsForbidden(err) {
		t.Fatalf("%d pending, error %v; want 50 and the denial", len(got), err)
	}
	for _, p := range got {
		if len(p.Message) > 1024 || !strings.HasPrefix(p.Message, "unable to delete ConfigMap/"+p.StampedRef.Name+": ") || !strings.HasSuffix(p.Message, "...") {
			t.Fatalf("message of %s is %d bytes, want at most 1024, naming the object, with the marker: %.80q...", p.StampedRef.Name, len(p.Message), p.Message)
		}
	}
	data, err := json.Marshal(v1alpha1.OwnerStatus{PendingDeletions: got})
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 100_000 {
		t.Errorf("the status' pendingDeletions are %d bytes for 50 objects", len(data))
	}
}
