package templatetest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// The files a test directory holds by default, as Cartographer names them.
const (
	infoFile                 = "info.yaml"
	templateFile             = "template.yaml"
	workloadFile             = "workload.yaml"
	expectedFile             = "expected.yaml"
	templateYttValuesFile    = "template-ytt-values.yaml"
	supplyChainYttValuesFile = "supply-chain-ytt-values.yaml"
	supplyChainFilePrefix    = "supply-chain"
)

// info is a directory's info.yaml, in Cartographer's template-test layout. Every field is
// optional; what a directory does not say, it inherits from its parent.
type info struct {
	Metadata struct {
		Name        *string `json:"name"`
		Description *string `json:"description"`
	} `json:"metadata"`
	Given struct {
		Template struct {
			Path    *string `json:"path"`
			YttPath *string `json:"yttPath"`
		} `json:"template"`
		Workload        *string `json:"workload"`
		MockSupplyChain struct {
			BlueprintInputs *Inputs                   `json:"blueprintInputs"`
			BlueprintParams []v1alpha1.BlueprintParam `json:"blueprintParams"`
		} `json:"mockSupplyChain"`
		SupplyChain struct {
			Paths              []string                  `json:"paths"`
			YttPath            *string                   `json:"yttPath"`
			TargetResourceName *string                   `json:"targetResourceName"`
			PreviousOutputs    map[string]map[string]any `json:"previousOutputs"`
		} `json:"supplyChain"`
	} `json:"given"`
	Expected             *string  `json:"expected"`
	Focus                *bool    `json:"focus"`
	IgnoreMetadata       *bool    `json:"ignoreMetadata"`
	IgnoreOwnerRefs      *bool    `json:"ignoreOwnerRefs"`
	IgnoreLabels         *bool    `json:"ignoreLabels"`
	IgnoreMetadataFields []string `json:"ignoreMetadataFields"`
}

// Inputs are the outputs of earlier resources a mock supply chain gives the template, by
// input name.
type Inputs struct {
	Sources    map[string]SourceInput `json:"sources"`
	Images     map[string]ImageInput  `json:"images"`
	Configs    map[string]ConfigInput `json:"configs"`
	Deployment *SourceInput           `json:"deployment"`
}

// SourceInput is a source output: url and revision.
type SourceInput struct {
	URL      any `json:"url"`
	Revision any `json:"revision"`
}

// ImageInput is an image output.
type ImageInput struct {
	Image any `json:"image"`
}

// ConfigInput is a config output.
type ConfigInput struct {
	Config any `json:"config"`
}

// Case is one template test: a directory with no subdirectories, with what it and its
// parents say.
type Case struct {
	// Dir is the case's directory; Name and Description what its info.yaml calls it.
	Dir, Name, Description string
	// Template, Workload and Expected are files: the template under test, the owner it is
	// stamped for, and the object it must stamp.
	Template, Workload, Expected string
	// TemplateYttValues, when set, is a ytt data values file the template file is
	// preprocessed with (the template file is then a ytt file).
	TemplateYttValues string
	// BlueprintInputs and BlueprintParams are a mock supply chain's: the outputs of earlier
	// resources and the supply chain's params.
	BlueprintInputs *Inputs
	BlueprintParams []v1alpha1.BlueprintParam
	// SupplyChain are the files of a real supply chain, SupplyChainYttValues a ytt data
	// values file they are preprocessed with, TargetResource the resource whose object is
	// tested and PreviousOutputs the outputs of the resources before it, by resource.
	SupplyChain          []string
	SupplyChainYttValues string
	TargetResource       string
	PreviousOutputs      map[string]map[string]any
	// Focus runs only the focused cases of a suite (which then fails, so a focus cannot
	// pass CI by accident).
	Focus bool
	// The parts of metadata left out of the comparison.
	IgnoreMetadata, IgnoreOwnerRefs, IgnoreLabels bool
	IgnoreMetadataFields                          []string
}

// Load reads the cases under dir, in lexical order of their directories: every directory
// with no subdirectory is a case, configured by its own info.yaml and files and by those
// of its parents up to dir.
func Load(dir string) ([]*Case, error) {
	var cases []*Case
	if err := load(dir, dir, Case{}, &cases); err != nil {
		return nil, err
	}
	return cases, nil
}

