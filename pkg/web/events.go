package web

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// stream serves a page's event stream: an "update" event with the page's <main>, rendered
// again, whenever a change it shows happened, each with the id of the last change it
// includes; a comment every Heartbeat while nothing happens. The stream starts from the
// Last-Event-ID header of a browser that reconnects, or from the since parameter the page
// was rendered with: a change after that (or an id this server did not give, from before
// a restart) gets the page at once, so nothing is missed in between.
//
// A stream does not render: the page's feed does, at most once per MinInterval for all
// the streams open on it (see feed). Every write has a deadline of WriteTimeout, so a
// client that stops reading costs a goroutine for that long, not forever; and a client
// address may hold MaxStreamsPerClient streams at once, beyond which it gets 429.
func (s *Server) stream(p page) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		client := clientOf(r)
		if !s.clients.acquire(client, s.opts.MaxStreamsPerClient) {
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int(s.opts.Retry.Seconds()))))
			http.Error(w, fmt.Sprintf("too many event streams from %s (at most %d)", client, s.opts.MaxStreamsPerClient), http.StatusTooManyRequests)
			return
		}
		defer s.clients.release(client)

		since := r.Header.Get("Last-Event-ID")
		if since == "" {
			since = r.URL.Query().Get("since")
		}
		sentSeq, known := s.store.ParseEventID(since)
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no")
		out := &deadlineWriter{w: w, rc: http.NewResponseController(w), timeout: s.opts.WriteTimeout}
		if out.write(fmt.Sprintf("retry: %d\n\n", s.opts.Retry.Milliseconds())) != nil {
			return
		}

		f := s.feeds.subscribe(s, p, r)
		defer s.feeds.unsubscribe(f)
		heartbeat := s.opts.Clock.NewTicker(s.opts.Heartbeat)
		defer heartbeat.Stop()
		relevant := p.relevant(r)
		sent := ""
		stale := !known
		for {
			u, next := f.latest()
			// The feed's page is news to this stream when it is newer than what the stream
			// has and something the page shows changed in between (not later: a change the
			// feed has not rendered yet goes out with the id of the rendering that shows it);
			// a stream that resumes from an older id then gets the same page again, which is
			// harmless.
			if u.rendered && u.seq >= sentSeq && (stale || s.store.ChangedBetween(sentSeq, u.seq, relevant)) {
				if u.page != sent || stale {
					if writeEvent(out, s.store.EventID(u.seq), "update", u.page) != nil {
						return
					}
					sent = u.page
				}
				sentSeq, stale = u.seq, false
			}
			select {
			case <-next:
			case <-heartbeat.C():
				if out.write(": heartbeat\n\n") != nil {
					return
				}
			case <-r.Context().Done():
				return
			case <-s.done.Done():
				return
			}
		}
	}
}

// deadlineWriter writes to a response with a deadline on every write, and flushes.
type deadlineWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

// write writes s and flushes it within the timeout; an error ends the stream (the
// connection is closed by the server once the handler returns).
func (d *deadlineWriter) write(s string) error {
	// The deadline is set before each write, not once: a stream lives for hours, and only
	// a write that stalls must fail.
	if err := d.rc.SetWriteDeadline(time.Now().Add(d.timeout)); err != nil {
		return err
	}
	if _, err := d.w.Write([]byte(s)); err != nil {
		return err
	}
	return d.rc.Flush()
}

// writeEvent writes one server-sent event. Every line of data gets its own data field; a
// carriage return counts as a line break, as the event stream format reads it, so that a
// status message holding one cannot start a field of its own.
func writeEvent(out *deadlineWriter, id, event, data string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "id: %s\nevent: %s\n", id, event)
	data = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(data)
	for line := range strings.SplitSeq(data, "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	return out.write(b.String())
}

