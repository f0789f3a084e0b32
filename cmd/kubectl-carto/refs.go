package main

import (
	"fmt"
	"slices"
	"strings"
)

// ref is an object named on the command line: KIND/NAME, or NAME of the default kind.
type ref struct {
	kind *kind
	name string
}

// parseRef reads KIND/NAME or NAME (of kind def); kinds are among choices, by any of
// their names.
func parseRef(arg string, def *kind, choices ...*kind) (ref, error) {
	name, k := arg, def
	if kindName, n, ok := strings.Cut(arg, "/"); ok {
		if k = kindNamed(kindName, choices); k == nil {
			return ref{}, fmt.Errorf("%q: the kind must be one of %s", arg, kindNames(choices))
		}
		name = n
	}
	if name == "" {
		return ref{}, fmt.Errorf("%q: a name is missing", arg)
	}
	return ref{kind: k, name: name}, nil
}

// kindNamed is the kind among choices that name names, or nil.
func kindNamed(name string, choices []*kind) *kind {
	for _, k := range choices {
		if slices.Contains(k.Names, strings.ToLower(name)) {
			return k
		}
	}
	return nil
}

func kindNames(choices []*kind) string {
	var names []string
	for _, k := range choices {
		names = append(names, k.Names[0])
	}
	return strings.Join(names, ", ")
}
