package transform

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

func controllerRef(apiVersion, kind string) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "o", UID: "uid-o", Controller: ptr.To(true)}}
}

// labelledConfigMap is a ConfigMap with Surveyor's labels, a foreign label and
// annotation, dataBytes of data and the given owner references, with strings of its
// own as if decoded (the data is made directly: decoding megabytes would be the slow
// part of a test about memory).
func labelledConfigMap(t testing.TB, name string, dataBytes int, refs []metav1.OwnerReference) *corev1.ConfigMap {
	cm := decodedTB[corev1.ConfigMap](t, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "tenant", UID: types.UID("uid-" + name), ResourceVersion: "7",
			Labels: map[string]string{
				v1alpha1.LabelResourceName: "source", v1alpha1.LabelWorkloadName: "w", "team": "a",
			},
			Annotations:     map[string]string{"big": strings.Repeat("a", 256)},
			OwnerReferences: refs,
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
	})
	cm.Data = map[string]string{"blob": strings.Repeat("x", dataBytes)}
	return cm
}

func TestStampedTransformKeepsOnlyOwnedObjectsWhole(t *testing.T) {
	owned := func(obj any) bool {
		switch o := obj.(type) {
		case *corev1.ConfigMap:
			return len(o.Data) > 0
		case *unstructured.Unstructured:
			return o.Object["spec"] != nil
		}
		t.Fatalf("transform changed the type to %T", obj)
		return false
	}
	unstructuredWidget := func(refs []metav1.OwnerReference) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(3)}}}
		u.SetAPIVersion("example.com/v1")
		u.SetKind("Widget")
		u.SetNamespace("tenant")
		u.SetName("w")
		u.SetLabels(map[string]string{v1alpha1.LabelResourceName: "source", "team": "a"})
		u.SetOwnerReferences(refs)
		return u
	}
	tests := []struct {
		name      string
		obj       any
		wantWhole bool
	}{
		{"controlled by a Workload", labelledConfigMap(t, "a", 16, controllerRef("carto.run/v1alpha1", "Workload")), true},
		{"controlled by a Deliverable", labelledConfigMap(t, "a", 16, controllerRef("carto.run/v1alpha1", "Deliverable")), true},
		{"no owner", labelledConfigMap(t, "a", 16, nil), false},
		{"controlled by a Deployment", labelledConfigMap(t, "a", 16, controllerRef("apps/v1", "Deployment")), false},
		{"a Workload of another group", labelledConfigMap(t, "a", 16, controllerRef("example.com/v1", "Workload")), false},
		{"owned by a Workload, not controlled", labelledConfigMap(t, "a", 16, []metav1.OwnerReference{{
			APIVersion: "carto.run/v1alpha1", Kind: "Workload", Name: "o", UID: "uid-o",
		}}), false},
		{"unstructured, controlled by a Workload", unstructuredWidget(controllerRef("carto.run/v1alpha1", "Workload")), true},
		{"unstructured, no owner", unstructuredWidget(nil), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.obj.(metav1.Object)
			name, ns, rv := in.GetName(), in.GetNamespace(), in.GetResourceVersion()
			out, err := Stamped(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if got := owned(out); got != tt.wantWhole {
				t.Fatalf("kept whole = %t, want %t", got, tt.wantWhole)
			}
			m := out.(metav1.Object)
			if m.GetName() != name || m.GetNamespace() != ns || m.GetResourceVersion() != rv {
				t.Errorf("identity changed: %s/%s@%s, want %s/%s@%s", m.GetNamespace(), m.GetName(), m.GetResourceVersion(), ns, name, rv)
			}
			if m.GetManagedFields() != nil {
				t.Error("managedFields kept")
			}
			if tt.wantWhole {
				return
			}
			if l := m.GetLabels(); l[v1alpha1.LabelResourceName] != "source" || l["team"] != "" {
				t.Errorf("stub labels %v, want Surveyor's only", l)
			}
			if m.GetAnnotations() != nil || m.GetOwnerReferences() != nil {
				t.Errorf("stub keeps annotations %v or owner references %v", m.GetAnnotations(), m.GetOwnerReferences())
			}
			if u, ok := out.(*unstructured.Unstructured); ok && u.GroupVersionKind() != tt.obj.(*unstructured.Unstructured).GroupVersionKind() {
				t.Errorf("stub kind %v", u.GroupVersionKind())
			}
		})
	}
	// The Runnables' informers keep what a Runnable controls, and only that.
	for name, tt := range map[string]struct {
		obj       any
		wantWhole bool
	}{
		"controlled by a Runnable":               {labelledConfigMap(t, "a", 16, controllerRef("carto.run/v1alpha1", "Runnable")), true},
		"controlled by a Workload":               {labelledConfigMap(t, "a", 16, controllerRef("carto.run/v1alpha1", "Workload")), false},
		"unstructured, controlled by a Runnable": {unstructuredWidget(controllerRef("carto.run/v1alpha1", "Runnable")), true},
	} {
		out, err := Runs(tt.obj)
		if err != nil {
			t.Fatal(err)
		}
		if got := owned(out); got != tt.wantWhole {
			t.Errorf("Runs, %s: kept whole = %t, want %t", name, got, tt.wantWhole)
		}
	}
	if out, _ := Stamped(labelledConfigMap(t, "a", 16, controllerRef("carto.run/v1alpha1", "Runnable"))); owned(out) {
		t.Error("Stamped kept a Runnable's run whole")
	}
	// An owned object comes out as Intern leaves it.
	a, b := labelledConfigMap(t, "a", 16, controllerRef("carto.run/v1alpha1", "Workload")), labelledConfigMap(t, "a", 16, controllerRef("carto.run/v1alpha1", "Workload"))
	_, _ = Stamped(a)
	_, _ = Intern(b)
	if !equality.Semantic.DeepEqual(a, b) {
		t.Errorf("an owned object: %+v, want Intern's %+v", a, b)
	}
}

