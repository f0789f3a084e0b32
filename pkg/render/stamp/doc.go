// Package stamp turns a template into the object to apply for an owner, and reads back what the
// applied object offers the next template (DESIGN §3.2, §3.3, §3.6). It is pure: objects and values
// in, objects and values out, no client.
//
// The steps, in the order the reconciler uses them:
//
//   - Params merges a template's params with the blueprint's, the resource's and the owner's.
//   - NewContext builds what $(...)$ tags read: the owner, the params and the outputs of earlier
//     resources.
//   - Stamp decodes a template's raw JSON and replaces its tags. A string that is exactly one tag
//     takes the tag's typed value; tags inside a longer string are substituted as text.
//   - ReadOutputs reads a stamped object's outputs with the template's jsonpaths, StatusOutputs
//     turns them into the owner's status entries (YAML preview, digest, lastTransitionTime), and
//     Contains tells whether a live object already holds everything a stamp sets, so the reconciler
//     can skip the write.
//
// Errors are typed so the caller can pick the condition reason without parsing messages: *Error is a
// TemplateStampFailure, *OutputError a MissingValueAtPath (or, when it wraps an
// *expr.SyntaxError, a template whose output path cannot work). Whether a value is missing or a
// path is malformed is decided in package expr, which every path goes through.
package stamp
