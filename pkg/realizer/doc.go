// Package realizer realizes owners through their blueprints: Workloads through
// ClusterSupplyChains and Deliverables through ClusterDeliveries, by one owner reconciler
// parameterised by an owner-kind descriptor (kinds.go). It selects the owner's blueprint,
// stamps each template in order with outputs flowing from one resource to the next,
// applies the objects as the owner's ServiceAccount (a new object per change for an
// immutable template), watches them, prunes what the blueprint no longer holds, and
// writes the owner's status once, computed from what it observed.
//
// The pure parts live in sub-packages: selector (blueprint and option selection) and
// stamp (params, $(...)$ interpolation, outputs, deployment success). Health is judged
// by pkg/health. This package is the thin shell that talks to the API server.
package realizer
