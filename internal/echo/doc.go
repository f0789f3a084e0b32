// Package echo tells the watch events of the controller's own writes (owner statuses,
// stamped objects) from everyone else's, so a write re-queues nothing by itself.
package echo
