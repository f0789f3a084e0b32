package render

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	yamlv3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// YTT evaluates ytt templates (spec.ytt, DESIGN §11): source with values, one data value per
// top-level key, into the YAML ytt prints. An error is reported as its text says, after
// "unable to apply ytt template: ". Implementations bound the evaluation in time (and the
// controller's in memory): pkg/render/ytt in process, internal/yttworker in worker processes.
type YTT interface {
	Eval(source string, values map[string]any) ([]byte, error)
}

// errNoYTT is a ytt template met by a Pass that was given no evaluator.
var errNoYTT = errors.New("no ytt evaluator is configured")

// evalYTT evaluates a ytt template with context as its data values; the first document of
// its output is the object, as Cartographer reads it (later ones are dropped: lint warns of
// them). The output is not $(...)$-interpolated.
//
// documents is how many documents the output has.
func (p *Pass) evalYTT(source string, context map[string]any) (obj *unstructured.Unstructured, documents int, err error) {
	if p.YTT == nil {
		return nil, 0, fmt.Errorf("unable to apply ytt template: %w", errNoYTT)
	}
	out, err := p.YTT.Eval(source, context)
	if err != nil {
		return nil, 0, fmt.Errorf("unable to apply ytt template: %w", err)
	}
	docs, err := Documents(out)
	if err != nil {
		return nil, 0, err
	}
	first := []byte("null") // empty output reads as null, as in Cartographer
	if len(docs) > 0 {
		first = docs[0]
	}
	// Cartographer's decoder: an output with no kind is "Object 'Kind' is missing in '<json>'".
	decoded, _, err := unstructured.UnstructuredJSONScheme.Decode(first, nil, nil)
	if err != nil {
		return nil, len(docs), err
	}
	u, ok := decoded.(*unstructured.Unstructured)
	if !ok {
		return nil, len(docs), fmt.Errorf("the output of the ytt template is a list, not an object")
	}
	return u, len(docs), nil
}

// Documents splits YAML output into its documents, each as JSON; empty ones are skipped.
func Documents(out []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
	var docs [][]byte
	for n := 1; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the output of the ytt template: %w", err)
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			if key := badKey(doc); key != "" {
				return nil, fmt.Errorf("reading the output of the ytt template: document %d: %s; object keys must be strings", n, key)
			}
			return nil, fmt.Errorf("reading the output of the ytt template: %w", err)
		}
		if !bytes.Equal(j, []byte("null")) {
			docs = append(docs, j)
		}
	}
}

// badKey says where doc has a map key JSON cannot hold (null, a list or a map; YAMLToJSON's
// own error prints Go's %!s(<nil>) for them), or "" when it has none.
func badKey(doc []byte) string {
	var root yamlv3.Node
	if yamlv3.Unmarshal(doc, &root) != nil {
		return ""
	}
	var walk func(n *yamlv3.Node) string
	walk = func(n *yamlv3.Node) string {
		if n.Kind == yamlv3.AliasNode {
			return "" // aliases point at nodes walked where they are defined
		}
		for i, c := range n.Content {
			if n.Kind == yamlv3.MappingNode && i%2 == 0 {
				switch {
				case c.Kind != yamlv3.ScalarNode:
					return fmt.Sprintf("line %d has a map key that is not a scalar", c.Line)
				case c.Tag == "!!null":
					return fmt.Sprintf("line %d has a map key that is null", c.Line)
				}
			}
			if s := walk(c); s != "" {
				return s
			}
		}
		return ""
	}
	return walk(&root)
}
