package web_test

import (
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/surveyor-dev/surveyor/pkg/web"
)

const ownerEvents = "/events/owners/workload/dev/app"

// position is the event id of the store's last change.
func position(s *web.Store) string {
	seq, _ := s.Position()
	return s.EventID(seq)
}

func TestStreamSendsThePageOnEveryChangeItShows(t *testing.T) {
	store := web.NewStore()
	store.SetOwner(workload("dev", "app", Unknown, "waiting"))
	ts := serve(t, store, web.Options{Heartbeat: time.Hour, MinInterval: time.Millisecond})

	s := openStream(t, ts.URL+ownerEvents+"?since="+position(store), "")
	if e := s.next(patience); e.retry != "1000" || e.name != "" || e.data != "" {
		t.Fatalf("first = %s, want only the retry field, 1000 (ms)", e)
	}
	// An owner the page does not show sends nothing; the next event is the page's own.
	store.SetOwner(workload("dev", "other", False, "not on this page"))
	store.SetOwner(workload("dev", "app", False, "broken: <b>bold</b>"))
	want := position(store)
	e := s.nextEvent(patience)
	if e.id != want || e.name != "update" {
		t.Fatalf("event = %s, want id %s, event update", e, want)
	}
	if !strings.Contains(e.data, "broken: &lt;b&gt;bold&lt;/b&gt;") || strings.Contains(e.data, "not on this page") {
		t.Errorf("the page sent does not show the change (escaped) alone:\n%s", e.data)
	}
	if strings.Contains(e.data, "<main") || strings.Contains(e.data, "<html") {
		t.Errorf("an event carries the contents of <main>, not the page:\n%s", e.data)
	}
}

// An idle stream gets a heartbeat comment every Heartbeat, on the clock the test steps.
func TestStreamHeartbeats(t *testing.T) {
	store := web.NewStore()
	clk := clocktesting.NewFakeClock(now)
	const heartbeat = 15 * time.Second
	ts := serve(t, store, web.Options{Heartbeat: heartbeat, Clock: clk})
	s := openStream(t, ts.URL+ownerEvents+"?since="+position(store), "")
	s.next(patience) // retry
	// The stream's ticker is the clock's only waiter: the page rendered, and the feed
	// waits for a change, not for time.
	waitFor(t, patience, "the stream's heartbeat ticker", func() bool { return clk.Waiters() == 1 })
	for range 3 {
		clk.Step(heartbeat)
		if e := s.next(patience); e.comment != "heartbeat" {
			t.Fatalf("got %s, want the heartbeat comment", e)
		}
	}
}

func TestStreamResumesFromLastEventID(t *testing.T) {
	store := web.NewStore()
	store.SetOwner(workload("dev", "app", Unknown, "waiting"))
	ts := serve(t, store, web.Options{Heartbeat: 50 * time.Millisecond, MinInterval: time.Millisecond})
	last := position(store)

	t.Run("nothing it shows changed: no event", func(t *testing.T) {
		store.SetOwner(workload("dev", "other", False, "elsewhere"))
		s := openStream(t, ts.URL+ownerEvents+"?since=ignored-when-the-header-is-set", last)
		s.next(patience) // retry
		if e := s.next(patience); e.comment != "heartbeat" {
			t.Fatalf("got %s before the first heartbeat, want nothing", e)
		}
	})
	t.Run("it changed while the stream was down: the page at once", func(t *testing.T) {
		store.SetOwner(workload("dev", "app", True, ""))
		want := position(store)
		s := openStream(t, ts.URL+ownerEvents, last)
		e := s.nextEvent(patience)
		if e.id != want || !strings.Contains(e.data, `<span class="st st-True" data-condition="Ready">Ready True</span>`) {
			t.Fatalf("event = %s, want id %s with the resource Ready", e, want)
		}
	})
	t.Run("an id of another run of the server: the page at once", func(t *testing.T) {
		want := position(store)
		s := openStream(t, ts.URL+ownerEvents, "0-1")
		if e := s.nextEvent(patience); e.id != want || e.name != "update" {
			t.Fatalf("event = %s, want the page with id %s", e, want)
		}
	})
	t.Run("an id older than the store remembers: the page at once", func(t *testing.T) {
		for i := range 5000 {
			store.SetOwner(workload("other", "w", True, strings.Repeat("x", i%3)))
		}
		want := position(store)
		s := openStream(t, ts.URL+ownerEvents, last)
		if e := s.nextEvent(patience); e.id != want {
			t.Fatalf("event = %s, want the page with id %s", e, want)
		}
	})
}

// A status message is user data: a carriage return in it must not end the data line and
// start a field (an id, an event name) of its own.
func TestStreamKeepsMessagesInsideTheirData(t *testing.T) {
	store := web.NewStore()
	store.SetOwner(workload("dev", "app", False, "one\rid: forged\revent: forged\r\ndata: <script>x</script>"))
	ts := serve(t, store, web.Options{Heartbeat: time.Hour})
	s := openStream(t, ts.URL+ownerEvents, "")
	e := s.nextEvent(patience)
	if e.id != position(store) || e.name != "update" {
		t.Fatalf("event = %s, want id %s, event update", e, position(store))
	}
	if !strings.Contains(e.data, "one\nid: forged\nevent: forged\ndata: &lt;script&gt;x&lt;/script&gt;") {
		t.Errorf("the message is not in the data as text:\n%s", e.data)
	}
}

func TestStreamsEndWithTheServer(t *testing.T) {
	store := web.NewStore()
	ts := serve(t, store, web.Options{Heartbeat: time.Hour})
	s := openStream(t, ts.URL+ownerEvents, "")
	s.nextEvent(patience)
	ts.CloseClientConnections()
	deadline := time.After(patience)
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the stream did not end")
		}
	}
}
