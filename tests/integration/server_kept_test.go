package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// The API server keeps some stamps otherwise than they were sent, and none of that may
// cause a write loop (DESIGN §3.5; issue 37: Cartographer's examples stamp a v1beta1
// GitRepository whose spec.gitImplementation the v1 storage version drops, and every
// apply bumped its generation, 233 times). Each case stamps one object the server keeps
// otherwise, forces reconciles of the Ready Workload for a minute, and counts the
// writes the API server received: one at the start, none after it. An edit by someone
// else is still corrected, with one write.
func TestNoWriteLoopWhateverTheServerKeeps(t *testing.T) {
	installServerKeptKinds(t)
	cases := []struct {
		name, resources, template string
		// edit is a merge patch someone else makes at a stamped path; corrected says
		// whether the live object shows the stamp again.
		edit      string
		corrected func(*unstructured.Unstructured) bool
	}{{
		// A field a newer CRD version no longer has: v1 (the storage version) prunes
		// spec.gitImplementation, and the API server bumps the generation on every apply
		// that sends it, as the real Flux GitRepository does.
		name: "dropped", resources: "droppeds.kept.surveyor.dev",
		template: `{"apiVersion": "kept.surveyor.dev/v1beta1", "kind": "Dropped",
			"metadata": {"name": "$(workload.metadata.name)$"},
			"spec": {"url": "https://example.com/app.git", "gitImplementation": "libgit2"}}`,
		edit:      `{"spec": {"url": "https://example.com/evil.git"}}`,
		corrected: specIs("url", "https://example.com/app.git"),
	}, {
		// A field a conversion renames: v1beta1's spec.tag is v1's spec.ref.tag, which
		// reads back as v1beta1's spec.ref.tag (both are in v1beta1's schema).
		name: "renamed", resources: "renameds.kept.surveyor.dev",
		template: `{"apiVersion": "kept.surveyor.dev/v1beta1", "kind": "Renamed",
			"metadata": {"name": "$(workload.metadata.name)$"},
			"spec": {"url": "https://example.com/app.git", "tag": "v1.2.3"}}`,
		edit:      `{"spec": {"url": "https://example.com/evil.git"}}`,
		corrected: specIs("url", "https://example.com/app.git"),
	}, {
		// A defaulted field: a Service stamped with clusterIP "" gets one allocated.
		name: "defaulted", resources: "services",
		template: `{"apiVersion": "v1", "kind": "Service",
			"metadata": {"name": "$(workload.metadata.name)$"},
			"spec": {"clusterIP": "", "selector": {"app": "app"}, "ports": [{"port": 80}]}}`,
		edit:      `{"spec": {"selector": {"app": "evil"}}}`,
		corrected: specIs("selector", map[string]any{"app": "app"}),
	}, {
		// A quantity the server rewrites in canonical form: 1000m is stored as "1",
		// 1024Mi as "1Gi", the number 0.5 as "500m".
		name: "quantity", resources: "resourcequotas",
		template: `{"apiVersion": "v1", "kind": "ResourceQuota",
			"metadata": {"name": "$(workload.metadata.name)$"},
			"spec": {"hard": {"cpu": "1000m", "memory": "1024Mi", "requests.cpu": 0.5}}}`,
		edit: `{"spec": {"hard": {"cpu": "7"}}}`,
		corrected: func(u *unstructured.Unstructured) bool {
			cpu, _, _ := unstructured.NestedString(u.Object, "spec", "hard", "cpu")
			return cpu == "1"
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			grantStamping(t, ns, "stamper", tc.resources)
			name := uniqueName(t)
			wl := serverKeptWorkload(t, ns, name, tc.template)
			stamped := stampedObject(t, wl, name)
			gvk := stamped.GroupVersionKind()
			resource := strings.Split(tc.resources, ".")[0]
			generation := stamped.GetGeneration()

			// The first reconciles wrote the object once; a minute of forced reconciles
			// writes nothing more.
			before := writesTo(t, resource)
			start, forced := time.Now(), 0
			for forced < 20 || time.Since(start) < time.Minute {
				forced += env.ForceReconciles(ctx, t, name, client.ObjectKeyFromObject(wl), 5)
			}
			writes := writesTo(t, resource) - before
			if writes != 0 {
				t.Errorf("%s: %v writes during %d forced reconciles over %s of a Ready workload, want 0",
					resource, writes, forced, time.Since(start).Round(time.Second))
			}
			live := getStamped(t, gvk, ns, name)
			if live.GetGeneration() != generation {
				t.Errorf("the stamped object's generation went from %d to %d", generation, live.GetGeneration())
			}
			t.Logf("%s: %d forced reconciles over %s, %v writes; generation %d", tc.name, forced,
				time.Since(start).Round(time.Second), writes, live.GetGeneration())

			// Someone else's edit at a stamped path is corrected, with one write.
			before = writesTo(t, resource)
			if err := k8sClient.Patch(ctx, live, client.RawPatch("application/merge-patch+json", []byte(tc.edit))); err != nil {
				t.Fatal(err)
			}
			eventually(t, time.Minute, func() (bool, string) {
				u := getStamped(t, gvk, ns, name)
				return tc.corrected(u), fmt.Sprintf("spec %v", u.Object["spec"])
			})
			env.ForceReconciles(ctx, t, name, client.ObjectKeyFromObject(wl), 5)
			if d := writesTo(t, resource) - before; d != 2 {
				t.Errorf("%s: %v writes from the edit to 5 reconciles after its correction, want 2 (the edit and the correction)", resource, d)
			}
		})
	}
}

