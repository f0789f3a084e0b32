package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// hangingServer accepts requests and never answers them, like an API server whose
// etcd is gone, until the test ends.
func hangingServer(t *testing.T) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); ts.Close() })
	return ts
}

// wait --timeout bounds everything, the first request included: against a server that
// never answers it returns within the timeout and a small margin, with the timeout's
// exit code 2.
func TestWaitTimeoutBoundsTheFirstRequest(t *testing.T) {
	ts := hangingServer(t)
	const timeout = time.Second
	start := time.Now()
	code, out, errOut := carto(t, "wait", "app", "-n", "dev", "--for=ready", "--server", ts.URL, "--timeout", timeout.String())
	took := time.Since(start)
	if took > timeout+2*time.Second {
		t.Errorf("wait took %s with --timeout %s", took, timeout)
	}
	if want := "error: timed out after 1s waiting for app to be ready: the cluster did not answer\n"; code != 2 || errOut != want || out != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, stderr %q", code, out, errOut, want)
	}
}

// A server that answers the get and then hangs the watch's list: the timeout still ends
// the wait, with what was last known.
func TestWaitTimeoutBoundsTheWatch(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/workloads/app") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"apiVersion":"carto.run/v1alpha1","kind":"Workload","metadata":{"name":"app","namespace":"dev","generation":1}}`))
			return
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); ts.Close() })
	const timeout = time.Second
	start := time.Now()
	code, _, errOut := carto(t, "wait", "app", "-n", "dev", "--server", ts.URL, "--timeout", timeout.String())
	if took := time.Since(start); took > timeout+2*time.Second {
		t.Errorf("wait took %s with --timeout %s", took, timeout)
	}
	if want := "error: timed out after 1s waiting for app to be ready: the owner was never read\n"; code != 2 || errOut != want {
		t.Errorf("exit %d, stderr %q; want exit 2, stderr %q", code, errOut, want)
	}
}
