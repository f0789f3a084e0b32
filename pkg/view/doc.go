// Package view turns owner status into what people read: the table of owners, one owner's
// conditions and resources, the tree of its resources along their inputs, the "why" lines
// naming each problem, the verdict of a wait, and a blueprint's rollout (DESIGN §10); and
// Runnables: one with its conditions, outputs and runs, and the table of them.
//
// It is pure: owners and blueprint status in, text out, with the time and colour given
// by the caller (Options), so kubectl-carto and the web view print the same things and
// golden files can pin them. The models (Owner, Tree, Problems, Check) carry no
// formatting, for printers other than text.
package view
