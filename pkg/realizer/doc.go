// Package realizer realizes owners through their blueprints: it selects the
// ClusterSupplyChain for a Workload, stamps each template in order with outputs flowing
// from one resource to the next, applies the objects as the Workload's ServiceAccount,
// watches them, prunes what the blueprint no longer holds, and writes the owner's status
// once, computed from what it observed.
//
// The pure parts live in sub-packages: selector (supply-chain and option selection)
// and stamp (params, $(...)$ interpolation, outputs). Health is judged by pkg/health.
// This package is the thin shell that talks to the API server.
package realizer