// serverKeptWorkload creates a supply chain of one ClusterTemplate stamping template, and a
// Workload it selects, and waits for the Workload to be Ready.
func serverKeptWorkload(t *testing.T, ns, name, template string) *v1alpha1.Workload {
	t.Helper()
	env.CreateAll(ctx, t,
		&v1alpha1.ClusterTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, template)},
		},
		&v1alpha1.ClusterSupplyChain{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ClusterSupplyChainSpec{
				OwnerSelector: v1alpha1.OwnerSelector{Selector: map[string]string{"test.surveyor.dev/case": name}},
				Resources: []v1alpha1.SupplyChainResource{
					{Name: "kept", TemplateRef: v1alpha1.SupplyChainTemplateReference{Kind: v1alpha1.KindClusterTemplate, Name: name}},
				},
			},
		},
	)
	wl := &v1alpha1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"test.surveyor.dev/case": name}},
		Spec:       v1alpha1.WorkloadSpec{ServiceAccountName: "stamper"},
	}
	env.CreateAll(ctx, t, wl)
	waitReady(t, wl)
	return wl
}

// stampedObject reads the object the Workload's one resource stamped.
func stampedObject(t *testing.T, wl *v1alpha1.Workload, name string) *unstructured.Unstructured {
	t.Helper()
	if len(wl.Status.Resources) != 1 || wl.Status.Resources[0].StampedRef == nil {
		t.Fatalf("resources %+v, want one with a stampedRef", wl.Status.Resources)
	}
	ref := wl.Status.Resources[0].StampedRef
	return getStamped(t, schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind), wl.Namespace, name)
}

func getStamped(t *testing.T, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	return u
}

func specIs(field string, want any) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		got, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", field)
		return fmt.Sprint(got) == fmt.Sprint(want)
	}
}

