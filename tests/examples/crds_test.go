package examples

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/hack/tools"
	"github.com/surveyor-dev/surveyor/internal/harness"
)

// toolCRDs are where each pinned tool module ships its CRDs, as globs in the module.
// noConversion names the tools whose CRDs point at a conversion webhook that does not run
// here.
var toolCRDs = []struct {
	source       string
	globs        []string
	noConversion bool
}{
	{source: "source-controller", globs: []string{"config/crd/bases/source.toolkit.fluxcd.io_gitrepositories.yaml"}},
	{source: "kpack", globs: []string{"config/image.yaml", "config/build.yaml", "config/clusterbuilder.yaml",
		"config/clusterstack.yaml", "config/clusterstore.yaml", "config/builder.yaml", "config/sourceresolver.yaml"}, noConversion: true},
	{source: "kapp-controller", globs: []string{"config/config/crds.yml"}},
	{source: "tekton", globs: []string{"config/300-crds/300-*.yaml"}, noConversion: true},
}

// installToolCRDs applies every tool's CRDs as the tool ships them and waits until they
// are served.
func installToolCRDs(ctx context.Context, env *harness.Env) error {
	var names []string
	for _, tc := range toolCRDs {
		dir, err := tools.SourceDir(tc.source)
		if err != nil {
			return err
		}
		for _, g := range tc.globs {
			files, err := filepath.Glob(filepath.Join(dir, g))
			if err != nil || len(files) == 0 {
				return fmt.Errorf("no CRD files %s in %s (%v)", g, dir, err)
			}
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					return err
				}
				objs, err := decode(data)
				if err != nil {
					return fmt.Errorf("%s: %w", f, err)
				}
				for _, o := range objs {
					if o.GetKind() != "CustomResourceDefinition" {
						continue
					}
					if tc.noConversion {
						// The CRD names the tool's conversion webhook, which does not run
						// here; with strategy None the API server converts by relabelling,
						// which is all these tests need (they write the versions the
						// examples use). Nothing else of the CRD is changed.
						if err := unstructured.SetNestedMap(o.Object, map[string]any{"strategy": "None"}, "spec", "conversion"); err != nil {
							return err
						}
					}
					if err := env.Client.Patch(ctx, o, client.Apply, client.FieldOwner("examples-test"), client.ForceOwnership); err != nil {
						return fmt.Errorf("applying CRD %s from %s: %w", o.GetName(), f, err)
					}
					names = append(names, o.GetName())
				}
			}
		}
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, n := range names {
			crd := &unstructured.Unstructured{}
			crd.SetAPIVersion("apiextensions.k8s.io/v1")
			crd.SetKind("CustomResourceDefinition")
			if err := env.Client.Get(ctx, client.ObjectKey{Name: n}, crd); err != nil {
				return false, nil
			}
			if condition(crd, "Established")["status"] != "True" {
				return false, nil
			}
		}
		return true, nil
	})
}
