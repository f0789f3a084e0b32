// Package apierr classifies the errors of requests to the API server: what a retry may fix,
// and what the server said.
package apierr
