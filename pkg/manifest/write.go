package manifest

import (
	"encoding/json"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Node is obj (anything that encodes as a JSON object) as a YAML node, with apiVersion,
// kind and metadata first and status last, and metadata's name, generateName and namespace
// first; other fields are in name order.
func Node(obj any) (*yaml.RNode, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	n, err := yaml.FromMap(m)
	if err != nil {
		return nil, err
	}
	order(n.YNode(), []string{"apiVersion", "kind", "metadata"}, []string{"status"})
	if md := n.Field("metadata"); md != nil {
		order(md.Value.YNode(), []string{"name", "generateName", "namespace"}, nil)
	}
	return n, nil
}

// order moves the fields first of mapping node n to its front and the fields last to
// its end, each in the order given.
func order(n *yaml.Node, first, last []string) {
	rank := func(key string) int {
		if i := slices.Index(first, key); i >= 0 {
			return i - len(first)
		}
		if i := slices.Index(last, key); i >= 0 {
			return 1 + i
		}
		return 0
	}
	pairs := make([][2]*yaml.Node, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		pairs = append(pairs, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	slices.SortStableFunc(pairs, func(a, b [2]*yaml.Node) int { return rank(a[0].Value) - rank(b[0].Value) })
	n.Content = n.Content[:0]
	for _, p := range pairs {
		n.Content = append(n.Content, p[0], p[1])
	}
}

// Comment sets the lines as n's head comment, each prefixed with "# " and with its own
// line breaks made spaces, so that the comment stays a comment.
func Comment(n *yaml.RNode, lines ...string) {
	for i, l := range lines {
		lines[i] = strings.TrimRight("# "+strings.ReplaceAll(l, "\n", " "), " ")
	}
	n.YNode().HeadComment = strings.Join(lines, "\n")
}

// Write writes the nodes as one YAML stream, documents separated by ---.
func Write(w io.Writer, nodes ...*yaml.RNode) error {
	return kio.ByteWriter{Writer: w}.Write(nodes)
}
