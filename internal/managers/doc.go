// Package managers makes and runs the controller-runtime managers of the controller
// process (cmd/surveyor), from the settings its flags give: one manager holding the
// cluster-wide leader-election lease for an unsharded controller; for a shard's replica,
// the shard's manager under a lease of its own, and a second one standing for the
// cluster-wide lease, whose reconcilers of templates and blueprints span every shard.
package managers
