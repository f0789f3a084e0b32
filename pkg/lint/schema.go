package lint

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/surveyor-dev/surveyor/config/crd"
	"github.com/surveyor-dev/surveyor/pkg/manifest"
)

// kindSchema validates objects of one kind as the API server does on create.
type kindSchema struct {
	namespaced bool
	validator  apivalidation.SchemaValidator
	structural *structuralschema.Structural
	cel        *cel.Validator
}

var (
	schemasOnce sync.Once
	schemas     map[schema.GroupVersionKind]*kindSchema
	schemasErr  error
)

// schemaFor is the schema of gvk from the embedded CRDs, or nil for a kind they do not
// define.
func schemaFor(gvk schema.GroupVersionKind) (*kindSchema, error) {
	schemasOnce.Do(func() { schemas, schemasErr = loadSchemas() })
	return schemas[gvk], schemasErr
}

func loadSchemas() (map[schema.GroupVersionKind]*kindSchema, error) {
	out := map[schema.GroupVersionKind]*kindSchema{}
	files, err := fs.Glob(crd.Bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := crd.Bases.ReadFile(f)
		if err != nil {
			return nil, err
		}
		docs, err := manifest.Parse(f, strings.NewReader(string(b)))
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			j, err := d.JSON()
			if err != nil {
				return nil, err
			}
			var def apiextensionsv1.CustomResourceDefinition
			if err := json.Unmarshal(j, &def); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			for _, v := range def.Spec.Versions {
				if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
					continue
				}
				s, err := newKindSchema(v.Schema.OpenAPIV3Schema)
				if err != nil {
					return nil, fmt.Errorf("%s: version %s: %w", f, v.Name, err)
				}
				s.namespaced = def.Spec.Scope == apiextensionsv1.NamespaceScoped
				out[schema.GroupVersionKind{Group: def.Spec.Group, Version: v.Name, Kind: def.Spec.Names.Kind}] = s
			}
		}
	}
	return out, nil
}

func newKindSchema(v1 *apiextensionsv1.JSONSchemaProps) (*kindSchema, error) {
	internal := &apiextensionsinternal.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, internal, nil); err != nil {
		return nil, err
	}
	validator, _, err := apivalidation.NewSchemaValidator(internal)
	if err != nil {
		return nil, err
	}
	structural, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, err
	}
	return &kindSchema{validator: validator, structural: structural, cel: cel.NewValidator(structural, true, celconfig.PerCallLimit)}, nil
}

// validate checks obj as the API server checks a custom resource it is asked to
// create: its metadata, its schema (types, formats, lengths, enums, required fields),
// the uniqueness of list-map keys and list-set items, and the schema's CEL rules. It
// also returns the paths of the fields the API server would drop as unknown (a
// misspelt field silently does nothing).
func (s *kindSchema) validate(ctx context.Context, obj *unstructured.Unstructured) (field.ErrorList, []string) {
	meta := obj.DeepCopy()
	if s.namespaced && meta.GetNamespace() == "" {
		meta.SetNamespace("default") // files often leave it to kubectl -n
	}
	if !s.namespaced {
		meta.SetNamespace("")
	}
	errs := apimachineryvalidation.ValidateObjectMetaAccessor(meta, s.namespaced, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	content := obj.DeepCopy().UnstructuredContent()
	unknown := pruning.PruneWithOptions(content, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	errs = append(errs, apivalidation.ValidateCustomResource(nil, content, s.validator)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, content)...)
	// As the API server does, the rules are not evaluated over a value of the wrong type,
	// or one too long or missing: what they would say is noise until it is fixed.
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return errs, unknown
		}
	}
	celErrs, _ := s.cel.Validate(ctx, nil, s.structural, content, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...), unknown
}
