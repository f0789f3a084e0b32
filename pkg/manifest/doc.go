// Package manifest reads the YAML files the CLI is given (kubectl carto render and lint)
// with sigs.k8s.io/kustomize/kyaml, keeping every node's position, so that a message can
// say file:line, and decodes each document into Surveyor's typed objects. It also writes
// objects back as YAML, in the conventional field order. It is pure: files in, objects
// out.
package manifest
