package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/lint"
	"github.com/surveyor-dev/surveyor/pkg/manifest"
	"github.com/surveyor-dev/surveyor/pkg/render"
	"github.com/surveyor-dev/surveyor/pkg/view"
)

func (a *app) lintCommand() *cobra.Command {
	var files []string
	var rule, objectFile string
	cmd := &cobra.Command{
		Use:   "lint -f FILE|DIR... [--rule TEMPLATE --object FILE]",
		Short: "Check templates, supply chains, deliveries and owners without a cluster",
		Long: `lint checks Surveyor's objects in files and directories (-f; - for standard input)
without a cluster, and prints each problem as file:line: Kind/name: field: message,
quoting your own text:

  - every object against its CRD, as the API server would check it (types, lengths,
    required fields, duplicates, validation rules), and fields it would drop as unknown;
  - templates: every jsonpath (outputs, matchFields keys and messagePaths, deployment
    checks), every CEL expression of healthyConditionRule and conditionRules, every
    $(...)$ tag, and what the stamped object needs (apiVersion, kind, a name); a ytt
    template's errors at their line in the file, and a warning when its output has
    several documents (only the first is stamped);
  - supply chains and deliveries: selectors, option selectors, templates that are not
    among the files, inputs that are not earlier resources or lack the output they read,
    pass-through inputs, and params templates read that nothing declares;
  - Workloads and Deliverables in the files: rendered as the controller would realize
    them, whether a blueprint selects them, an option is chosen, and every template
    stamps an object the API server would accept the metadata of.

It exits 1 when there is a problem (warnings alone do not fail). With --rule TEMPLATE (NAME or KIND/NAME among the
files) and --object FILE (an object, e.g. saved with kubectl get -o yaml), it judges the
object by the template's rules and prints the conditions the controller would report.`,
		Example: `  kubectl carto lint -f samples/
  kubectl carto lint -f templates/ --rule app-deployment --object deployment.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(files) == 0 {
				return errors.New("name the files or directories to lint with -f")
			}
			docs, err := manifest.Read(files...)
			if err != nil {
				return err
			}
			if rule != "" || objectFile != "" {
				return a.judge(docs, rule, objectFile)
			}
			problems := lint.Lint(cmd.Context(), docs)
			errs := 0
			for _, p := range problems {
				// A problem quotes the linted files, which a tenant may have written.
				fmt.Fprintln(a.out, view.Escape(p.String()))
				if !p.Warning {
					errs++
				}
			}
			if errs > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%s in %d documents", plural(errs, "problem"), len(docs))}
			}
			if warnings := len(problems) - errs; warnings > 0 {
				fmt.Fprintf(a.errOut, "%d documents, %s, no problems\n", len(docs), plural(warnings, "warning"))
				return nil
			}
			fmt.Fprintf(a.errOut, "%d documents, no problems\n", len(docs))
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "files or directories to check (- for standard input)")
	cmd.Flags().StringVar(&rule, "rule", "", "judge --object by the rules of this template (NAME or KIND/NAME)")
	cmd.Flags().StringVar(&objectFile, "object", "", "the object --rule judges, in a YAML file")
	return cmd
}

// plural is "1 problem" or "n problems".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// judge prints the conditions the template named rule would give the object in file.
func (a *app) judge(docs []manifest.Document, rule, file string) error {
	if rule == "" || file == "" {
		return errors.New("--rule and --object go together")
	}
	kindName, name, found := strings.Cut(rule, "/")
	if !found {
		kindName, name = "", rule
	}
	var tpl v1alpha1.Template
	for _, d := range docs {
		if d.Node.GetName() != name || (kindName != "" && !strings.EqualFold(d.Node.GetKind(), kindName)) {
			continue
		}
		obj, err := d.Decode()
		if err != nil {
			return err
		}
		if t, ok := obj.(v1alpha1.Template); ok {
			tpl = t
		}
	}
	if tpl == nil {
		return fmt.Errorf("no template %q among the files", rule)
	}
	objs, err := manifest.Read(file)
	if err != nil {
		return err
	}
	if len(objs) != 1 {
		return fmt.Errorf("%s: want one object, found %d", file, len(objs))
	}
	j, err := objs[0].JSON()
	if err != nil {
		return err
	}
	live := &unstructured.Unstructured{}
	if err := live.UnmarshalJSON(j); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	opts, err := a.options()
	if err != nil {
		return err
	}
	return view.PrintConditions(a.out, render.Judge(tpl, live), opts)
}
