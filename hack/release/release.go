// Package release renders the release manifest: config/default through kustomize's own API
// (krusty), with the controller's image pinned by digest, as one YAML stream.
package release

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Render renders the kustomization in dir with the manager container's image set to image,
// which must name a digest (repo@sha256:...).
func Render(dir, image string) ([]byte, error) {
	if !strings.Contains(image, "@sha256:") {
		return nil, fmt.Errorf("image %q is not pinned by digest (repo@sha256:...)", image)
	}
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", dir, err)
	}
	set := 0
	for _, r := range resources.Resources() {
		if r.GetKind() != "Deployment" {
			continue
		}
		container, err := r.Pipe(yaml.Lookup("spec", "template", "spec", "containers", "[name=manager]"))
		if err != nil || container == nil {
			return nil, fmt.Errorf("the Deployment %s has no container named manager", r.GetName())
		}
		if err := container.PipeE(yaml.SetField("image", yaml.NewStringRNode(image))); err != nil {
			return nil, err
		}
		set++
	}
	if set != 1 {
		return nil, fmt.Errorf("%s has %d Deployments, want one", dir, set)
	}
	return resources.AsYaml()
}
