package integration

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/surveyor-dev/surveyor/config/crd"
	cartov1alpha1 "github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

// These tests back DESIGN §13, "From Cartographer, in place": Surveyor's CRDs take the place of
// Cartographer v0.8.11's (same group, version, storage, names and scope) and accept every object
// Cartographer's accept, keeping every field.

// cartographerCRD is one of Cartographer v0.8.11's CustomResourceDefinitions.
type cartographerCRD struct {
	kind, plural string
	namespaced   bool
}

// cartographerCRDs are the CRDs Cartographer v0.8.11 installs (its config/crd/bases), all of group
// carto.run with v1alpha1 as the one version served and stored. They are facts about another
// project that Surveyor is checked against, which is why they are written out here rather than
// read from Surveyor's own table of kinds (pkg/apis/carto/v1alpha1/kinds.go): reading that table
// would check Surveyor against itself.
var cartographerCRDs = []cartographerCRD{
	{kind: "ClusterSupplyChain", plural: "clustersupplychains"},
	{kind: "ClusterDelivery", plural: "clusterdeliveries"},
	{kind: "ClusterSourceTemplate", plural: "clustersourcetemplates"},
	{kind: "ClusterImageTemplate", plural: "clusterimagetemplates"},
	{kind: "ClusterConfigTemplate", plural: "clusterconfigtemplates"},
	{kind: "ClusterDeploymentTemplate", plural: "clusterdeploymenttemplates"},
	{kind: "ClusterTemplate", plural: "clustertemplates"},
	{kind: "ClusterRunTemplate", plural: "clusterruntemplates"},
	{kind: "Workload", plural: "workloads", namespaced: true},
	{kind: "Deliverable", plural: "deliverables", namespaced: true},
	{kind: "Runnable", plural: "runnables", namespaced: true},
}

// cartographerKind finds kind among Cartographer's CRDs.
func cartographerKind(kind string) (cartographerCRD, bool) {
	i := slices.IndexFunc(cartographerCRDs, func(c cartographerCRD) bool { return c.kind == kind })
	if i < 0 {
		return cartographerCRD{}, false
	}
	return cartographerCRDs[i], true
}

// cartographerObjects holds objects in the shapes of Cartographer's own examples and docs; each
// file's header says which.
const cartographerObjects = "testdata/cartographer/*.yaml"

// Every CRD of config/crd/bases is installed in group carto.run with v1alpha1 served and the only
// version stored, and each of Cartographer's CRDs has a counterpart of the same name (so that
// applying Surveyor's replaces it in place), kind and scope. CRDs Surveyor adds (BlueprintRevision)
// are held to the group and version only.
func TestCartographerCRDsAreReplacedInPlace(t *testing.T) {
	files, err := fs.Glob(crd.Bases, "bases/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, file := range files {
		data, err := crd.Bases.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var def apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &def); err != nil {
			t.Fatalf("config/crd/%s: %v", file, err)
		}
		t.Run(def.Spec.Names.Kind, func(t *testing.T) {
			live := liveCRD(t, def.Name)
			if live.Spec.Group != cartov1alpha1.GroupName {
				t.Errorf("config/crd/%s: group %q, want %q", file, live.Spec.Group, cartov1alpha1.GroupName)
			}
			i := slices.IndexFunc(live.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool {
				return v.Name == cartov1alpha1.GroupVersion.Version
			})
			switch {
			case i < 0:
				t.Errorf("config/crd/%s: no version %s among %v", file, cartov1alpha1.GroupVersion.Version, live.Spec.Versions)
			case !live.Spec.Versions[i].Served || !live.Spec.Versions[i].Storage:
				t.Errorf("config/crd/%s: %s served=%t storage=%t, want both", file, cartov1alpha1.GroupVersion.Version,
					live.Spec.Versions[i].Served, live.Spec.Versions[i].Storage)
			}
			if want := []string{cartov1alpha1.GroupVersion.Version}; !slices.Equal(live.Status.StoredVersions, want) {
				t.Errorf("config/crd/%s: status.storedVersions %v, want %v", file, live.Status.StoredVersions, want)
			}

			carto, ok := cartographerKind(live.Spec.Names.Kind)
			if !ok {
				return // a kind Cartographer does not have
			}
			found[carto.kind] = true
			if want := carto.plural + "." + cartov1alpha1.GroupName; live.Name != want {
				t.Errorf("config/crd/%s: named %q, Cartographer's is %q: applying it would not replace Cartographer's",
					file, live.Name, want)
			}
			want := apiextensionsv1.ClusterScoped
			if carto.namespaced {
				want = apiextensionsv1.NamespaceScoped
			}
			if live.Spec.Scope != want {
				t.Errorf("config/crd/%s: scope %s, Cartographer's %s is %s", file, live.Spec.Scope, carto.kind, want)
			}
		})
	}
	for _, c := range cartographerCRDs {
		if !found[c.kind] {
			t.Errorf("config/crd has no CRD for Cartographer's %s", c.kind)
		}
	}
}

