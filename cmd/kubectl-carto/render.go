package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/manifest"
	"github.com/surveyor-dev/surveyor/pkg/render"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
	"github.com/surveyor-dev/surveyor/pkg/view"
)

func (a *app) renderCommand() *cobra.Command {
	var files, inputs, observedFiles []string
	cmd := &cobra.Command{
		Use:   "render -f FILE|DIR... [OWNER] [--input RESOURCE.OUTPUT=VALUE] [--observed FILE]",
		Short: "Print what the controller would stamp for an owner, without a cluster",
		Long: `render reads Workloads or Deliverables, supply chains or deliveries and their templates
from files (-f, files or directories, - for standard input), selects each owner's blueprint,
resolves template options and params, and prints every object the controller would stamp,
as a YAML stream, with comments saying why each choice was made. It stamps through the
controller's own code, so the objects are exactly the ones it applies. Templates written in
ytt are evaluated in this process, each within the controller's time limit (4s).

An output a later resource reads is known when it was given (--input), can be read from an
observed live object (--observed, e.g. saved with kubectl get -o yaml), or is a field the
stamped object itself sets. Otherwise the resources waiting for it are named, not guessed.
OWNER (NAME, workload/NAME or deliverable/NAME) picks one of the owners in the files.

It exits 1 when a blueprint cannot be selected or a resource cannot be stamped.`,
		Example: `  kubectl carto render -f samples/
  kubectl carto render -f app.yaml -f supply-chain/ --input image-provider.image=registry.example/app@sha256:...
  kubectl carto render -f delivery.yaml --observed deployment.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(files) == 0 {
				return errors.New("name the owner, blueprint and template files with -f")
			}
			given, err := parseInputs(inputs)
			if err != nil {
				return err
			}
			in, err := readRenderInput(files, observedFiles)
			if err != nil {
				return err
			}
			selected := in.owners
			if len(args) == 1 {
				r, err := parseRef(args[0], workloads, owners...)
				if err != nil {
					return err
				}
				selected = nil
				for _, o := range in.owners {
					if o.GetName() == r.name && v1alpha1.OwnerKindOf(o).Kind == r.kind.Kind {
						selected = append(selected, o)
					}
				}
			}
			if len(selected) == 0 {
				return errors.New("no Workload or Deliverable to render in the files")
			}
			ns, _, err := a.flags.ToRawKubeConfigLoader().Namespace()
			if err != nil {
				return err
			}
			var b strings.Builder
			incomplete := 0
			for _, o := range selected {
				if o.GetNamespace() == "" {
					o.SetNamespace(ns)
				}
				r, err := render.Render(render.Input{Owner: o, Objects: in.objects, Observed: in.observed, Outputs: given})
				if err != nil {
					return err
				}
				failed, err := writeRendering(&b, o, r)
				if err != nil {
					return err
				}
				if failed > 0 {
					incomplete++
				}
			}
			if _, err := fmt.Fprint(a.out, b.String()); err != nil {
				return err
			}
			if incomplete > 0 {
				return fmt.Errorf("%d of %d owners could not be rendered in full (see the comments)", incomplete, len(selected))
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "owners, blueprints and templates: files or directories (- for standard input)")
	cmd.Flags().StringArrayVar(&inputs, "input", nil, "an output value, RESOURCE.OUTPUT=VALUE (VALUE is YAML), for a resource whose output is not known offline")
	cmd.Flags().StringArrayVar(&observedFiles, "observed", nil, "live objects to read outputs from, as kubectl get -o yaml writes them")
	return cmd
}

// renderInput is what render read from its files.
type renderInput struct {
	owners   []v1alpha1.Owner
	objects  []v1alpha1.Object
	observed []*unstructured.Unstructured
}

func readRenderInput(files, observedFiles []string) (*renderInput, error) {
	in := &renderInput{}
	docs, err := manifest.Read(files...)
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		obj, err := d.Decode()
		if err != nil {
			return nil, err
		}
		if o, ok := obj.(v1alpha1.Owner); ok {
			in.owners = append(in.owners, o)
		} else if _, ok := obj.(*unstructured.Unstructured); !ok {
			in.objects = append(in.objects, obj)
		}
	}
	if len(observedFiles) == 0 {
		return in, nil
	}
	docs, err = manifest.Read(observedFiles...)
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		obj, err := d.Decode()
		if err != nil {
			return nil, err
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			in.observed = append(in.observed, u)
		}
	}
	return in, nil
}

// parseInputs reads --input RESOURCE.OUTPUT=VALUE flags; VALUE is YAML.
func parseInputs(flags []string) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	for _, f := range flags {
		key, value, ok := strings.Cut(f, "=")
		resource, output, ok2 := strings.Cut(key, ".")
		if !ok || !ok2 || resource == "" || output == "" {
			return nil, fmt.Errorf("--input %q: want RESOURCE.OUTPUT=VALUE, e.g. image-provider.image=registry.example/app:1", f)
		}
		var v any
		if err := kyaml.Unmarshal([]byte(value), &v); err != nil {
			return nil, fmt.Errorf("--input %q: the value is not YAML: %w", f, err)
		}
		// The types of decoded JSON, as the controller reads outputs (int64, not int).
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("--input %q: %w", f, err)
		}
		if err := utiljson.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("--input %q: %w", f, err)
		}
		if out[resource] == nil {
			out[resource] = map[string]any{}
		}
		out[resource][output] = v
	}
	return out, nil
}

// writeRendering writes one owner's rendering as YAML documents: a comment saying how
// its blueprint was chosen, then a document per resource, the stamped object with
// comments saying why, or only comments for a resource that could not be stamped. It
// returns how many failures (False conditions) there were.
func writeRendering(b *strings.Builder, o v1alpha1.Owner, r *render.Rendering) (int, error) {
	ok := v1alpha1.OwnerKindOf(o)
	kind, owner, blueprint := ok.Kind, ok.Singular(), ok.Terms.Blueprint
	head := []string{fmt.Sprintf("%s %s/%s", kind, o.GetNamespace(), o.GetName())}
	failed := 0
	switch {
	case r.Blueprint == nil:
		head = append(head, fmt.Sprintf("not rendered: %s", conditionLine(r.Selection)))
	case r.Selection.Status != metav1.ConditionTrue:
		head = append(head, fmt.Sprintf("%s %s selects it, but: %s", blueprint, r.Blueprint.Name, conditionLine(r.Selection)))
	default:
		head = append(head,
			fmt.Sprintf("%s %s selects it: it meets %s of its selector, more than any other %s", blueprint, r.Blueprint.Name, plural(r.Requirements, "requirement"), blueprint),
			"objects are applied as ServiceAccount "+r.ServiceAccount)
		if o.GetUID() == "" {
			head = append(head, fmt.Sprintf("the %s has no uid yet: once applied, ownerReferences[0].uid is set and carto.run/stamp-digest differs", owner))
		}
	}
	if r.Selection.Status == metav1.ConditionFalse {
		failed++
	}
	writeComments(b, head)
	for _, res := range r.Resources {
		lines := []string{"resource " + res.Name}
		if res.Option != nil {
			lines = append(lines, fmt.Sprintf("option %s chosen: the %s meets %s of its selector, more than any other option", optionName(res.Option), owner, plural(res.OptionRequirements, "requirement")))
		}
		if res.Template != nil {
			lines[0] += ": template " + res.Template.Kind + "/" + res.Template.Name
		}
		if len(res.Inputs) > 0 {
			lines = append(lines, "reads the outputs of "+strings.Join(res.Inputs, ", "))
		}
		if len(res.Params) > 0 {
			lines = append(lines, "params: "+paramsLine(res.Params, blueprint, owner))
		}
		switch {
		case res.Object == nil && res.Submitted.Status == metav1.ConditionTrue:
			lines = append(lines, "nothing stamped: it passes its input through")
		case res.Object == nil:
			lines = append(lines, "not rendered: "+conditionLine(res.Submitted))
		case res.Outputs == nil:
			lines = append(lines, "outputs not known: "+conditionLine(res.Submitted),
				fmt.Sprintf("give them with --input %s.OUTPUT=VALUE, or the live object with --observed", res.Name))
		case len(res.Outputs) > 0:
			lines = append(lines, fmt.Sprintf("outputs %s: %s", strings.Join(sortedKeys(res.Outputs), ", "), outputsFrom(res.OutputsFrom)))
		}
		if res.Submitted.Status == metav1.ConditionFalse {
			failed++
		}
		if res.Object == nil {
			writeComments(b, lines)
			continue
		}
		n, err := manifest.Node(res.Object.Object)
		if err != nil {
			return failed, err
		}
		manifest.Comment(n, commentLines(lines)...)
		doc, err := n.String()
		if err != nil {
			return failed, err
		}
		b.WriteString("---\n" + doc)
	}
	return failed, nil
}

// writeComments writes a document of comments only, one line each.
func writeComments(b *strings.Builder, lines []string) {
	b.WriteString("---\n")
	for _, l := range commentLines(lines) {
		b.WriteString("# " + l + "\n")
	}
}

// commentLines are lines made fit for YAML comments: whitespace runs (line breaks
// included) made one space, and any other control character escaped. The lines quote
// tenants' text (condition messages, names); a carriage return or a C1 NEL left in a
// comment would end it, and what follows would be read as YAML by whoever applies the
// rendering, or act on the terminal that shows it.
func commentLines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = view.Escape(strings.Join(strings.Fields(l), " "))
	}
	return out
}

// conditionLine is "Type Status Reason: message".
func conditionLine(c metav1.Condition) string {
	s := fmt.Sprintf("%s %s %s", c.Type, c.Status, c.Reason)
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s
}

// paramsLine lists params with their values and where each came from.
func paramsLine(params []stamp.Param, blueprint, owner string) string {
	from := map[string]string{stamp.FromTemplate: "template default", stamp.FromBlueprint: blueprint, stamp.FromResource: "resource", stamp.FromOwner: owner}
	parts := make([]string, len(params))
	for i, p := range params {
		v, _ := json.Marshal(p.Value)
		origin := from[p.From]
		if p.Fixed {
			origin += ", fixed"
		}
		parts[i] = fmt.Sprintf("%s=%s (%s)", p.Name, v, origin)
	}
	return strings.Join(parts, ", ")
}

func outputsFrom(from string) string {
	switch from {
	case render.OutputsGiven:
		return "given with --input"
	case render.OutputsObserved:
		return "read from the observed object"
	case render.OutputsPassedThrough:
		return "passed through"
	}
	return "read from fields this object sets"
}

func optionName(o *v1alpha1.TemplateOption) string {
	if o.PassThrough != "" {
		return "passThrough=" + o.PassThrough
	}
	return o.Name
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
