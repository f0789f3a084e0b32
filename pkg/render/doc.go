// Package render is the one way from template to object (DESIGN §1), pure: it reads no
// cluster and imports no client. A Pass takes each resource of an owner's blueprint in
// order: Stamp gathers the outputs of the resources before it, chooses among the
// templateRef's options, reads the template (through a function handed in), resolves the
// params, stamps the object ($(...)$ interpolation, or a ytt template through the evaluator
// handed in as Pass.YTT, both reading stamp.NewContext) and makes it the owner's
// (namespace, labels, owner reference, digest); Result.Observe then reads the outputs of
// the live object handed in and judges its health and rules, and returns what it saw (an
// Observation) for the caller to take into the Result. Every result says what happened in
// the condition the controller reports.
//
// The controller (pkg/realizer) runs a Pass with the cluster around it: templates from its
// cache or a pinned revision, live objects from its informers and its applies. Render runs
// the same Pass offline for `kubectl carto render` and `lint`, so what they print is what
// the controller stamps. The controller evaluates ytt in worker processes
// (internal/yttworker), the offline tools in process (pkg/render/ytt).
//
// A Runnable's run takes the same way (StampRun: $(...)$, then ownership, labels and the
// digest through the same code as a resource's object); runs.go reads runs back: their
// Succeeded verdicts, which of them a retention policy deletes (immutable templates use it
// too), the outputs of the latest one that succeeded, and the Runnable's conditions.
package render
