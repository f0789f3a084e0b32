package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Document is one YAML document: its root node, whose positions are lines of File.
type Document struct {
	// File is the file the document was read from ("-" for standard input).
	File string
	// Node is the document's root node.
	Node *yaml.RNode
}

// Line is the line of the document's first field.
func (d Document) Line() int { return d.Node.YNode().Line }

// Read reads every YAML document of the given files and directories (recursively, *.yaml
// and *.yml, in name order); "-" is standard input. The items of a List (as kubectl get
// -o yaml writes several objects) are documents of their own.
func Read(paths ...string) ([]Document, error) {
	var docs []Document
	for _, root := range paths {
		if root == "-" {
			d, err := Parse("-", os.Stdin)
			if err != nil {
				return nil, err
			}
			docs = append(docs, d...)
			continue
		}
		var files []string
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir():
				return nil
			case path == root || slices.Contains([]string{".yaml", ".yml"}, filepath.Ext(path)):
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			d, err := Parse(f, bytes.NewReader(b))
			if err != nil {
				return nil, err
			}
			docs = append(docs, d...)
		}
	}
	return docs, nil
}

// Parse reads the YAML documents of one stream named file. Empty documents are skipped.
// The decoder reads the whole stream, so node lines are lines of the file.
func Parse(file string, r io.Reader) ([]Document, error) {
	dec := yaml.NewDecoder(r)
	var docs []Document
	for {
		n := &yaml.Node{}
		err := dec.Decode(n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		rn := yaml.NewRNode(n)
		if yaml.IsMissingOrNull(rn) || yaml.IsYNodeEmptyDoc(n) {
			continue
		}
		if rn.YNode().Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s:%d: a document must be an object", file, rn.YNode().Line)
		}
		if items := rn.Field("items"); items != nil && strings.HasSuffix(rn.GetKind(), "List") {
			elements, err := items.Value.Elements()
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", file, rn.YNode().Line, err)
			}
			for _, item := range elements {
				docs = append(docs, Document{File: file, Node: item})
			}
			continue
		}
		docs = append(docs, Document{File: file, Node: rn})
	}
}

// Lookup is the node at path in n, or its deepest ancestor there is when the path leads
// past the document (a field that is missing). path is a field path as Kubernetes
// validation writes it, e.g. spec.resources[1].templateRef.name,
// metadata.labels[app.kubernetes.io/name], or spec.params[name=port].
func Lookup(n *yaml.RNode, path string) *yaml.RNode {
	found, _ := descend(n, path)
	return found
}

// Get is the node at path in n (see Lookup), or nil when there is none.
func Get(n *yaml.RNode, path string) *yaml.RNode {
	if found, ok := descend(n, path); ok {
		return found
	}
	return nil
}

// descend follows path from n as far as it leads, and says whether it got to the end.
func descend(n *yaml.RNode, path string) (*yaml.RNode, bool) {
	for _, seg := range splitPath(path) {
		var next *yaml.RNode
		switch {
		case seg.index >= 0:
			if elements, err := n.Elements(); err == nil && seg.index < len(elements) {
				next = elements[seg.index]
			}
		case seg.keyField != "":
			if elements, err := n.Elements(); err == nil {
				for _, e := range elements {
					if f := e.Field(seg.keyField); f != nil && yaml.GetValue(f.Value) == seg.key {
						next = e
					}
				}
			}
		case n.YNode().Kind == yaml.MappingNode:
			if f := n.Field(seg.key); f != nil {
				next = f.Value
			}
		}
		if next == nil {
			return n, false
		}
		n = next
	}
	return n, true
}

// segment is one step of a field path: a key, an index, or a list-map key (name=port).
type segment struct {
	key      string
	keyField string
	index    int
}

// splitPath splits a field path into its steps; see Lookup.
func splitPath(path string) []segment {
	var segs []segment
	for path != "" {
		switch path[0] {
		case '.':
			path = path[1:]
		case '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return segs
			}
			inner := strings.Trim(path[1:end], `"'`)
			path = path[end+1:]
			if i, err := strconv.Atoi(inner); err == nil {
				segs = append(segs, segment{index: i})
			} else if k, v, ok := strings.Cut(inner, "="); ok {
				segs = append(segs, segment{keyField: k, key: strings.Trim(v, `"'`), index: -1})
			} else {
				segs = append(segs, segment{key: inner, index: -1})
			}
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			segs = append(segs, segment{key: path[:end], index: -1})
			path = path[end:]
		}
	}
	return segs
}
