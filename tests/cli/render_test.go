package cli

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/hack/cluster"
	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/manifest"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

// annotationStampDigest is the realizer's digest of everything it stamped in an object.
const annotationStampDigest = "carto.run/stamp-digest"

// TestRenderMatchesController applies samples/ as they are, waits until the controller
// has stamped every resource, and renders each sample owner from the sample files, as
// `kubectl carto render -f samples/` does: every object rendered is the one the
// controller stamped, field for field. The only things taken from the cluster are the
// owner's uid, which a file cannot know (it is in the owner reference, and so in the
// stamp digest), and, for the resources offline rendering cannot reach (a deployment's
// success), the live objects, as `--observed` gives them. Fields the API server or other
// controllers set on the live object (status, defaults, managedFields) are ignored; the
// stamp digest, which covers every field the controller stamped, must be equal.
func TestRenderMatchesController(t *testing.T) {
	samples := filepath.Join(harness.Root(), "samples")
	if err := cluster.Apply(ctx, env.Cluster.Config, samples); err != nil {
		t.Fatal(err)
	}
	docs, err := manifest.Read(samples)
	if err != nil {
		t.Fatal(err)
	}
	var owners []v1alpha1.Owner
	var objects []v1alpha1.Object
	for _, d := range docs {
		obj, err := d.Decode()
		if err != nil {
			t.Fatal(err)
		}
		switch o := obj.(type) {
		case v1alpha1.Owner:
			owners = append(owners, o)
		case *unstructured.Unstructured:
		default:
			objects = append(objects, o)
		}
	}
	if len(owners) < 4 {
		t.Fatalf("samples/ has %d owners, want at least 4", len(owners))
	}
	for _, o := range owners {
		t.Run(o.GetName(), func(t *testing.T) {
			live := settled(t, o)
			stamped := stampedObjects(t, live)
			o.SetUID(live.GetUID())

			offline, err := render.Render(render.Input{Owner: o, Objects: objects})
			if err != nil {
				t.Fatal(err)
			}
			observed := make([]*unstructured.Unstructured, 0, len(stamped))
			for _, s := range stamped {
				observed = append(observed, s)
			}
			r, err := render.Render(render.Input{Owner: o, Objects: objects, Observed: observed})
			if err != nil {
				t.Fatal(err)
			}
			sel := meta.FindStatusCondition(live.GetOwnerStatus().Conditions, r.Selection.Type)
			if sel == nil || sel.Status != r.Selection.Status || sel.Reason != r.Selection.Reason || sel.Message != r.Selection.Message {
				t.Fatalf("render selects %s %s %q, the controller %+v", r.Selection.Status, r.Selection.Reason, r.Selection.Message, sel)
			}
			if len(r.Resources) != len(stamped) {
				t.Errorf("rendered %d resources, the controller stamped %d", len(r.Resources), len(stamped))
			}
			for i, res := range r.Resources {
				want, ok := stamped[res.Name]
				switch {
				case !ok:
					t.Errorf("resource %s: rendered, but the controller stamped nothing for it", res.Name)
					continue
				case res.Object == nil:
					t.Errorf("resource %s: not rendered: %s %s", res.Name, res.Submitted.Reason, res.Submitted.Message)
					continue
				}
				if diff := compare(res.Object.Object, want.Object, ""); diff != "" {
					t.Errorf("resource %s: the rendered %s/%s differs from the stamped one: %s", res.Name, res.Object.GetKind(), res.Object.GetName(), diff)
				}
				if got, stampedDigest := res.Object.GetAnnotations()[annotationStampDigest], want.GetAnnotations()[annotationStampDigest]; got != stampedDigest {
					t.Errorf("resource %s: stamp digest %s, the controller's %s", res.Name, got, stampedDigest)
				}
				// Offline, with no live object, a resource renders the same object, or
				// says why it cannot.
				if off := offline.Resources[i]; off.Object != nil && !reflect.DeepEqual(off.Object.Object, res.Object.Object) {
					t.Errorf("resource %s: rendered differently with and without the observed objects", res.Name)
				} else if off.Object == nil {
					t.Logf("resource %s: offline, not rendered: %s", res.Name, off.Submitted.Message)
				}
			}
		})
	}
}

// settled waits until the controller has stamped every resource of the owner (or
// reported that no blueprint selects it) and returns the live owner.
func settled(t *testing.T, o v1alpha1.Owner) v1alpha1.Owner {
	t.Helper()
	live := o.DeepCopyObject().(v1alpha1.Owner)
	eventually(t, 2*time.Minute, func() (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), live); err != nil {
			return false, err.Error()
		}
		st := live.GetOwnerStatus()
		if st.ObservedGeneration != live.GetGeneration() || len(st.Conditions) == 0 {
			return false, "not reconciled yet"
		}
		if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady); c != nil && c.Status == metav1.ConditionTrue {
			return true, ""
		}
		for _, t := range []string{v1alpha1.ConditionSupplyChainReady, v1alpha1.ConditionDeliveryReady} {
			if c := meta.FindStatusCondition(st.Conditions, t); c != nil && c.Status == metav1.ConditionFalse {
				return true, "" // no blueprint selects it: nothing to stamp
			}
		}
		return false, fmt.Sprintf("not Ready: %+v", meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady))
	})
	return live
}

// stampedObjects are the live objects the controller stamped for the owner, by resource.
func stampedObjects(t *testing.T, o v1alpha1.Owner) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, r := range o.GetOwnerStatus().Resources {
		if r.StampedRef == nil {
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(r.StampedRef.APIVersion)
		u.SetKind(r.StampedRef.Kind)
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: r.StampedRef.Namespace, Name: r.StampedRef.Name}, u); err != nil {
			t.Fatalf("resource %s: %v", r.Name, err)
		}
		out[r.Name] = u
	}
	return out
}

// compare says where want (a rendered object) and got (the live one) differ, looking
// only at the fields want has: got's other fields are the server's and other
// controllers'. A list must have the same length.
func compare(want, got any, at string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: rendered a map, live is %T", orRoot(at), got)
		}
		for k, v := range w {
			if d := compare(v, g[k], at+"."+k); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: rendered %d items, live has %v", orRoot(at), len(w), got)
		}
		for i := range w {
			if d := compare(w[i], g[i], fmt.Sprintf("%s[%d]", at, i)); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Sprintf("%s: rendered %#v, live %#v", orRoot(at), want, got)
	}
	return ""
}

func orRoot(at string) string {
	if at == "" {
		return "."
	}
	return at
}