// retainedPerObject is the heap that n ConfigMaps of dataBytes each hold once
// transform has been applied to each as it is decoded, per object.
func retainedPerObject(tb testing.TB, n, dataBytes int, refs []metav1.OwnerReference, transform func(any) (any, error)) float64 {
	kept := make([]any, 0, n)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		out, err := transform(labelledConfigMap(tb, fmt.Sprintf("cm-%d", i), dataBytes, refs))
		if err != nil {
			tb.Fatal(err)
		}
		kept = append(kept, out)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// TestForeignObjectsCostAStub: 30,000 labelled ConfigMaps no owner controls, of 16 KiB
// each, hold under 1 KiB apiece once cached, whatever their size (they used to be
// cached whole, 16 KiB and more apiece).
func TestForeignObjectsCostAStub(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 30,000 ConfigMaps")
	}
	const n, dataBytes = 30000, 16 << 10
	per := retainedPerObject(t, n, dataBytes, nil, Stamped)
	t.Logf("%d foreign ConfigMaps of %d KiB: %.0f bytes retained each, %.1f MiB in all", n, dataBytes>>10, per, per*n/(1<<20))
	if per > 1024 {
		t.Errorf("a foreign ConfigMap holds %.0f bytes once cached, want under 1 KiB", per)
	}
}

// BenchmarkForeignObjects reports the heap one cached labelled ConfigMap with 1 KiB of
// data holds: whole (controlled by a Workload, or any object before stubs) and as a
// stub (no owner controls it).
func BenchmarkForeignObjects(b *testing.B) {
	const n, dataBytes = 30000, 1 << 10
	for _, bc := range []struct {
		name string
		refs []metav1.OwnerReference
	}{
		{"owned", controllerRef("carto.run/v1alpha1", "Workload")},
		{"foreign", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var per float64
			for range b.N {
				per = retainedPerObject(b, n, dataBytes, bc.refs, Stamped)
			}
			b.ReportMetric(per, "B/object")
			b.ReportMetric(per*n/(1<<20), "MiB/30k")
		})
	}
}
