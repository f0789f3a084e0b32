package events

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// One reconcile records one Event per reason, listing every object in the order they
// were changed.
func TestEventLogOneEventPerReason(t *testing.T) {
	var log Log
	log.Add(v1alpha1.EventStampedObjectApplied, "Applied %s/%s for resource [%s]", "ConfigMap", "app-source", "source")
	log.Add(v1alpha1.EventResourceHealthyStatusChanged, "Resource [%s] health changed from %s to %s", "source", "Unknown", "True")
	log.Add(v1alpha1.EventStampedObjectApplied, "Applied %s/%s for resource [%s]", "Service", "app", "service")
	log.Warn(v1alpha1.EventStampedObjectRemovalFailed, "Unable to remove %s/%s of resource [%s]: %s", "Widget", "app", "widget", "forbidden")
	rec := record.NewFakeRecorder(10)
	log.Record(rec, &v1alpha1.Workload{})
	close(rec.Events)
	var got []string
	for e := range rec.Events {
		got = append(got, e)
	}
	want := []string{
		"Normal StampedObjectApplied Applied ConfigMap/app-source for resource [source]; Applied Service/app for resource [service]",
		"Normal ResourceHealthyStatusChanged Resource [source] health changed from Unknown to True",
		"Warning StampedObjectRemovalFailed Unable to remove Widget/app of resource [widget]: forbidden",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestTruncateKeepsRunesWhole(t *testing.T) {
	s := strings.Repeat("é", 600) // 1200 bytes
	got := truncate(s, maxEventMessage)
	if len(got) > maxEventMessage || !utf8.ValidString(got) || !strings.HasSuffix(got, " …") {
		t.Errorf("truncate gave %d bytes, valid UTF-8 %v: %q…", len(got), utf8.ValidString(got), got[len(got)-10:])
	}
	if short := "Applied ConfigMap/a"; truncate(short, maxEventMessage) != short {
		t.Error("a short message was changed")
	}
}

// The recorder queues every Event, however many arrive before it writes any.
func TestEventRecorderQueuesWithoutDropping(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	r := &Recorder{scheme: scheme, component: "surveyor", wake: make(chan struct{}, 1)}
	wl := &v1alpha1.Workload{}
	wl.Namespace, wl.Name = "ns", "app"
	const n = 5000 // client-go's broadcaster drops beyond 1000 queued
	for range n {
		r.Event(wl, corev1.EventTypeNormal, v1alpha1.EventStampedObjectApplied, "Applied")
	}
	if len(r.queue) != n {
		t.Fatalf("queued %d events, want %d", len(r.queue), n)
	}
	names := map[string]bool{}
	for _, ev := range r.queue {
		names[ev.Name] = true
		if ev.InvolvedObject.Kind != v1alpha1.KindWorkload || ev.InvolvedObject.Name != "app" || ev.Namespace != "ns" || ev.Source.Component != "surveyor" {
			t.Fatalf("event %+v does not name the Workload", ev)
		}
	}
	if len(names) != n {
		t.Errorf("%d distinct event names for %d events", len(names), n)
	}
}
