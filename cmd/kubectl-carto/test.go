package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/surveyor-dev/surveyor/pkg/templatetest"
	"github.com/surveyor-dev/surveyor/pkg/view"
)

func (a *app) testCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "test DIR...",
		Short: "Run template tests written in Cartographer's template-test layout, offline",
		Long: `test runs the template tests under each DIR without a cluster: every directory
without subdirectories is a case, configured by its info.yaml and files and by those of
its parents (given: template, workload, mockSupplyChain or supplyChain; expected; focus;
ignoreMetadata, ignoreOwnerRefs, ignoreLabels, ignoreMetadataFields). Each template is
stamped through the same code the controller stamps with, and the object is compared
with the expected one; a failing case prints a unified diff of the two as YAML.

It exits 1 when a case fails or cannot run, or when a case is focused.`,
		Example: `  kubectl carto test samples/tests`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			var cases []*templatetest.Case
			for _, dir := range dirs {
				more, err := templatetest.Load(dir)
				if err != nil {
					return err
				}
				cases = append(cases, more...)
			}
			results, passed := templatetest.RunAll(cases)
			failed := 0
			for _, r := range results {
				switch {
				case r.Err != nil:
					failed++
					fmt.Fprintf(a.out, "FAIL %s\n  %s\n", view.Escape(r.Case.Name), view.Escape(r.Err.Error()))
				case r.Diff != "":
					failed++
					fmt.Fprintf(a.out, "FAIL %s: the stamped object differs from the expected one\n", view.Escape(r.Case.Name))
					for _, line := range strings.Split(strings.TrimRight(r.Diff, "\n"), "\n") {
						fmt.Fprintln(a.out, view.Escape(line))
					}
				default:
					fmt.Fprintf(a.out, "ok   %s\n", view.Escape(r.Case.Name))
				}
			}
			switch {
			case failed > 0:
				return &exitError{code: 1, err: fmt.Errorf("%d of %s failed", failed, plural(len(results), "case"))}
			case !passed:
				return &exitError{code: 1, err: fmt.Errorf("%s passed, but only the focused ones ran", plural(len(results), "case"))}
			}
			fmt.Fprintf(a.errOut, "%s passed\n", plural(len(results), "case"))
			return nil
		},
	}
}
