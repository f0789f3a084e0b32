package templatetest

import (
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/aymanbagabas/go-udiff"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
	"github.com/surveyor-dev/surveyor/pkg/render/ytt"
)

// Run stamps the case's template for its owner through pkg/render, as the controller
// would, and compares the object with the expected one. It returns the difference, a
// unified diff from expected to actual, or "" when they are equal; an error means the case could not be
// run at all (a file that cannot be read) or the template could not be stamped.
func (c *Case) Run() (string, error) {
	if (c.Template == "" && len(c.SupplyChain) == 0) || c.Workload == "" || c.Expected == "" {
		return "", fmt.Errorf("a case needs a template (or a supply chain holding it), a workload and an expected object; it has template %q, supply chain %v, workload %q, expected %q",
			c.Template, c.SupplyChain, c.Workload, c.Expected)
	}
	var tpl v1alpha1.Template
	if c.Template != "" {
		var err error
		if tpl, err = readTemplate(c.Template, c.TemplateYttValues); err != nil {
			return "", err
		}
	}
	owner, err := readOwner(c.Workload)
	if err != nil {
		return "", err
	}
	expected, err := readObject(c.Expected)
	if err != nil {
		return "", err
	}
	var actual *unstructured.Unstructured
	if len(c.SupplyChain) > 0 {
		actual, err = c.stampInSupplyChain(owner, tpl)
	} else {
		actual, err = c.stampInMock(owner, tpl)
	}
	if err != nil {
		return "", err
	}
	// As the API server would store it: numbers as JSON has them, whatever Go type the
	// stamp holds them in.
	j, err := actual.MarshalJSON()
	if err != nil {
		return "", err
	}
	actual = &unstructured.Unstructured{}
	if err := actual.UnmarshalJSON(j); err != nil {
		return "", err
	}
	c.strip(expected)
	c.strip(actual)
	return diff(expected, actual)
}

// diff is a unified diff of the two objects as YAML (keys sorted), "" when they are equal.
func diff(expected, actual *unstructured.Unstructured) (string, error) {
	if equality.Semantic.DeepEqual(expected.Object, actual.Object) {
		return "", nil
	}
	a, err := yaml.Marshal(expected.Object)
	if err != nil {
		return "", err
	}
	b, err := yaml.Marshal(actual.Object)
	if err != nil {
		return "", err
	}
	return udiff.ToUnified("expected", "actual", string(a), udiff.Lines(string(a), string(b)), udiff.DefaultContextLines)
}

// stampInMock stamps the template as the one resource of a supply chain made up for it:
// the case's blueprint params are the supply chain's, and its blueprint inputs the outputs
// of earlier resources. A mock supply chain has no name and its resource none, so the
// stamped object carries none of their labels, as in Cartographer.
func (c *Case) stampInMock(owner *render.Owner, tpl v1alpha1.Template) (*unstructured.Unstructured, error) {
	kind := v1alpha1.TemplateKindOf(tpl).Kind
	res := v1alpha1.BlueprintResource{TemplateRef: v1alpha1.BlueprintTemplateReference{Kind: kind, Name: tpl.GetName()}}
	done := map[string]*render.Result{}
	given := func(group, name string, values map[string]any) v1alpha1.ResourceReference {
		producer := group + "/" + name // one name space per group: a source and an image may share a name
		done[producer] = &render.Result{Values: values, Submitted: render.Submitted(metav1.ConditionTrue, v1alpha1.ReasonResourceSubmissionComplete, "")}
		return v1alpha1.ResourceReference{Name: name, Resource: producer}
	}
	if in := c.BlueprintInputs; in != nil {
		for _, name := range slices.Sorted(maps.Keys(in.Sources)) {
			s := in.Sources[name]
			res.Sources = append(res.Sources, given("sources", name, map[string]any{v1alpha1.OutputURL: s.URL, v1alpha1.OutputRevision: s.Revision}))
		}
		for _, name := range slices.Sorted(maps.Keys(in.Images)) {
			res.Images = append(res.Images, given("images", name, map[string]any{v1alpha1.OutputImage: in.Images[name].Image}))
		}
		for _, name := range slices.Sorted(maps.Keys(in.Configs)) {
			res.Configs = append(res.Configs, given("configs", name, map[string]any{v1alpha1.OutputConfig: in.Configs[name].Config}))
		}
		if d := in.Deployment; d != nil {
			ref := given("deployment", "deployment", map[string]any{v1alpha1.OutputURL: d.URL, v1alpha1.OutputRevision: d.Revision})
			res.Deployment = &v1alpha1.DeploymentReference{Resource: ref.Resource}
		}
	}
	bp := &render.Blueprint{Kind: owner.Kind.Blueprint, Params: c.BlueprintParams}
	obj, err := stamp(owner, bp, &res, render.Among([]v1alpha1.Template{tpl}), done)
	if err != nil {
		return nil, err
	}
	labels := obj.GetLabels()
	delete(labels, owner.Kind.Labels.Blueprint)
	delete(labels, v1alpha1.LabelResourceName)
	obj.SetLabels(labels)
	return obj, nil
}

