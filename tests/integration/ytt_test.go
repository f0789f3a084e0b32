package integration

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// A ytt template is realized by the controller running in this test binary: its ytt
// workers are this binary too, made workers by harness.Main's hook.
func TestYTTTemplateIsRealizedInProcess(t *testing.T) {
	const name = "it-ytt"
	ns := newNamespace(t)
	grantStamping(t, ns, "stamper", "configmaps")
	env.CreateAll(ctx, t,
		&v1alpha1.ClusterTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.TemplateSpec{Ytt: `#@ load("@ytt:data", "data")
apiVersion: v1
kind: ConfigMap
metadata:
  name: #@ data.values.workload.metadata.name
data:
  greeting: #@ data.values.params.greeting
`},
		},
		&v1alpha1.ClusterSupplyChain{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ClusterSupplyChainSpec{
				OwnerSelector: v1alpha1.OwnerSelector{Selector: map[string]string{"test.surveyor.dev/case": name}},
				Resources: []v1alpha1.SupplyChainResource{
					{Name: "app", TemplateRef: v1alpha1.SupplyChainTemplateReference{Kind: v1alpha1.KindClusterTemplate, Name: name}},
				},
			},
		},
	)
	wl := &v1alpha1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns, Labels: map[string]string{"test.surveyor.dev/case": name}},
		Spec:       v1alpha1.WorkloadSpec{ServiceAccountName: "stamper", Params: []v1alpha1.OwnerParam{{Name: "greeting", Value: apiextensionsv1.JSON{Raw: []byte(`"hello"`)}}}},
	}
	env.CreateAll(ctx, t, wl)
	eventually(t, time.Minute, func() (bool, string) {
		var cm corev1.ConfigMap
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app"}, &cm); err != nil {
			return false, err.Error()
		}
		return cm.Data["greeting"] == "hello", "data: " + cm.Data["greeting"]
	})
}
