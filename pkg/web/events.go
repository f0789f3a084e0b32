package web

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// stream serves a page's event stream: an "update" event with the page's <main>, rendered
// again, whenever a change it shows happened, each with the id of the last change it
// includes; a comment every Heartbeat while nothing happens. The stream starts from the
// Last-Event-ID header of a browser that reconnects, or from the since parameter the page
// was rendered with: a change after that (or an id this server did not give, from before
// a restart) gets the page at once, so nothing is missed in between.
func (s *Server) stream(p page) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		flusher, ok := w.(http.Flusher)
		if !ok {
			http.Error(w, "streaming is not supported", http.StatusInternalServerError)
			return
		}
		since := r.Header.Get("Last-Event-ID")
		if since == "" {
			since = r.URL.Query().Get("since")
		}
		last, known := s.store.ParseEventID(since)
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no")
		fmt.Fprintf(w, "retry: %d\n\n", s.opts.Retry.Milliseconds())
		flusher.Flush()

		heartbeat := time.NewTicker(s.opts.Heartbeat)
		defer heartbeat.Stop()
		var sent string
		var sentAt time.Time
		stale := !known
		relevant := p.relevant(r)
		for {
			seq, changed := s.store.Position()
			if stale || s.store.ChangedSince(last, relevant) {
				// Changes close together go out as one event.
				if wait := s.opts.MinInterval - time.Since(sentAt); wait > 0 {
					select {
					case <-time.After(wait):
						continue
					case <-r.Context().Done():
						return
					case <-s.done.Done():
						return
					}
				}
				main, err := s.render(p.build(r))
				if err != nil {
					return
				}
				// A change that leaves the page as it was sends nothing; a stream that
				// resumes from an older id then gets the same page again, which is harmless.
				if page := string(main); page != sent || stale {
					writeEvent(w, s.store.EventID(seq), "update", page)
					flusher.Flush()
					sent, sentAt = page, time.Now()
				}
				last, stale = seq, false
			}
			select {
			case <-changed:
			case <-heartbeat.C:
				fmt.Fprint(w, ": heartbeat\n\n")
				flusher.Flush()
			case <-r.Context().Done():
				return
			case <-s.done.Done():
				return
			}
		}
	}
}

// writeEvent writes one server-sent event. Every line of data gets its own data field; a
// carriage return counts as a line break, as the event stream format reads it, so that a
// status message holding one cannot start a field of its own.
func writeEvent(w http.ResponseWriter, id, event, data string) {
	var b strings.Builder
	fmt.Fprintf(&b, "id: %s\nevent: %s\n", id, event)
	data = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(data)
	for line := range strings.SplitSeq(data, "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	_, _ = w.Write([]byte(b.String()))
}
