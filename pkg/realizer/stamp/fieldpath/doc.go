// Package fieldpath evaluates the jsonpaths users write in supply chains and templates
// (selectorMatchFields keys, option matchFields, $(...)$ tags, output paths) over JSON-shaped
// values such as an unstructured object.
//
// Every path goes through k8s.io/client-go/util/jsonpath. Users write paths the way Cartographer
// accepts them, with or without a leading dot and braces (spec.source.git, .spec.source.git and
// {.spec.source.git} are the same path), and may address a key holding dots or slashes in brackets,
// labels['app.kubernetes.io/name'], which client-go's parser alone reads as several fields.
//
// Parsed paths are cached per text. A client-go JSONPath keeps evaluation state in itself, so the
// cache hands each caller its own parsed copy from a pool; Compile and Path.Get are safe for
// concurrent use.
//
// Whether a value is "not there (yet)" or the path itself is wrong is decided here and only here:
// a path that does not parse is a *SyntaxError, and every failure to find a value while evaluating a
// valid path wraps ErrNotFound.
package fieldpath
