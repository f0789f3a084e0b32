// Package lint checks Surveyor's templates, blueprints and owners offline, as `kubectl
// carto lint` does (DESIGN §10): every problem the API server or the controller would
// report for them without needing a cluster, each at its file:line and quoting the
// user's own text.
//
// The checks are the product's own: the CRDs' schemas and validation rules (embedded
// from config/crd), health.Validate and workitems.Validate for rules, expr for every
// jsonpath and $(...)$ tag, selector for every selector, and render.Render for the
// owners in the files, which selects their blueprint and stamps their templates as the
// controller would. It is pure: documents in, problems out.
package lint