// writesTo is the API server's count of writes (create, update, patch, apply; dry runs
// left out, being none) to resource, in any namespace.
func writesTo(t *testing.T, resource string) float64 {
	t.Helper()
	var n float64
	for _, m := range env.APIServerMetrics(t)["apiserver_request_total"].GetMetric() {
		switch harness.Label(m, "verb") {
		case "CREATE", "UPDATE", "PATCH", "APPLY":
		default:
			continue
		}
		if harness.Label(m, "resource") == resource && harness.Label(m, "subresource") == "" && harness.Label(m, "dry_run") == "" {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}

// installServerKeptKinds installs the two kinds of group kept.surveyor.dev, once for the
// suite: Dropped, whose v1beta1 has a field v1 (storage) does not, converted by the API
// server alone (strategy None), and Renamed, converted by a webhook this test serves,
// which renames v1beta1's spec.tag to v1's spec.ref.tag.
func installServerKeptKinds(t *testing.T) {
	t.Helper()
	spec := func(fields string) string {
		return `{type: object, properties: {spec: {type: object, properties: {` + fields + `}}, status: {type: object, x-kubernetes-preserve-unknown-fields: true}}}`
	}
	url := `url: {type: string}`
	ref := `ref: {type: object, properties: {tag: {type: string}}}`
	dropped := decodeOne(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: droppeds.kept.surveyor.dev}
spec:
  group: kept.surveyor.dev
  scope: Namespaced
  names: {kind: Dropped, listKind: DroppedList, plural: droppeds, singular: dropped}
  versions:
  - {name: v1, served: true, storage: true, subresources: {status: {}}, schema: {openAPIV3Schema: `+spec(url)+`}}
  - {name: v1beta1, served: true, storage: false, subresources: {status: {}}, schema: {openAPIV3Schema: `+spec(url+`, gitImplementation: {type: string}`)+`}}`)
	renamed := decodeOne(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: renameds.kept.surveyor.dev}
spec:
  group: kept.surveyor.dev
  scope: Namespaced
  names: {kind: Renamed, listKind: RenamedList, plural: renameds, singular: renamed}
  versions:
  - {name: v1, served: true, storage: true, subresources: {status: {}}, schema: {openAPIV3Schema: `+spec(url+`, `+ref)+`}}
  - {name: v1beta1, served: true, storage: false, subresources: {status: {}}, schema: {openAPIV3Schema: `+spec(url+`, tag: {type: string}, `+ref)+`}}`)
	caBundle, webhookURL := serveConversion(t)
	conversion := map[string]any{"strategy": "Webhook", "webhook": map[string]any{
		"conversionReviewVersions": []any{"v1"},
		"clientConfig":             map[string]any{"url": webhookURL, "caBundle": caBundle},
	}}
	if err := unstructured.SetNestedField(renamed.Object, conversion, "spec", "conversion"); err != nil {
		t.Fatal(err)
	}
	for _, crd := range []*unstructured.Unstructured{dropped, renamed} {
		if err := k8sClient.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		eventually(t, 30*time.Second, func() (bool, string) {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(schema.GroupVersionKind{Group: "kept.surveyor.dev", Version: "v1beta1", Kind: kind + "List"})
			if err := k8sClient.List(ctx, list); err != nil {
				return false, kind + " is not served yet: " + err.Error()
			}
			return true, ""
		})
	}
}

// serveConversion serves Renamed's conversion webhook over TLS on a loopback port for as
// long as the test binary runs (the CRD outlives the test), and returns the base64 CA
// bundle and the URL for the CRD.
func serveConversion(t *testing.T) (caBundle, url string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kept.surveyor.dev conversion"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(convertRenamed),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return base64.StdEncoding.EncodeToString(pemCert), "https://" + ln.Addr().String() + "/convert"
}

// convertRenamed answers a ConversionReview between Renamed's versions: to v1, spec.tag
// moves to spec.ref.tag; to v1beta1 nothing moves back.
func convertRenamed(w http.ResponseWriter, r *http.Request) {
	review := &apiextensionsv1.ConversionReview{}
	if err := json.NewDecoder(r.Body).Decode(review); err != nil || review.Request == nil {
		http.Error(w, "not a ConversionReview", http.StatusBadRequest)
		return
	}
	resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for _, raw := range review.Request.Objects {
		obj := map[string]any{}
		if err := yaml.Unmarshal(raw.Raw, &obj); err != nil {
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
			break
		}
		obj["apiVersion"] = review.Request.DesiredAPIVersion
		if tag, ok, _ := unstructured.NestedString(obj, "spec", "tag"); ok && strings.HasSuffix(review.Request.DesiredAPIVersion, "/v1") {
			unstructured.RemoveNestedField(obj, "spec", "tag")
			_ = unstructured.SetNestedField(obj, tag, "spec", "ref", "tag")
		}
		data, _ := json.Marshal(obj)
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: data})
	}
	review.Response, review.Request = resp, nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}
