// Package metricsauth is how the controller serves its Prometheus metrics: over TLS,
// to callers the API server authenticates (TokenReview) and authorizes to get /metrics
// (SubjectAccessReview), as kubebuilder projects do (DESIGN §12, Readers), without
// k8s.io/apiserver's authentication stack (see FilterProvider). It counts the reviews it
// asks for, so that readers of the controller's request counts can tell them from the
// controller's own writes.
package metricsauth
