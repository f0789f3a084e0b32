package web_test

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surveyor-dev/surveyor/pkg/view"
	"github.com/surveyor-dev/surveyor/pkg/web"
)

// A server on a non-loopback address still checks Host: its own address and the names
// it was given are served, any other name gets 421.
func TestHostCheckStaysOnForNonLoopbackAddresses(t *testing.T) {
	ts := serve(t, web.NewStore(), web.Options{AllowedHosts: []string{"10.0.0.5", "Carto.Example", "[fd00::5]"}})
	checkHosts(t, ts.URL, map[string]int{
		"10.0.0.5:8080": http.StatusOK, "carto.example:8080": http.StatusOK, "[fd00::5]:8080": http.StatusOK,
		"localhost:8080": http.StatusOK, "127.0.0.1": http.StatusOK,
		"attacker.example:8080": http.StatusMisdirectedRequest, "10.0.0.6:8080": http.StatusMisdirectedRequest,
		"carto.example.attacker.example": http.StatusMisdirectedRequest,
	})
}

// One client address may hold MaxStreamsPerClient streams; one more gets 429 until one
// of them ends.
func TestStreamsPerClientAreLimited(t *testing.T) {
	store := web.NewStore()
	ts := serve(t, store, web.Options{MaxStreamsPerClient: 2, Heartbeat: time.Hour})
	url := ts.URL + ownerEvents + "?since=" + position(store)
	a := openStream(t, url, "")
	openStream(t, url, "")
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("third stream: %s (Retry-After %q), want 429 with Retry-After", resp.Status, resp.Header.Get("Retry-After"))
	}
	a.close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a stream ended, and a new one still gets %s", resp.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A client that opens a stream and never reads it loses the stream once a write has
// stalled for WriteTimeout: its handler returns, though the client keeps the connection.
func TestStreamWriteDeadlineDropsAClientThatDoesNotRead(t *testing.T) {
	store := web.NewStore()
	store.SetOwner(workload("dev", "app", Unknown, "waiting"))
	srv, ts := serveWithServer(t, store, web.Options{WriteTimeout: 300 * time.Millisecond, MinInterval: time.Millisecond, Heartbeat: time.Hour})

	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", ownerEvents)
	waitFor(t, 5*time.Second, "the stream to open", func() bool { return srv.OpenStreams("127.0.0.1") == 1 })

	// Pages of 256 KiB each, until the socket buffers are full and a write stalls.
	big := strings.Repeat("x", 256<<10)
	start := time.Now()
	for i := 0; srv.OpenStreams("127.0.0.1") > 0; i++ {
		if time.Since(start) > 20*time.Second {
			t.Fatal("the stream of a client that does not read is still open after 20s")
		}
		store.SetOwner(workload("dev", "app", False, fmt.Sprintf("%d %s", i, big)))
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("the stream of a client that does not read ended after %s", time.Since(start).Round(time.Millisecond))
}

// An open page gets at most one update per MinInterval, and the last one carries the
// latest state.
func TestStreamCoalescesUpdates(t *testing.T) {
	store := web.NewStore()
	store.SetOwner(workload("dev", "app", Unknown, "waiting"))
	const interval = 200 * time.Millisecond
	ts := serve(t, store, web.Options{MinInterval: interval, Heartbeat: time.Hour})
	s := openStream(t, ts.URL+ownerEvents+"?since="+position(store), "")
	s.next(time.Second) // retry

	// 60 changes, one every 10 ms: 600 ms, at most 4 intervals' worth of events.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 60 {
			store.SetOwner(workload("dev", "app", False, fmt.Sprintf("change %d", i)))
			time.Sleep(10 * time.Millisecond)
		}
	}()
	// Events are read as they come, while the changes go on.
	var events []event
	var at []time.Time
	for {
		e := s.nextEvent(5 * time.Second)
		events, at = append(events, e), append(at, time.Now())
		if strings.Contains(e.data, "change 59") {
			break
		}
	}
	<-done
	if last, final := events[len(events)-1].id, position(store); last != final {
		t.Errorf("the last event has id %s, want the last change's, %s", last, final)
	}
	if n := len(events); n > 5 || n < 2 {
		t.Errorf("%d events for 60 changes over 600 ms, want some, and at most one per %s", n, interval)
	}
	for i := 1; i < len(at); i++ {
		// The clock of the reading side; a little slack for scheduling.
		if gap := at[i].Sub(at[i-1]); gap < interval-50*time.Millisecond {
			t.Errorf("events %d and %d %s apart, want at least %s", i-1, i, gap, interval)
		}
	}
	if last := events[len(events)-1]; !strings.Contains(last.data, "change 59") {
		t.Errorf("the last event does not carry the latest state (change 59):\n%.300s", last.data)
	}
}

// The store never holds its lock while a reader goes through the owners: an informer's
// handler adds, changes and deletes owners while a list is being read (old code: the
// handler waited for the whole list).
func TestStoreWritesDoNotWaitForReaders(t *testing.T) {
	store := web.NewStore()
	for i := range 100 {
		store.SetOwner(workload("dev", fmt.Sprintf("w-%03d", i), True, ""))
	}
	// The reader stops at its first owner until the test is done: a blocking send, since
	// one that gave up when nobody was receiving yet could let the reader finish first.
	inside, release := make(chan struct{}), make(chan struct{})
	var first sync.Once
	go store.Owners(func(view.Owner) bool {
		first.Do(func() {
			inside <- struct{}{}
			<-release
		})
		return true
	})
	<-inside
	defer close(release)
	wrote := make(chan struct{})
	go func() {
		store.SetOwner(workload("dev", "w-000", False, "changed"))
		store.SetOwner(workload("dev", "new", True, ""))
		store.DeleteOwner(web.Key{Kind: "Workload", Namespace: "dev", Name: "w-001"})
		_ = store.Namespaces()
		close(wrote)
	}()
	select {
	case <-wrote:
	case <-time.After(5 * time.Second):
		t.Fatal("the store's writers waited for a reader")
	}
	if got := len(store.Owners(func(view.Owner) bool { return true })); got != 100 {
		t.Errorf("%d owners after adding one and deleting one of 100, want 100", got)
	}
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
