// Package realizer holds the reconcilers: one owner reconciler for every owner kind of the
// table of kinds (Workloads through ClusterSupplyChains, Deliverables through
// ClusterDeliveries), the blueprint reconciler with its progressive rollout, the template
// reconciler and the Runnable reconciler. The owner reconciler selects the owner's
// blueprint, takes each resource through the pure pipeline of pkg/render, applies the objects as the owner's
// ServiceAccount (a new object per change for an immutable template), prunes what the
// blueprint no longer holds, and writes the owner's status once, computed from what it
// observed. The Runnable reconciler stamps a Runnable's ClusterRunTemplate through the same
// pipeline and creates a run whenever the stamp differs from its newest run's, with the
// immutable objects' bookkeeping, as the Runnable's ServiceAccount.
//
// The plumbing the reconcilers share lives under internal/: watch (informers of stamped
// kinds), echo, events, transform, impersonate, digestkey and apierr.
package realizer