// stampInSupplyChain stamps the target resource of the case's supply chain (or delivery),
// with the given outputs of the resources before it. The template under test, when there
// is one, serves the resource, and so do the templates among the supply chain's files.
func (c *Case) stampInSupplyChain(owner *render.Owner, tpl v1alpha1.Template) (*unstructured.Unstructured, error) {
	docs, err := read(c.SupplyChainYttValues, c.SupplyChain...)
	if err != nil {
		return nil, err
	}
	var bp *render.Blueprint
	var templates []v1alpha1.Template
	for _, d := range docs {
		obj, err := d.Decode()
		if err != nil {
			return nil, err
		}
		switch o := obj.(type) {
		case v1alpha1.Blueprint:
			if v1alpha1.BlueprintKindOf(o) == owner.Kind.Blueprint && bp == nil {
				bp = render.BlueprintOf(o)
			}
		case v1alpha1.Template:
			templates = append(templates, o)
		}
	}
	if bp == nil {
		return nil, fmt.Errorf("no %s among %v", owner.Kind.Blueprint.Kind, c.SupplyChain)
	}
	i := slices.IndexFunc(bp.Resources, func(r v1alpha1.BlueprintResource) bool { return r.Name == c.TargetResource })
	if i < 0 {
		return nil, fmt.Errorf("%s [%s] has no resource [%s] (targetResourceName)", owner.Kind.Terms.Blueprint, bp.Name, c.TargetResource)
	}
	done := map[string]*render.Result{}
	for _, earlier := range bp.Resources[:i] {
		if values, ok := c.PreviousOutputs[earlier.Name]; ok {
			done[earlier.Name] = &render.Result{Values: values, Submitted: render.Submitted(metav1.ConditionTrue, v1alpha1.ReasonResourceSubmissionComplete, "")}
		}
	}
	if tpl != nil {
		templates = append(templates, tpl) // last: it wins over a template of the same name
	}
	return stamp(owner, bp, &bp.Resources[i], render.Among(templates), done)
}

// stamp takes one resource through the Pass and returns its object, or why there is none.
func stamp(owner *render.Owner, bp *render.Blueprint, res *v1alpha1.BlueprintResource, templates func(kind, name string) (v1alpha1.Template, error), done map[string]*render.Result) (*unstructured.Unstructured, error) {
	pass := &render.Pass{Owner: owner, Blueprint: bp, Template: templates, YTT: ytt.InProcess{}, Done: done}
	out, err := pass.Stamp(res, nil)
	switch {
	case err != nil:
		return nil, err
	case out.PassThrough:
		return nil, fmt.Errorf("resource [%s] passes an input through: it stamps nothing", res.Name)
	case out.Object == nil:
		return nil, fmt.Errorf("%s: %s", out.Submitted.Reason, out.Submitted.Message)
	}
	return out.Object, nil
}

// strip leaves out what the case does not compare: its ignored metadata, and the stamp
// digest Surveyor keeps on every object it stamps (bookkeeping, not the template's).
func (c *Case) strip(obj *unstructured.Unstructured) {
	meta, _ := obj.Object["metadata"].(map[string]any)
	if annotations, ok := meta["annotations"].(map[string]any); ok {
		delete(annotations, render.AnnotationStampDigest)
		if len(annotations) == 0 {
			delete(meta, "annotations")
		}
	}
	switch {
	case c.IgnoreMetadata:
		delete(obj.Object, "metadata")
		return
	case meta == nil:
		return
	}
	if c.IgnoreOwnerRefs {
		delete(meta, "ownerReferences")
	}
	if c.IgnoreLabels {
		delete(meta, "labels")
	}
	for _, f := range c.IgnoreMetadataFields {
		delete(meta, f)
	}
	if len(meta) == 0 {
		delete(obj.Object, "metadata")
	}
}

func readTemplate(path, yttValues string) (v1alpha1.Template, error) {
	obj, err := readOne(path, yttValues)
	if err != nil {
		return nil, err
	}
	tpl, ok := obj.(v1alpha1.Template)
	if !ok {
		return nil, fmt.Errorf("%s: a %s is no template", path, obj.GetObjectKind().GroupVersionKind().Kind)
	}
	if problem := render.RuleProblem(tpl.GetTemplateSpec()); problem != nil {
		return nil, fmt.Errorf("%s: %s", path, problem.Message)
	}
	return tpl, nil
}

func readOwner(path string) (*render.Owner, error) {
	obj, err := readOne(path, "")
	if err != nil {
		return nil, err
	}
	o, ok := obj.(v1alpha1.Owner)
	if !ok {
		return nil, fmt.Errorf("%s: a %s is no Workload or Deliverable", path, obj.GetObjectKind().GroupVersionKind().Kind)
	}
	return render.NewOwner(o)
}

func readOne(path, yttValues string) (v1alpha1.Object, error) {
	docs, err := read(yttValues, path)
	if err != nil {
		return nil, err
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("%s: want one object, found %d", path, len(docs))
	}
	return docs[0].Decode()
}

// readObject reads the expected object as it is written, whatever its kind.
func readObject(path string) (*unstructured.Unstructured, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(j); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return obj, nil
}

// Result is what became of one case.
type Result struct {
	Case *Case
	// Diff is the difference between the expected and the stamped object, a unified diff
	// of the two as YAML; empty when the case passed or could not run.
	Diff string
	// Err says why the case could not run, or its template could not be stamped.
	Err error
}

// Passed says whether the case stamped exactly the expected object.
func (r Result) Passed() bool { return r.Err == nil && r.Diff == "" }

// RunAll runs the cases, only the focused ones when any is, and says whether the suite
// passed: every case run passed and none was focused (a focus must not pass CI).
func RunAll(cases []*Case) ([]Result, bool) {
	focused := false
	for _, c := range cases {
		focused = focused || c.Focus
	}
	var results []Result
	passed := !focused
	for _, c := range cases {
		if focused && !c.Focus {
			continue
		}
		diff, err := c.Run()
		r := Result{Case: c, Diff: diff, Err: err}
		passed = passed && r.Passed()
		results = append(results, r)
	}
	return results, passed
}
