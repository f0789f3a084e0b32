// Package watch runs the informers of the kinds templates stamp, started on first use and
// filtered by Surveyor's label, and gates writes to a kind that is slow or not served, so
// that no reconcile waits for one (DESIGN §12). Selected watches, by metadata alone, the
// kinds Runnables' selectors choose from, so that a selected object's change re-queues them.
//
// The files, by concern:
//   - watch.go: the Watcher, its lifetime (New, Start, SetController) and the owners it
//     re-queues once a kind they wait for is served (Wait, Forget);
//   - informer.go: one stamped kind's informer: Ensure starts it without waiting, awaitSync
//     re-queues its owners once it syncs, and probes the API server meanwhile to tell a slow
//     list from a kind that is not served;
//   - write.go: the write gate every write of a stamped object goes through (Write): a
//     timeout per write, one write at a time to a kind not yet proven, and a backoff for a
//     kind whose writes stall;
//   - crd.go: a CRD being deleted takes its kinds out of service and removes their informers;
//   - errors.go: what an owner is told when a kind is not ready (ErrKindSyncing,
//     NotServedError);
//   - reader.go: StampedReader, which reads stamped objects from the informers' cache as
//     unstructured objects, whether the cache holds them typed or not;
//   - selected.go: Selected, the metadata-only watches of the kinds Runnables select from.
package watch
