package render

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

// The keys a ClusterRunTemplate's tags read: $(runnable.spec.inputs.x)$, $(selected.metadata.name)$.
const (
	// RunContextRunnable is the Runnable, whole, with spec.runTemplateRef.kind ClusterRunTemplate.
	RunContextRunnable = "runnable"
	// RunContextSelected is the object the Runnable's selector chose, null without a selector.
	RunContextSelected = "selected"
)

// StampRun stamps the run a Runnable's ClusterRunTemplate makes of it and of selected (the
// object its selector chose, nil without a selector), and makes it the Runnable's: its
// namespace, the labels carto.run/runnable-name and carto.run/run-template-name, the
// Runnable as controller owner, and the digest of it all (AnnotationStampDigest), which
// tells whether the newest run was stamped from the same content. Plain $(...)$
// interpolation, as for blueprint templates.
func StampRun(r *v1alpha1.Runnable, tpl *v1alpha1.ClusterRunTemplate, selected *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r)
	if err != nil {
		return nil, fmt.Errorf("converting the Runnable: %w", err)
	}
	fields["apiVersion"], fields["kind"] = v1alpha1.GroupVersion.String(), v1alpha1.KindRunnable
	// Cartographer ignores the kind written in the Runnable and templates read it as this.
	if err := unstructured.SetNestedField(fields, v1alpha1.KindClusterRunTemplate, "spec", "runTemplateRef", "kind"); err != nil {
		return nil, err
	}
	var sel any
	if selected != nil {
		sel = selected.Object
	}
	obj, err := stamp.Stamp(tpl.Spec.Template.Raw, map[string]any{RunContextRunnable: fields, RunContextSelected: sel})
	if err != nil {
		return nil, err
	}
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" || (obj.GetName() == "" && obj.GetGenerateName() == "") {
		return nil, errors.New("the stamped object needs apiVersion, kind and metadata.generateName (or metadata.name)")
	}
	err = own(obj, r, v1alpha1.KindRunnable, map[string]string{
		v1alpha1.LabelRunnableName:    r.Name,
		v1alpha1.LabelRunTemplateName: tpl.Name,
	})
	if err != nil {
		return nil, err
	}
	return obj, nil
}

// RunnableServiceAccount is the ServiceAccount a Runnable's runs are selected, created and
// deleted as: its own, else the namespace's default.
func RunnableServiceAccount(r *v1alpha1.Runnable) string {
	if r.Spec.ServiceAccountName != "" {
		return r.Spec.ServiceAccountName
	}
	return "default"
}

// RunnableRetention is a Runnable's retention policy: its own, else the default 10 and 10
// (the CRD defaults it; an object written before that default had none).
func RunnableRetention(r *v1alpha1.Runnable) v1alpha1.RetentionPolicy {
	if p := r.Spec.RetentionPolicy; p != nil {
		return *p
	}
	return v1alpha1.DefaultRetention
}
