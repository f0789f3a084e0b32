// Package templatetest runs template tests written in Cartographer's template-test layout
// (DESIGN §11), offline, through pkg/render: the object a test expects is compared with the
// one the controller would stamp.
//
// A suite is a directory tree. Each directory may hold an info.yaml and the default files
// template.yaml, workload.yaml, expected.yaml (and supply-chain*.yaml for a real supply
// chain); a directory inherits what its parents say, and each directory without
// subdirectories is a case. info.yaml says, all optional:
//
//	metadata: {name, description}
//	given:
//	  template: {path, yttPath}
//	  workload: PATH
//	  mockSupplyChain: {blueprintInputs: {sources, images, configs, deployment}, blueprintParams}
//	  supplyChain: {paths, yttPath, targetResourceName, previousOutputs}
//	expected: PATH
//	focus, ignoreMetadata, ignoreOwnerRefs, ignoreLabels: BOOL
//	ignoreMetadataFields: [FIELD]
//
// Paths are relative to the directory of the info.yaml that names them. A template or supply
// chain file with a yttPath (or beside template-ytt-values.yaml, supply-chain-ytt-values.yaml)
// is a ytt file: it is first run through ytt with that data values file (plain YAML, or a
// @data/values document), and what ytt prints is the template or the supply chain.
package templatetest
