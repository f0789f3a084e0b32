// Package digestkey loads the key of the digests of Secret-derived outputs, creating it on
// the controller's first start.
package digestkey
