package transform

import (
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// The informers of stamped kinds select objects by Surveyor's resource-name label, but
// a label is no proof of origin: whoever may label an object of a watched kind (a
// ConfigMap in their own namespace) gets it into the controller's memory, at its full
// size, up to a megabyte each. Stamped bounds what such an object costs.
//
// Every object Surveyor stamps has, from its first write, a controller reference to
// its owner (a Workload or a Deliverable; apply.go). The realizer reads an object's
// fields (health, outputs, the no-write check) only as its owner's stamped object, and
// an event reaches an owner only through that reference. An object without one is
// therefore read for nothing but its name and Surveyor's labels, and is kept as that: a
// stub's size does not grow with the object's (BenchmarkForeignObjects; figures in
// docs/tenancy.md).
// Should one of the realizer's own objects lose its reference, the no-write check
// finds the stub short of the desired object (which carries the reference) and applies
// it again, which takes the object back; its full copy returns with that write's event.
//
// A controller reference is not proof of origin either, but it must name an owner that
// exists, by UID, in the object's own namespace, or the garbage collector deletes the
// object (or drops the reference, and the object becomes a stub). Whole copies can
// thus be planted only by a tenant who may create objects in a namespace where a
// Workload or Deliverable lives, in that namespace, where its ResourceQuota bounds them
// as it bounds the tenant's other objects.

// stampedLabels are the label keys a stub keeps: those the realizer selects by.
var stampedLabels = map[string]bool{
	v1alpha1.LabelWorkloadName: true, v1alpha1.LabelWorkloadNamespace: true, v1alpha1.LabelSupplyChainName: true,
	v1alpha1.LabelDeliverableName: true, v1alpha1.LabelDeliverableNamespace: true, v1alpha1.LabelDeliveryName: true,
	v1alpha1.LabelResourceName: true, v1alpha1.LabelTemplateKind: true, v1alpha1.LabelClusterTemplateName: true,
	v1alpha1.LabelRunnableName: true, v1alpha1.LabelRunTemplateName: true,
}

// Stamped is the cache transform of stamped kinds' informers: an object an
// owner controls is kept whole (its strings shared, see Intern), any other is
// replaced by a stub of its identity and Surveyor's labels.
func Stamped(obj any) (any, error) { return keepControlled(obj, ownerKinds) }

// Runs is Stamped for the informers of the kinds Runnables stamp, which select by the
// carto.run/runnable-name label: an object a Runnable controls is kept whole, any other is
// a stub. The reasoning above holds for a Runnable as for an owner.
func Runs(obj any) (any, error) { return keepControlled(obj, runnableKinds) }

var (
	ownerKinds = func() (out []string) {
		for _, k := range v1alpha1.OwnerKinds {
			out = append(out, k.Kind)
		}
		return out
	}()
	runnableKinds = []string{v1alpha1.KindRunnable}
)

// keepControlled keeps obj whole (interned) when its controller is one of Surveyor's kinds
// among kinds, and makes a stub of it otherwise.
func keepControlled(obj any, kinds []string) (any, error) {
	if o, ok := obj.(metav1.Object); ok && !controlledBy(o, kinds) {
		if stub := foreignStub(obj); stub != nil {
			return stub, nil
		}
	}
	return Intern(obj)
}

// controlledBy says whether obj's controller reference names a carto.run kind among kinds.
func controlledBy(obj metav1.Object, kinds []string) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != v1alpha1.GroupVersion.Group {
		return false
	}
	return slices.Contains(kinds, ref.Kind)
}

// foreignStub is an empty object of obj's type with obj's identity and Surveyor's
// labels; nil for a type it cannot make (the object is then kept as it is).
func foreignStub(obj any) any {
	src, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	var stub metav1.Object
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(o.GroupVersionKind())
		stub = u
	case runtime.Object:
		// A typed object (client-go's kinds are cached typed, watch.go): a new zero
		// value of the same type, so readers' type assertions hold.
		t := reflect.TypeOf(o)
		if t.Kind() != reflect.Pointer {
			return nil
		}
		m, ok := reflect.New(t.Elem()).Interface().(metav1.Object)
		if !ok {
			return nil
		}
		stub = m
	default:
		return nil
	}
	stub.SetNamespace(intern(src.GetNamespace()))
	stub.SetName(src.GetName())
	stub.SetUID(src.GetUID())
	stub.SetResourceVersion(src.GetResourceVersion())
	stub.SetGeneration(src.GetGeneration())
	stub.SetCreationTimestamp(src.GetCreationTimestamp())
	stub.SetDeletionTimestamp(src.GetDeletionTimestamp())
	labels := map[string]string{}
	for k, v := range src.GetLabels() {
		if stampedLabels[k] {
			if sharedLabelValues[k] {
				v = intern(v)
			}
			labels[intern(k)] = v
		}
	}
	stub.SetLabels(labels)
	return stub
}