// liveCRD reads the installed CustomResourceDefinition name.
func liveCRD(t *testing.T, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
		t.Fatalf("reading the installed CRD %s: %v", name, err)
	}
	def := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, def); err != nil {
		t.Fatalf("decoding the installed CRD %s: %v", name, err)
	}
	return def
}

// Every object of testdata/cartographer, objects of every Cartographer kind in the shapes
// Cartographer's examples and docs use, is accepted by the API server and comes back with every
// field it was sent with: nothing is rejected, and nothing is pruned by the structural schema.
// It also reads into Surveyor's Go type and writes back out without losing a field, so that the
// controller sees what the user wrote.
//
// Each object is applied server-side in dry-run mode. Apply, with strict field validation, refuses
// a field the schema does not declare and names it, so a field the structural schema would prune
// is a rejection; the comparison then catches any other value the server drops or rewrites (what
// it adds, such as a default, passes). Dry runs persist nothing, so the controller running
// in this suite never sees the objects. Namespaced objects go to a fresh namespace, and the
// cluster-scoped ones get a suffix, so that no object already in the cluster is merged into
// the answer.
func TestCartographerObjectsAreAccepted(t *testing.T) {
	files, err := filepath.Glob(cartographerObjects)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no files match %s", cartographerObjects)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cartographer-compat-"}}
	if err := k8sClient.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(ctx, ns) })

	suffix := "-" + utilrand.String(5)
	perKind := map[string]int{}
	for _, file := range files {
		for _, obj := range decodeFile(t, file) {
			kind, name := obj.GetKind(), obj.GetName()
			perKind[kind]++
			t.Run(filepath.Base(file)+"/"+kind+"/"+name, func(t *testing.T) {
				where := fmt.Sprintf("%s: %s %q", file, kind, name)
				carto, ok := cartographerKind(kind)
				if obj.GroupVersionKind().GroupVersion() != cartov1alpha1.GroupVersion || !ok {
					t.Fatalf("%s: %s is not one of Cartographer's kinds", where, obj.GetAPIVersion())
				}
				if carto.namespaced {
					obj.SetNamespace(ns.Name)
				} else {
					obj.SetName(name + suffix)
				}
				sent := obj.DeepCopy()

				err := k8sClient.Patch(ctx, obj, client.Apply, client.DryRunAll, client.ForceOwnership,
					client.FieldOwner("cartographer-compat-test"), client.FieldValidation(metav1.FieldValidationStrict))
				if err != nil {
					t.Fatalf("%s: the API server rejected it: %v", where, err)
				}
				if path, ok := lostField(obj.Object, sent.Object); !ok {
					t.Errorf("%s: the API server dropped or changed %s:\nsent:     %s\nreturned: %s",
						where, fieldPath(path), jsonAt(t, sent.Object, path), jsonAt(t, obj.Object, path))
				}

				typed, err := k8sClient.Scheme().New(obj.GroupVersionKind())
				if err != nil {
					t.Fatal(err)
				}
				data, err := json.Marshal(obj.Object)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(data, typed); err != nil {
					t.Fatalf("%s: reading the API server's answer into %T: %v", where, typed, err)
				}
				roundTripped, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
				if err != nil {
					t.Fatalf("%s: writing %T back out: %v", where, typed, err)
				}
				if path, ok := lostField(roundTripped, sent.Object); !ok {
					t.Errorf("%s: Surveyor's %T lost or changed %s:\nsent:          %s\nround-tripped: %s",
						where, typed, fieldPath(path), jsonAt(t, sent.Object, path), jsonAt(t, roundTripped, path))
				}
			})
		}
	}

	for _, kind := range slices.Sorted(maps.Keys(perKind)) {
		t.Logf("%-26s %d objects", kind, perKind[kind])
	}
	for _, c := range cartographerCRDs {
		if perKind[c.kind] == 0 {
			t.Errorf("%s has no %s", cartographerObjects, c.kind)
		}
	}
}

// lostField reports whether got holds every field of want (stamp.Contains: maps by key, lists
// element by element, scalars by value) and, when it does not, the keys leading to the deepest
// map entry whose value differs, e.g. [spec resources]: a list's elements are not descended into.
func lostField(got, want map[string]any) ([]string, bool) {
	if stamp.Contains(got, want) {
		return nil, true
	}
	var path []string
	for {
		keys := slices.Sorted(maps.Keys(want))
		i := slices.IndexFunc(keys, func(k string) bool {
			return !stamp.Contains(map[string]any{k: got[k]}, map[string]any{k: want[k]})
		})
		if i < 0 {
			return path, false
		}
		k := keys[i]
		path = append(path, k)
		wantMap, wok := want[k].(map[string]any)
		gotMap, gok := got[k].(map[string]any)
		if !wok || !gok {
			return path, false
		}
		got, want = gotMap, wantMap
	}
}

// fieldPath renders keys lostField returned as a path, e.g. .spec.resources.
func fieldPath(keys []string) string {
	return "." + strings.Join(keys, ".")
}

// jsonAt renders the value at the keys lostField returned, or "absent".
func jsonAt(t *testing.T, obj map[string]any, keys []string) string {
	t.Helper()
	var v any = obj
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return "absent"
		}
		if v, ok = m[k]; !ok {
			return "absent"
		}
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
