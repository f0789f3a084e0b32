// Package crd embeds Surveyor's generated CustomResourceDefinitions (bases/, written by
// `make manifests`), so that tools can validate objects against them without a cluster,
// exactly as the API server would (kubectl carto lint).
package crd

import "embed"

// Bases holds bases/*.yaml, one CustomResourceDefinition each.
//
//go:embed bases/*.yaml
var Bases embed.FS
