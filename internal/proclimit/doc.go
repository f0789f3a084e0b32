// Package proclimit fits the Go runtime to the controller's container at start: how many
// processors it schedules on (SetMaxProcs) and the soft memory limit its garbage
// collector works towards (SetMemoryLimit), read from the process's cgroup when the
// environment does not say.
package proclimit