// clientOf is the address a request comes from, without its port: every connection of a
// browser (or of a script) counts against one limit.
func clientOf(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// clientStreams counts the open event streams of each client address.
type clientStreams struct {
	mu   sync.Mutex
	open map[string]int
}

// acquire counts one more stream of client, unless it has limit open already.
func (c *clientStreams) acquire(client string, limit int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[client] >= limit {
		return false
	}
	if c.open == nil {
		c.open = map[string]int{}
	}
	c.open[client]++
	return true
}

// release counts one stream of client fewer.
func (c *clientStreams) release(client string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[client]--; c.open[client] <= 0 {
		delete(c.open, client)
	}
}

// OpenStreams is how many event streams the client address client (an IP, as in
// RemoteAddr without the port) has open.
func (s *Server) OpenStreams(client string) int {
	s.clients.mu.Lock()
	defer s.clients.mu.Unlock()
	return s.clients.open[client]
}

// update is a page as a feed last rendered it.
type update struct {
	// rendered is false until the feed's first rendering.
	rendered bool
	// seq is the store's change the page shows the store as of.
	seq  uint64
	page string
}

// feed renders one page (one path and query) for every stream open on it: one goroutine
// that wakes on the store's changes, renders the page when a change it shows happened,
// at most once per MinInterval, and hands the latest rendering to the streams. Ten open
// tabs of the list cost one rendering per interval, not ten per change; and a stream
// always gets the latest state, since the feed renders after the interval, not before.
type feed struct {
	key string
	// streams counts the subscribers; guarded by feeds.mu.
	streams int
	stop    context.CancelFunc

	mu   sync.Mutex
	last update
	// next is closed, and replaced, when last changes.
	next chan struct{}
}

// latest is the feed's last rendering and a channel closed at the next one.
func (f *feed) latest() (update, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last, f.next
}

// publish makes u the latest rendering; streams wake when the page differs or is of a later
// change. A rendering can show a change made after the position it was taken at (the store
// moved on while it rendered), so the next one can be the same page at a later position,
// and a stream that has not sent the page yet must see that.
func (f *feed) publish(u update) {
	f.mu.Lock()
	defer f.mu.Unlock()
	changed := !f.last.rendered || u.page != f.last.page || u.seq != f.last.seq
	f.last = u
	if changed {
		close(f.next)
		f.next = make(chan struct{})
	}
}

// run renders the page of r until ctx ends.
func (f *feed) run(ctx context.Context, s *Server, p page, r *http.Request) {
	relevant := p.relevant(r)
	var last uint64
	var renderedAt time.Time
	first := true
	for {
		seq, changed := s.store.Position()
		if first || s.store.ChangedSince(last, relevant) {
			// Changes close together go out as one rendering, of the state after them.
			if wait := s.opts.MinInterval - s.opts.Clock.Since(renderedAt); wait > 0 {
				timer := s.opts.Clock.NewTimer(wait)
				select {
				case <-timer.C():
					continue
				case <-ctx.Done():
					timer.Stop()
					return
				}
			}
			main, err := s.render(p.build(r))
			renderedAt = s.opts.Clock.Now()
			if err == nil {
				f.publish(update{rendered: true, seq: seq, page: string(main)})
			}
			last, first = seq, false
			continue
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// feeds are the feeds of the pages that have streams open, by path and query.
type feeds struct {
	mu    sync.Mutex
	byKey map[string]*feed
}

// subscribe is the feed of r's page, started if no stream has it open yet.
func (fs *feeds) subscribe(s *Server, p page, r *http.Request) *feed {
	q := r.URL.Query()
	// The page depends on its path and filters, not on where a stream resumes from.
	q.Del("since")
	key := r.URL.Path + "?" + q.Encode()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f, ok := fs.byKey[key]; ok {
		f.streams++
		return f
	}
	ctx, stop := context.WithCancel(s.done)
	f := &feed{key: key, streams: 1, stop: stop, next: make(chan struct{})}
	if fs.byKey == nil {
		fs.byKey = map[string]*feed{}
	}
	fs.byKey[key] = f
	// The feed keeps the first stream's request to build the page from: pages read only
	// its path and query, which every stream of the feed shares.
	go f.run(ctx, s, p, r)
	return f
}

// unsubscribe ends a stream's use of f, and f with its last stream.
func (fs *feeds) unsubscribe(f *feed) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f.streams--; f.streams == 0 {
		f.stop()
		delete(fs.byKey, f.key)
	}
}
