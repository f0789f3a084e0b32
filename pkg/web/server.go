package web

import (
	"bytes"
	"context"
	"embed"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/utils/clock"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// csp allows the page nothing but its own origin: its stylesheet, its script and its
// event stream. Nothing inline runs, whatever a status holds.
const csp = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Options tune a Server.
type Options struct {
	// Heartbeat is how often an idle event stream gets a comment (default 15s).
	Heartbeat time.Duration
	// MinInterval is the shortest time between two renderings of an open page, and so
	// between two events of a stream: changes within it are sent together, as the state
	// after them (default 250ms).
	MinInterval time.Duration
	// WriteTimeout bounds every write to an event stream (default 10s): a client that
	// stops reading loses its stream then, instead of holding a goroutine and a
	// connection for as long as the server runs.
	WriteTimeout time.Duration
	// MaxStreamsPerClient is how many event streams one client address may hold open
	// (default 16, more tabs than a browser opens to one server over HTTP/1.1); one more
	// gets 429 Too Many Requests.
	MaxStreamsPerClient int
	// Retry is how long a browser waits before it reconnects a dropped stream (default 1s).
	Retry time.Duration
	// PageSize is how many owners a page of the list shows (default 100).
	PageSize int
	// AllowedHosts are the hosts (names or IP addresses, without a port) a request's
	// Host header may name besides the loopback ones (localhost, 127.0.0.1, [::1]), which
	// are always served. Any other Host gets 421, so that no other site can reach the
	// server through a name of its own that resolves to this machine (DNS rebinding),
	// whatever address the server listens on.
	AllowedHosts []string
	// Now is the time pages show ages against (default Clock's Now).
	Now func() time.Time
	// Clock paces the event streams, their MinInterval and Heartbeat (default the real
	// clock); a test with a fake one steps time itself. Write deadlines are the network's,
	// on the real clock always.
	Clock clock.WithTicker
}

// Server serves the pages and their event streams from a Store.
type Server struct {
	store *Store
	opts  Options
	tmpl  *template.Template
	mux   *http.ServeMux
	// done ends every event stream when the server is shut down.
	done context.Context
	// allowed are the hosts of AllowedHosts, lower case.
	allowed map[string]bool
	clients clientStreams
	feeds   feeds
}

// NewServer serves the pages of store until done ends (it ends the event streams, which
// http.Server.Shutdown does not).
func NewServer(done context.Context, store *Store, opts Options) (*Server, error) {
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	if opts.MinInterval <= 0 {
		opts.MinInterval = 250 * time.Millisecond
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 10 * time.Second
	}
	if opts.MaxStreamsPerClient <= 0 {
		opts.MaxStreamsPerClient = 16
	}
	if opts.Retry <= 0 {
		opts.Retry = time.Second
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 100
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Now == nil {
		opts.Now = opts.Clock.Now
	}
	tmpl, err := template.New("").Funcs(funcs).ParseFS(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	s := &Server{store: store, opts: opts, tmpl: tmpl, mux: http.NewServeMux(), done: done, allowed: map[string]bool{}}
	for _, h := range opts.AllowedHosts {
		h = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
		if ip := net.ParseIP(h); ip != nil {
			h = ip.String()
		}
		s.allowed[h] = true
	}
	static, err := fs.Sub(staticFiles, "static")
	if err != nil {
		return nil, err
	}
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for pattern, p := range map[string]page{
		"/{$}":                                  {s.list, listRelevant},
		"/" + ownerPath + "/{kind}/{ns}/{name}": {s.owner, ownerRelevant},
		"/" + blueprintPath + "/{kind}/{name}":  {s.blueprint, blueprintRelevant},
		"/" + runnablePath:                      {s.runnables, runnablesRelevant},
		"/" + runnablePath + "/{ns}/{name}":     {s.runnable, runnableRelevant},
	} {
		s.mux.HandleFunc("GET "+pattern, s.serve(p))
		s.mux.HandleFunc("GET /events"+pattern, s.stream(p))
	}
	return s, nil
}

// ServeHTTP serves a request with the headers every response carries.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.allowedHost(r.Host) {
		http.Error(w, "this server does not answer to the host "+r.Host+": see kubectl carto web --allowed-hosts", http.StatusMisdirectedRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	s.mux.ServeHTTP(w, r)
}

// allowedHost reports whether a Host header names this machine by a loopback name or by
// one of AllowedHosts.
func (s *Server) allowedHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if host == "localhost" || s.allowed[host] {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || s.allowed[ip.String()])
}

// page is what a path shows.
type page struct {
	// build renders the page as the store is now.
	build func(r *http.Request) rendering
	// relevant tells the changes to the store that alter the page.
	relevant func(r *http.Request) func(Key) bool
}

// rendering is a page as the store is now: the template of its <main> and its data.
type rendering struct {
	status int
	title  string
	main   string
	data   any
	// filters is the list's filter form, shown above <main> on the list page only.
	filters *filters
}

// layout is what the page template reads.
type layout struct {
	Title   string
	Filters *filters
	// Events is the page's event stream, with the change the page shows.
	Events string
	Main   template.HTML
}

// serve renders a page whole.
func (s *Server) serve(p page) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		seq, _ := s.store.Position()
		rd := p.build(r)
		main, err := s.render(rd)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		q := r.URL.Query()
		q.Set("since", s.store.EventID(seq))
		events := (&url.URL{Path: "/events" + r.URL.Path, RawQuery: q.Encode()}).String()
		var b bytes.Buffer
		if err := s.tmpl.ExecuteTemplate(&b, "layout", layout{Title: rd.title, Filters: rd.filters, Events: events, Main: main}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if rd.status != 0 {
			w.WriteHeader(rd.status)
		}
		// A page is written within WriteTimeout too: a client that does not read it
		// must not hold the handler (the server has no WriteTimeout, for the streams).
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
		_, _ = w.Write(b.Bytes())
	}
}

// render is a page's <main>, escaped by html/template.
func (s *Server) render(rd rendering) (template.HTML, error) {
	var b bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&b, rd.main, rd.data); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil //nolint:gosec // made by html/template, which escaped every value
}

// funcs are the templates' functions.
var funcs = template.FuncMap{"lower": strings.ToLower}
