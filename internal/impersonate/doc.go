// Package impersonate makes the clients that stamp as an owner's ServiceAccount: bounded
// in number, sharing one rate limiter.
package impersonate
