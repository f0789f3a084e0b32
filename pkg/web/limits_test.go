package web_test

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

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
	deadline := time.Now().Add(patience)
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
	defer func() { _ = conn.Close() }()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", ownerEvents)
	waitFor(t, patience, "the stream to open", func() bool { return srv.OpenStreams("127.0.0.1") == 1 })

	// Pages of 256 KiB each, until the socket buffers are full and a write stalls.
	big := strings.Repeat("x", 256<<10)
	start := time.Now()
	for i := 0; srv.OpenStreams("127.0.0.1") > 0; i++ {
		if time.Since(start) > patience {
			t.Fatalf("the stream of a client that does not read is still open after %s", patience)
		}
		store.SetOwner(workload("dev", "app", False, fmt.Sprintf("%d %s", i, big)))
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("the stream of a client that does not read ended after %s", time.Since(start).Round(time.Millisecond))
}

// An open page gets at most one update per MinInterval, and it carries the latest state:
// changes made while the interval runs go out together once it is over. The clock is a fake
// one the test steps, so the interval is the code's and not the machine's.
func TestStreamCoalescesUpdates(t *testing.T) {
	store := web.NewStore()
	store.SetOwner(workload("dev", "app", Unknown, "waiting"))
	const interval = 200 * time.Millisecond
	clk := clocktesting.NewFakeClock(now)
	ts := serve(t, store, web.Options{MinInterval: interval, Heartbeat: time.Hour, Clock: clk})
	// No since: the page at once, rendered when the stream opens, which starts the interval.
	s := openStream(t, ts.URL+ownerEvents, "")
	if e := s.nextEvent(patience); !strings.Contains(e.data, "waiting") {
		t.Fatalf("first event = %s, want the page as it was", e)
	}
	waiters := clk.Waiters() // the stream's heartbeat

	for i := range 60 {
		store.SetOwner(workload("dev", "app", False, fmt.Sprintf("change %d", i)))
	}
	// The feed saw a change and waits for the rest of the interval.
	waitFor(t, patience, "the feed to wait for its interval", func() bool { return clk.Waiters() == waiters+1 })
	clk.Step(interval - time.Millisecond)
	if clk.Waiters() != waiters+1 {
		t.Fatalf("the feed stopped waiting %s into an interval of %s", interval-time.Millisecond, interval)
	}
	clk.Step(time.Millisecond)
	e := s.nextEvent(patience)
	if !strings.Contains(e.data, "change 59") || e.id != position(store) {
		t.Fatalf("the event after the interval = %s, want the latest state (change 59) with id %s", e, position(store))
	}

	// The next change, right after that rendering, waits for an interval of its own.
	store.SetOwner(workload("dev", "app", False, "change 60"))
	waitFor(t, patience, "the feed to wait for its interval", func() bool { return clk.Waiters() == waiters+1 })
	select {
	case e := <-s.events:
		t.Fatalf("%s within the interval of the last update", e)
	default:
	}
	clk.Step(interval)
	if e := s.nextEvent(patience); !strings.Contains(e.data, "change 60") || e.id != position(store) {
		t.Fatalf("the event after the second interval = %s, want change 60 with id %s", e, position(store))
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
	case <-time.After(patience):
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
