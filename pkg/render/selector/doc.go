// Package selector decides which blueprint realizes an owner and which template option a resource
// uses for it (DESIGN §3.1, §3.3). It is pure: it reads the owner's labels and its unstructured
// object and never talks to the API server.
//
// A selector has three kinds of requirement, all of which must hold: labels the owner must carry,
// label expressions (metav1.LabelSelectorRequirement, evaluated with apimachinery's labels), and
// field requirements whose keys are jsonpaths into the owner. A selector's score is the number of
// its requirements, so the most specific blueprint wins; an empty selector never matches.
//
// Blueprint selection is written once for both owner kinds: v1alpha1.SelectionTerms carries the words and reasons that
// differ between a Workload choosing a ClusterSupplyChain and a Deliverable choosing a
// ClusterDelivery.
package selector
