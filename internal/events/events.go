package events

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/surveyor-dev/surveyor/internal/apierr"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/tools/reference"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// maxEventMessage is the longest Event message written; a reconcile that changed many
// objects lists as many as fit.
const maxEventMessage = 1024

// eventWorkers write Events side by side; their requests are small.
const eventWorkers = 4

var (
	eventsRecorded = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "surveyor_events_recorded_total", Help: "Events written to the API server.",
	})
	eventsFailed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "surveyor_events_failed_total",
		Help: "Events the API server refused for good (their namespace is going, say); none is dropped for want of room.",
	})
)

// Metrics are the recorder's counters, for the controller's metrics registry.
func Metrics() []prometheus.Collector { return []prometheus.Collector{eventsRecorded, eventsFailed} }

// Recorder writes Events through an unbounded queue. client-go's broadcaster drops
// an event when its channel is full, which happens as soon as a controller converging
// many owners records faster than its client may write; this one never drops: an Event
// waits its turn, and a transient failure is retried until the process stops. The owner
// reconciler records at most one Event per reason per reconcile (Log), so the queue
// grows no faster than the reconciles.
type Recorder struct {
	client kubernetes.Interface
	scheme *runtime.Scheme
	// component reports the Events, on instance.
	component, instance string
	seq                 atomic.Uint64

	mu    sync.Mutex
	queue []*corev1.Event
	wake  chan struct{}
}

// NewRecorder makes a recorder of component's Events, writing with a protobuf client built
// from cfg.
func NewRecorder(cfg *rest.Config, scheme *runtime.Scheme, component string) (*Recorder, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	return &Recorder{client: cs, scheme: scheme, component: component, instance: host, wake: make(chan struct{}, 1)}, nil
}

// Event queues an Event about obj.
func (r *Recorder) Event(obj runtime.Object, eventType, reason, message string) {
	ref, err := reference.GetReference(r.scheme, obj)
	if err != nil {
		logf.Log.Error(err, "not recording an event about an object without a reference", "reason", reason)
		return
	}
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault // events about cluster-scoped objects
	}
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x%x", ref.Name, now.UnixNano(), r.seq.Add(1)), Namespace: ns},
		InvolvedObject:      *ref,
		Reason:              reason,
		Message:             truncate(message, maxEventMessage),
		Type:                eventType,
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		Source:              corev1.EventSource{Component: r.component},
		ReportingController: r.component,
		ReportingInstance:   r.instance,
	}
	r.mu.Lock()
	r.queue = append(r.queue, ev)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Eventf queues an Event with a formatted message.
func (r *Recorder) Eventf(obj runtime.Object, eventType, reason, format string, args ...any) {
	r.Event(obj, eventType, reason, fmt.Sprintf(format, args...))
}

// AnnotatedEventf queues an Event; annotations are not kept.
func (r *Recorder) AnnotatedEventf(obj runtime.Object, _ map[string]string, eventType, reason, format string, args ...any) {
	r.Eventf(obj, eventType, reason, format, args...)
}

// Start writes queued Events until ctx ends, then for up to five seconds more to flush
// what is left.
func (r *Recorder) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	flush, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	for range eventWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work(ctx, flush)
		}()
	}
	<-ctx.Done()
	time.AfterFunc(5*time.Second, cancel)
	wg.Wait()
	return nil
}

// NeedLeaderElection is false: only reconcilers record, and they run on the leader.
func (r *Recorder) NeedLeaderElection() bool { return false }

// work writes Events one at a time; once ctx ends it empties the queue under flush.
func (r *Recorder) work(ctx, flush context.Context) {
	for {
		ev := r.next()
		if ev == nil {
			select {
			case <-r.wake:
				continue
			case <-ctx.Done():
				if r.next() == nil {
					return
				}
				continue
			}
		}
		r.write(flush, ev)
	}
}

func (r *Recorder) next() *corev1.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queue) == 0 {
		return nil
	}
	ev := r.queue[0]
	r.queue[0] = nil
	r.queue = r.queue[1:]
	if len(r.queue) > 0 {
		select { // another worker may take the next one
		case r.wake <- struct{}{}:
		default:
		}
	}
	return ev
}

// write creates the Event, retrying transient failures with backoff until ctx ends.
func (r *Recorder) write(ctx context.Context, ev *corev1.Event) {
	delay := 100 * time.Millisecond
	for {
		_, err := r.client.CoreV1().Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
		switch {
		case err == nil:
			eventsRecorded.Inc()
			return
		case ctx.Err() != nil || !apierr.Transient(err):
			eventsFailed.Inc()
			logf.Log.Error(err, "recording event", "object", ev.InvolvedObject.Name, "namespace", ev.Namespace, "reason", ev.Reason)
			return
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		}
		delay = min(2*delay, 10*time.Second)
	}
}

// truncate shortens s to at most n bytes, on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const more = " …"
	cut := n - len(more)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}

// Log gathers what one reconcile of an owner did, by reason, so that it is
// recorded as one Event per reason listing every object rather than one per object.
type Log struct {
	reasons []string
	parts   map[string][]string
	// warnings are the reasons recorded as Warning Events, the rest being Normal.
	warnings map[string]bool
}

// Add notes one thing the reconcile did under reason, formatted as fmt.Sprintf does;
// the Event for reason joins every note added under it.
func (l *Log) Add(reason, format string, args ...any) {
	if l.parts == nil {
		l.parts = map[string][]string{}
	}
	if _, ok := l.parts[reason]; !ok {
		l.reasons = append(l.reasons, reason)
	}
	l.parts[reason] = append(l.parts[reason], fmt.Sprintf(format, args...))
}

// Warn gathers a Warning Event's part: reason is recorded as a Warning.
func (l *Log) Warn(reason, format string, args ...any) {
	if l.warnings == nil {
		l.warnings = map[string]bool{}
	}
	l.warnings[reason] = true
	l.Add(reason, format, args...)
}

// Record writes the gathered Events about owner.
func (l *Log) Record(rec record.EventRecorder, owner runtime.Object) {
	for _, reason := range l.reasons {
		typ := corev1.EventTypeNormal
		if l.warnings[reason] {
			typ = corev1.EventTypeWarning
		}
		rec.Event(owner, typ, reason, strings.Join(l.parts[reason], "; "))
	}
}
