// Package transform holds the controller cache's transforms: strings most cached objects
// hold alike are shared (Intern), managedFields are dropped, and a labelled object no owner
// controls is kept as a stub (Stamped), so memory follows the owners' objects only.
package transform
