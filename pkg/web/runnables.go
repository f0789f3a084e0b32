package web

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/view"
)

// runnablePath is the path of the Runnables' pages: /runnables, and
// /runnables/NAMESPACE/NAME for one.
const runnablePath = "runnables"

func runnableURL(namespace, name string) string {
	return "/" + runnablePath + "/" + url.PathEscape(namespace) + "/" + url.PathEscape(name)
}

// SetRunnable adds or replaces a Runnable. It is O(1): an informer's handler calls it.
func (s *Store) SetRunnable(r view.Runnable) {
	put(s, s.runnables, Key{v1alpha1.KindRunnable, r.Namespace, r.Name}, r)
}

// DeleteRunnable removes a Runnable.
func (s *Store) DeleteRunnable(k Key) { remove(s, s.runnables, k) }

// Runnable is the Runnable k, if the store has it.
func (s *Store) Runnable(k Key) (view.Runnable, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.runnables[k]
	return r, ok
}

// Runnables are the Runnables of namespace ("" for all), by namespace and name. The lock
// is held only to copy them; they are sorted outside it.
func (s *Store) Runnables(namespace string) []view.Runnable {
	s.mu.RLock()
	out := make([]view.Runnable, 0, len(s.runnables))
	for _, r := range s.runnables {
		if namespace == "" || r.Namespace == namespace {
			out = append(out, r)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b view.Runnable) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return out
}

// runnableRow is a Runnable in the list.
type runnableRow struct {
	Namespace, Name, URL, Template string
	Generation                     int64
	Ready, Succeeded               []view.Span
	Latest, Runs, Reason, Age      string
}

type runnablesData struct {
	Namespace string
	Banners   []string
	Rows      []runnableRow
	// From and To number the rows shown among Total.
	From, To, Total int
	Prev, Next      string
}

// runnablesURL is the list of namespace's Runnables ("" for all) on page.
func runnablesURL(namespace string, page int) string {
	q := url.Values{}
	if namespace != "" {
		q.Set("ns", namespace)
	}
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	u := "/" + runnablePath
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// runnables is the page of every Runnable (of the namespace ?ns=), a row each with its
// newest run, a page of PageSize at a time.
func (s *Server) runnables(r *http.Request) rendering {
	ns := r.URL.Query().Get("ns")
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	opts := view.Options{Now: s.opts.Now()}
	all := s.store.Runnables(ns)
	d := runnablesData{Namespace: ns, Banners: s.banners(v1alpha1.KindRunnable), Total: len(all)}
	pages := max(1, (d.Total+s.opts.PageSize-1)/s.opts.PageSize)
	page = min(max(page, 1), pages)
	d.From = (page - 1) * s.opts.PageSize
	d.To = min(d.From+s.opts.PageSize, d.Total)
	for _, rn := range all[d.From:d.To] {
		row := runnableRow{
			Namespace: rn.Namespace, Name: rn.Name, URL: runnableURL(rn.Namespace, rn.Name), Template: rn.Template,
			Generation: rn.Generation, Ready: view.ConditionStatus(rn.Condition(v1alpha1.ConditionReady)),
			Latest: "-", Succeeded: []view.Span{{Text: "-"}}, Runs: strconv.Itoa(len(rn.Status.Runs)), Reason: rn.Reason(), Age: opts.Age(rn.Created),
		}
		if len(rn.Status.Runs) > 0 {
			latest := rn.Status.Runs[0]
			row.Latest, row.Succeeded = latest.Kind+"/"+latest.Name, []view.Span{{Text: string(latest.Succeeded), Status: latest.Succeeded}}
		}
		d.Rows = append(d.Rows, row)
	}
	if d.To > d.From {
		d.From++
	}
	if page > 1 {
		d.Prev = runnablesURL(ns, page-1)
	}
	if page < pages {
		d.Next = runnablesURL(ns, page+1)
	}
	return rendering{title: "Runnables", main: "runnables", data: d}
}

// runnablesRelevant: the list shows the Runnables of its namespace and the state of their
// watch.
func runnablesRelevant(r *http.Request) func(Key) bool {
	ns := r.URL.Query().Get("ns")
	return func(k Key) bool {
		return k.Kind == v1alpha1.KindRunnable && (k.Name == "" || ns == "" || k.Namespace == ns)
	}
}

type runnableData struct {
	Found           bool
	Namespace, Name string
	Summary         []view.Field
	Banners         []string
	Conditions      []metav1.Condition
	Outputs         []view.Field
	Runs            []run
	Age             func(metav1.Time) string
}

// run is a run of a Runnable page.
type run struct {
	Name, Reason, Message, Age string
	Succeeded                  metav1.ConditionStatus
}

func runnableKey(r *http.Request) Key {
	return Key{Kind: v1alpha1.KindRunnable, Namespace: r.PathValue("ns"), Name: r.PathValue("name")}
}

// runnable is the page of one Runnable: its summary, conditions, outputs, and runs, newest
// first, with their Succeeded condition.
func (s *Server) runnable(r *http.Request) rendering {
	k := runnableKey(r)
	d := runnableData{Namespace: k.Namespace, Name: k.Name, Banners: s.banners(v1alpha1.KindRunnable)}
	title := v1alpha1.KindRunnable + " " + k.Namespace + "/" + k.Name
	rn, ok := s.store.Runnable(k)
	if !ok {
		return rendering{status: http.StatusNotFound, title: title, main: "runnable", data: d}
	}
	opts := view.Options{Now: s.opts.Now()}
	d.Found, d.Summary, d.Conditions, d.Outputs = true, rn.Summary(), rn.Status.Conditions, rn.Outputs()
	d.Age = func(t metav1.Time) string { return opts.Age(t.Time) }
	for _, r := range rn.Status.Runs {
		d.Runs = append(d.Runs, run{Name: r.Kind + "/" + r.Name, Reason: r.Reason, Message: r.Message, Age: opts.Age(r.Created.Time), Succeeded: r.Succeeded})
	}
	return rendering{title: title, main: "runnable", data: d}
}

// runnableRelevant: a Runnable page shows the Runnable and the state of its kind's watch.
func runnableRelevant(r *http.Request) func(Key) bool {
	want := runnableKey(r)
	return func(k Key) bool { return k == want || k == Key{Kind: want.Kind} }
}