// load reads the cases under dir, a directory of the suite at root.
func load(root, dir string, inherited Case, cases *[]*Case) error {
	c := inherited
	c.Dir = dir
	if err := c.apply(dir); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var subdirs []string
	for _, e := range entries {
		if e.IsDir() {
			subdirs = append(subdirs, e.Name())
		}
	}
	if len(subdirs) == 0 {
		if c.Name == "" {
			// Unnamed, a case goes by its directory within the suite.
			c.Name = filepath.Join(filepath.Base(root), must(filepath.Rel(root, dir)))
		}
		*cases = append(*cases, &c)
		return nil
	}
	slices.Sort(subdirs)
	for _, sub := range subdirs {
		child := c
		child.Name, child.Description = "", ""
		if err := load(root, filepath.Join(dir, sub), child, cases); err != nil {
			return err
		}
	}
	return nil
}

// apply reads dir's info.yaml and default files over what c inherited.
func (c *Case) apply(dir string) error {
	var in info
	switch b, err := os.ReadFile(filepath.Join(dir, infoFile)); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := yaml.UnmarshalStrict(b, &in); err != nil {
			return fmt.Errorf("%s: %w", infoFile, err)
		}
	}
	var err error
	set := func(into *string, named *string, fallback string) {
		if err == nil {
			var path string
			path, err = local(dir, named, fallback)
			if path != "" {
				*into = path
			}
		}
	}
	set(&c.Template, in.Given.Template.Path, templateFile)
	set(&c.TemplateYttValues, in.Given.Template.YttPath, templateYttValuesFile)
	set(&c.Workload, in.Given.Workload, workloadFile)
	set(&c.Expected, in.Expected, expectedFile)
	set(&c.SupplyChainYttValues, in.Given.SupplyChain.YttPath, supplyChainYttValuesFile)
	if err != nil {
		return err
	}
	if in.Metadata.Name != nil {
		c.Name = *in.Metadata.Name
	}
	if in.Metadata.Description != nil {
		c.Description = *in.Metadata.Description
	}
	for flag, v := range map[*bool]*bool{&c.Focus: in.Focus, &c.IgnoreMetadata: in.IgnoreMetadata, &c.IgnoreOwnerRefs: in.IgnoreOwnerRefs, &c.IgnoreLabels: in.IgnoreLabels} {
		if v != nil {
			*flag = *v
		}
	}
	if in.IgnoreMetadataFields != nil {
		c.IgnoreMetadataFields = in.IgnoreMetadataFields
	}
	mock := in.Given.MockSupplyChain.BlueprintInputs != nil || in.Given.MockSupplyChain.BlueprintParams != nil
	if in.Given.MockSupplyChain.BlueprintInputs != nil {
		c.BlueprintInputs = in.Given.MockSupplyChain.BlueprintInputs
	}
	if in.Given.MockSupplyChain.BlueprintParams != nil {
		c.BlueprintParams = in.Given.MockSupplyChain.BlueprintParams
	}
	sc := in.Given.SupplyChain
	real := len(sc.Paths) > 0
	if real {
		c.SupplyChain = nil
		for _, p := range sc.Paths {
			c.SupplyChain = append(c.SupplyChain, relative(dir, p))
		}
	}
	if !real {
		prefixed, err := supplyChainFiles(dir)
		if err != nil {
			return err
		}
		if len(prefixed) > 0 {
			c.SupplyChain, real = prefixed, true
		}
	}
	if mock && real {
		return errors.New("only one of a mock supply chain and a real supply chain may be given")
	}
	if sc.TargetResourceName != nil {
		c.TargetResource = *sc.TargetResourceName
	}
	if sc.PreviousOutputs != nil {
		c.PreviousOutputs = sc.PreviousOutputs
	}
	return nil
}

// must is path, which filepath.Rel cannot fail to make of a directory below root.
func must(path string, _ error) string { return path }

// local is the file named in info.yaml, relative to dir, or else dir's file of the default
// name when there is one, or "".
func local(dir string, named *string, fallback string) (string, error) {
	if named != nil {
		return relative(dir, *named), nil
	}
	path := filepath.Join(dir, fallback)
	switch _, err := os.Stat(path); {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", err
	}
	return path, nil
}

// relative is path as info.yaml in dir means it: relative to dir, unless it is absolute.
func relative(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// supplyChainFiles are dir's YAML files whose name starts with supply-chain.
func supplyChainFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && strings.HasPrefix(n, supplyChainFilePrefix) && strings.HasSuffix(n, ".yaml") && n != supplyChainYttValuesFile {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out, nil
}
