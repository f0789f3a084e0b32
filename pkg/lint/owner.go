package lint

import (
	"slices"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

// ownerReasons are the failures of an owner that no check of its blueprint or templates
// reports already: selection, options and stamping.
var ownerReasons = []string{
	v1alpha1.ReasonWorkloadLabelsMissing, v1alpha1.ReasonSupplyChainNotFound, v1alpha1.ReasonMultipleSupplyChainMatches,
	v1alpha1.ReasonDeliverableLabelsMissing, v1alpha1.ReasonDeliveryNotFound, v1alpha1.ReasonMultipleDeliveryMatches,
	v1alpha1.ReasonTemplateOptionsMatchError, v1alpha1.ReasonTemplateStampFailure,
}

// owner renders an owner offline against the blueprints and templates among the
// documents, as the controller would realize it, and reports what would fail: no
// blueprint selected, no option chosen, a template that cannot be stamped for it.
func (l *linter) owner(e entry, o v1alpha1.Owner, objects []v1alpha1.Object) {
	r, err := render.Render(render.Input{Owner: o, Objects: objects, YTT: yttEvaluator})
	if err != nil {
		l.at(e, "", "%v", err)
		return
	}
	if c := r.Selection; c.Status == metav1.ConditionFalse && slices.Contains(ownerReasons, c.Reason) {
		l.at(e, "metadata", "%s %s: %s", c.Type, c.Reason, c.Message)
	}
	for _, res := range r.Resources {
		if res.Object != nil {
			// The API server validates every object's metadata, whatever its kind: the
			// labels Surveyor adds carry names that may not fit. (Offline, the owner may
			// have no namespace or uid yet; those are the cluster's to give.)
			obj := res.Object.DeepCopy()
			obj.SetOwnerReferences(nil)
			if obj.GetNamespace() == "" {
				obj.SetNamespace(metav1.NamespaceDefault)
			}
			for _, fe := range apimachineryvalidation.ValidateObjectMetaAccessor(obj, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata")) {
				l.at(e, "metadata", "resource [%s]: the API server would reject %s/%s: %s", res.Name, res.Object.GetKind(), res.Object.GetName(), fe.Error())
			}
		}
		if l.yttOwnerProblem(e, res) {
			continue // at the template's line
		}
		c := res.Submitted
		if c.Status != metav1.ConditionFalse || !slices.Contains(ownerReasons, c.Reason) {
			continue
		}
		if res.Template != nil {
			if t := l.templates[templateKey{res.Template.Kind, res.Template.Name}]; t != nil && t.broken {
				continue // the template's own problem says it
			}
		}
		l.at(e, "metadata", "resource [%s] %s %s: %s", res.Name, c.Type, c.Reason, c.Message)
	}
}
