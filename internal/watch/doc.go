// Package watch runs the informers of the kinds templates stamp, started on first use and
// filtered by Surveyor's label, and gates writes to a kind that is slow or not served, so
// that no reconcile waits for one (DESIGN §12). Selected watches, by metadata alone, the
// kinds Runnables' selectors choose from, so that a selected object's change re-queues them.
package watch
