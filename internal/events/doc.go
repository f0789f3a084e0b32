// Package events records owners' Events: a queue that never drops one, and a Log that
// keeps one Event per reason per reconcile.
package events
