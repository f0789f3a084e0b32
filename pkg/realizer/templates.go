package realizer

import (
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/realizer/stamp"
)

// templateKinds are the template kinds a supply chain may reference, with a
// constructor for each so the realizer can read any of them from the cache.
var templateKinds = map[string]func() client.Object{
	v1alpha1.KindClusterSourceTemplate: func() client.Object { return &v1alpha1.ClusterSourceTemplate{} },
	v1alpha1.KindClusterImageTemplate:  func() client.Object { return &v1alpha1.ClusterImageTemplate{} },
	v1alpha1.KindClusterConfigTemplate: func() client.Object { return &v1alpha1.ClusterConfigTemplate{} },
	v1alpha1.KindClusterTemplate:       func() client.Object { return &v1alpha1.ClusterTemplate{} },
	v1alpha1.KindClusterDeploymentTemplate: func() client.Object {
		return &v1alpha1.ClusterDeploymentTemplate{}
	},
}

// template is what the realizer needs of any template kind: its shared spec and the
// jsonpath of each output it declares.
type template struct {
	kind    string
	name    string
	spec    *v1alpha1.TemplateSpec
	outputs []stamp.OutputPath
	status  *v1alpha1.TemplateStatus
	// deployment is set for a ClusterDeploymentTemplate, whose outputs pass its
	// deployment input through once its object succeeded.
	deployment *v1alpha1.ClusterDeploymentTemplateSpec
}

// errUnknownTemplateKind is a templateRef kind that is no template kind.
var errUnknownTemplateKind = errors.New("unknown template kind")

func newTemplate(kind string) (client.Object, error) {
	newObj, ok := templateKinds[kind]
	if !ok {
		return nil, fmt.Errorf("%w %q", errUnknownTemplateKind, kind)
	}
	return newObj(), nil
}

func templateOf(obj client.Object) template {
	t := template{name: obj.GetName(), outputs: stamp.OutputPaths(obj)}
	switch o := obj.(type) {
	case *v1alpha1.ClusterSourceTemplate:
		t.kind, t.spec, t.status = v1alpha1.KindClusterSourceTemplate, &o.Spec.TemplateSpec, &o.Status
	case *v1alpha1.ClusterImageTemplate:
		t.kind, t.spec, t.status = v1alpha1.KindClusterImageTemplate, &o.Spec.TemplateSpec, &o.Status
	case *v1alpha1.ClusterConfigTemplate:
		t.kind, t.spec, t.status = v1alpha1.KindClusterConfigTemplate, &o.Spec.TemplateSpec, &o.Status
	case *v1alpha1.ClusterDeploymentTemplate:
		t.kind, t.spec, t.status = v1alpha1.KindClusterDeploymentTemplate, &o.Spec.TemplateSpec, &o.Status
		t.deployment = &o.Spec
	case *v1alpha1.ClusterTemplate:
		t.kind, t.spec, t.status = v1alpha1.KindClusterTemplate, &o.Spec, &o.Status
	}
	return t
}
