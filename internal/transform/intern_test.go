package transform

import (
	"encoding/json"
	"fmt"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

// decoded is v decoded from JSON into a new T, so its strings are copies of their own.
func decoded[T any](t *testing.T, v any) *T {
	t.Helper()
	return decodedTB[T](t, v)
}

// decodedTB is decoded for tests and benchmarks.
func decodedTB[T any](t testing.TB, v any) *T {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameCopy(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestInternTransformSharesWhatObjectsHoldAlike(t *testing.T) {
	workload := func(name string) *v1alpha1.Workload {
		wl := &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "apps", Labels: map[string]string{"apps.tanzu.vmware.com/workload-type": "web"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		}}
		wl.Status.SupplyChainRef = &v1alpha1.BlueprintReference{Kind: "ClusterSupplyChain", Name: "web"}
		wl.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", Message: "message of " + name}}
		wl.Status.Resources = []v1alpha1.ResourceStatus{{
			Name:        "source",
			StampedRef:  &v1alpha1.StampedRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "apps", Name: name + "-source", Resource: "configmaps"},
			TemplateRef: &v1alpha1.TemplateReference{APIVersion: "carto.run/v1alpha1", Kind: "ClusterSourceTemplate", Name: "source"},
			Outputs:     []v1alpha1.Output{{Name: "url", Digest: "sha256:" + name}},
			Conditions:  []metav1.Condition{{Type: "Healthy", Status: metav1.ConditionTrue, Reason: "MatchedField"}},
		}}
		return decoded[v1alpha1.Workload](t, wl)
	}
	a, b := workload("a"), workload("b")
	for _, wl := range []*v1alpha1.Workload{a, b} {
		if _, err := Intern(wl); err != nil {
			t.Fatal(err)
		}
		if wl.ManagedFields != nil {
			t.Errorf("managedFields kept: %v", wl.ManagedFields)
		}
	}
	ra, rb := a.Status.Resources[0], b.Status.Resources[0]
	shared := map[string][2]string{
		"namespace":                 {a.Namespace, b.Namespace},
		"condition type":            {a.Status.Conditions[0].Type, b.Status.Conditions[0].Type},
		"condition status":          {string(a.Status.Conditions[0].Status), string(b.Status.Conditions[0].Status)},
		"condition reason":          {a.Status.Conditions[0].Reason, b.Status.Conditions[0].Reason},
		"supply chain name":         {a.Status.SupplyChainRef.Name, b.Status.SupplyChainRef.Name},
		"resource name":             {ra.Name, rb.Name},
		"stamped kind":              {ra.StampedRef.Kind, rb.StampedRef.Kind},
		"stamped resource":          {ra.StampedRef.Resource, rb.StampedRef.Resource},
		"template name":             {ra.TemplateRef.Name, rb.TemplateRef.Name},
		"output name":               {ra.Outputs[0].Name, rb.Outputs[0].Name},
		"resource condition reason": {ra.Conditions[0].Reason, rb.Conditions[0].Reason},
	}
	for what, s := range shared {
		if !sameCopy(s[0], s[1]) {
			t.Errorf("%s %q: two copies, want one shared", what, s[0])
		}
	}
	for k := range a.Labels {
		for l := range b.Labels {
			if !sameCopy(k, l) {
				t.Errorf("label key %q: two copies, want one shared", k)
			}
		}
	}
	// What differs per object is left as decoded.
	if a.Status.Conditions[0].Message != "message of a" || ra.StampedRef.Name != "a-source" || ra.Outputs[0].Digest != "sha256:a" {
		t.Errorf("per-object strings changed: %+v", a.Status)
	}
}

func TestInternTransformSharesStampedMetadata(t *testing.T) {
	configMap := func(name string) *corev1.ConfigMap {
		return decoded[corev1.ConfigMap](t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "apps",
			Labels:          map[string]string{v1alpha1.LabelWorkloadName: name, v1alpha1.LabelSupplyChainName: "web"},
			Annotations:     map[string]string{render.AnnotationStampDigest: name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "carto.run/v1alpha1", Kind: "Workload", Name: name}},
		}})
	}
	a, b := configMap("a"), configMap("b")
	ua := &unstructured.Unstructured{}
	ua.SetNamespace("apps")
	ua.SetLabels(map[string]string{v1alpha1.LabelSupplyChainName: "web"})
	for _, obj := range []any{a, b, ua} {
		if _, err := Intern(obj); err != nil {
			t.Fatal(err)
		}
	}
	if !sameCopy(a.Labels[v1alpha1.LabelSupplyChainName], b.Labels[v1alpha1.LabelSupplyChainName]) ||
		!sameCopy(a.Labels[v1alpha1.LabelSupplyChainName], ua.GetLabels()[v1alpha1.LabelSupplyChainName]) {
		t.Error("the supply chain label's value: several copies, want one shared")
	}
	if !sameCopy(a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind) || !sameCopy(a.Namespace, b.Namespace) {
		t.Error("owner kind or namespace: two copies, want one shared")
	}
	if a.Labels[v1alpha1.LabelWorkloadName] != "a" || a.Annotations[render.AnnotationStampDigest] != "a" || b.OwnerReferences[0].Name != "b" {
		t.Errorf("per-object strings changed: %v %v %v", a.Labels, a.Annotations, b.OwnerReferences)
	}
}

func TestInternTableIsBoundedAndEvicts(t *testing.T) {
	const limit = 64
	table := newInternTable(limit)
	if table.intern("") != "" {
		t.Error("empty string changed")
	}
	// A string in use all along stays shared while many others come and go.
	hot := string([]byte("Ready"))
	table.intern(hot)
	for i := range 100 * limit {
		table.intern(fmt.Sprintf("revision-%d", i))
		if got := table.intern(string([]byte("Ready"))); !sameCopy(got, hot) {
			t.Fatalf("after %d other strings: a string in use lost its shared copy", i)
		}
		if n := table.len(); n > limit {
			t.Fatalf("after %d strings: table holds %d, limit %d", i, n, limit)
		}
	}
	// A new string, after many old ones filled the table, is interned too (the first
	// strings seen are not kept forever).
	fresh := string([]byte("revision-new"))
	table.intern(fresh)
	if got := table.intern(string([]byte("revision-new"))); !sameCopy(got, fresh) {
		t.Error("a new string after the table filled: not shared")
	}
	// An old string no object has used since is forgotten.
	old := "revision-0"
	table.mu.Lock()
	_, inCurrent := table.current[old]
	_, inPrev := table.prev[old]
	table.mu.Unlock()
	if inCurrent || inPrev {
		t.Error("a string unused for many generations is still held")
	}
}
