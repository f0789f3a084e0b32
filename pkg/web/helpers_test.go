package web_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/view"
	"github.com/surveyor-dev/surveyor/pkg/web"
)

const (
	True    = metav1.ConditionTrue
	False   = metav1.ConditionFalse
	Unknown = metav1.ConditionUnknown
)

// patience bounds a wait for what the code does at once (a page rendered, an event sent):
// a loaded machine meets it by far, and a test reaches it only when it fails.
const patience = 30 * time.Second

var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func cond(t string, s metav1.ConditionStatus, gen int64, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, ObservedGeneration: gen, Reason: reason, Message: msg,
		LastTransitionTime: metav1.NewTime(now.Add(-time.Minute))}
}

// workload is a Workload at generation 1 of supply chain "chain", Ready when ready is
// True, with one resource "app" whose Healthy condition has msg.
func workload(ns, name string, ready metav1.ConditionStatus, msg string) view.Owner {
	reason := "Ready"
	if ready != True {
		reason = "HealthyConditionRule"
	}
	return view.Owner{
		Kind: v1alpha1.KindWorkload, Namespace: ns, Name: name, Generation: 1, Created: now.Add(-time.Hour),
		Blueprint: &v1alpha1.BlueprintReference{Kind: v1alpha1.KindClusterSupplyChain, Name: "chain"},
		Status: v1alpha1.OwnerStatus{
			ObservedGeneration: 1,
			Conditions: []metav1.Condition{
				cond(v1alpha1.ConditionSupplyChainReady, True, 1, "Ready", ""),
				cond(v1alpha1.ConditionResourcesSubmitted, True, 1, "ResourceSubmissionComplete", ""),
				cond(v1alpha1.ConditionResourcesHealthy, ready, 1, "HealthyConditionRule", msg),
				cond(v1alpha1.ConditionReady, ready, 1, reason, msg),
				cond(v1alpha1.ConditionAvailable, ready, 1, "HealthyAtGeneration", ""),
			},
			Resources: []v1alpha1.ResourceStatus{{
				Name:               "app",
				StampedRef:         &v1alpha1.StampedRef{APIVersion: "v1", Kind: "ConfigMap", Name: name + "-app", Resource: "configmaps"},
				TemplateRef:        &v1alpha1.TemplateReference{APIVersion: "carto.run/v1alpha1", Kind: "ClusterTemplate", Name: "app"},
				ObservedGeneration: 1,
				Conditions: []metav1.Condition{
					cond(v1alpha1.ConditionResourceSubmitted, True, 1, "ResourceSubmissionComplete", ""),
					cond(v1alpha1.ConditionHealthy, ready, 1, "MatchedField", msg),
					cond(v1alpha1.ConditionReady, ready, 1, "MatchedField", msg),
				},
			}},
		},
	}
}

// serve starts a Server of store with opts (and the fixed clock) on an httptest server.
func serve(t *testing.T, store *web.Store, opts web.Options) *httptest.Server {
	t.Helper()
	_, ts := serveWithServer(t, store, opts)
	return ts
}

// serveWithServer is serve, with the Server too.
func serveWithServer(t *testing.T, store *web.Store, opts web.Options) (*web.Server, *httptest.Server) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	opts.Now = func() time.Time { return now }
	srv, err := web.NewServer(ctx, store, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	// Streams end with the server's context, before Close waits for their requests.
	t.Cleanup(func() { cancel(); ts.Close() })
	return srv, ts
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// event is one server-sent event, or a comment.
type event struct {
	id, name, data, retry, comment string
}

// stream reads server-sent events.
type stream struct {
	t      *testing.T
	resp   *http.Response
	events chan event
}

// openStream requests an event stream with a Last-Event-ID header when lastID is set.
func openStream(t *testing.T, url, lastID string) *stream {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	s := &stream{t: t, resp: resp, events: make(chan event, 100)}
	go s.read()
	t.Cleanup(s.close)
	return s
}

func (s *stream) close() { s.resp.Body.Close() }

// read parses the stream as the event stream format says: fields up to a blank line;
// "\r", "\n" and "\r\n" all end a line.
func (s *stream) read() {
	defer close(s.events)
	sc := bufio.NewScanner(s.resp.Body)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := strings.IndexAny(string(data), "\r\n"); i >= 0 {
			if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			if data[i] == '\r' && i+1 == len(data) && !atEOF {
				return 0, nil, nil
			}
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	var e event
	var data []string
	for sc.Scan() {
		line := sc.Text()
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "":
			if e.name != "" || e.retry != "" || len(data) > 0 {
				e.data = strings.Join(data, "\n")
				s.events <- e
			}
			e, data = event{}, nil
		case field == "":
			s.events <- event{comment: value}
		case field == "id":
			e.id = value
		case field == "retry":
			e.retry = value
		case field == "event":
			e.name = value
		case field == "data":
			data = append(data, value)
		}
	}
}

// next is the next event or comment, failing the test after timeout.
func (s *stream) next(timeout time.Duration) event {
	s.t.Helper()
	select {
	case e, ok := <-s.events:
		if !ok {
			s.t.Fatal("the stream ended")
		}
		return e
	case <-time.After(timeout):
		s.t.Fatalf("no event within %s", timeout)
	}
	return event{}
}

// nextEvent is the next event, skipping comments and the retry field.
func (s *stream) nextEvent(timeout time.Duration) event {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if e := s.next(time.Until(deadline)); e.comment == "" && e.retry == "" {
			return e
		}
	}
}

func (e event) String() string {
	if e.comment != "" {
		return ": " + e.comment
	}
	return fmt.Sprintf("id=%s event=%s retry=%s data=%.80q", e.id, e.name, e.retry, e.data)
}
