// Package web is the live web view of `kubectl carto web` (DESIGN §10): a page listing
// every Workload and Deliverable the user can list, a page per owner with its resources
// as a tree along their inputs, a page per blueprint with its rollout, and the Runnables,
// a page each with its runs.
//
// It reads only owner, blueprint and Runnable status, through one informer per kind
// (Store, fed by Watch), with the user's own credentials: get, list and watch are all it
// needs. Pages are rendered on the server with html/template from pkg/view's models, so
// they say what the CLI says; assets are embedded and served under a
// Content-Security-Policy of default-src 'self', and nothing is fetched from anywhere else.
//
// Pages are live: each page opens an event stream (server-sent events) at /events plus
// its own path, on which the server sends the page's <main> again, rendered, whenever
// something it shows changed. Events carry ids; a stream that reconnects with
// Last-Event-ID gets the page again only if something it shows changed meanwhile.
// Comments every Options.Heartbeat keep idle streams open through proxies.
//
// Many readers (DESIGN §12): the informers' handlers never wait for a page (Store); one
// feed per open page renders it at most once per Options.MinInterval for every stream on
// it; every write to a stream has a deadline (Options.WriteTimeout); one client address
// holds at most Options.MaxStreamsPerClient streams; and the Host header must name a
// loopback host or one of Options.AllowedHosts, whatever address the server listens on.
package web
