package web_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/view"
	"github.com/surveyor-dev/surveyor/pkg/web"
)

// runnable is a Runnable at generation 1 whose newest run has the verdict newest and an
// older run succeeded, with the message msg on its newest run.
func runnable(ns, name string, newest metav1.ConditionStatus, msg string) view.Runnable {
	reason := "Ready"
	if newest != True {
		reason = "SucceededCondition"
	}
	return view.Runnable{
		Namespace: ns, Name: name, Generation: 1, Created: now.Add(-time.Hour), Template: "tekton",
		Status: v1alpha1.RunnableStatus{
			ObservedGeneration: 1,
			Conditions: []metav1.Condition{
				cond(v1alpha1.ConditionRunTemplateReady, True, 1, "Ready", ""),
				cond(v1alpha1.ConditionStampedObjectCondition, newest, 1, "SucceededCondition", msg),
				cond(v1alpha1.ConditionReady, newest, 1, reason, msg),
			},
			Outputs: map[string]apiextensionsv1.JSON{"revision": {Raw: []byte(`"abc"`)}},
			Runs: []v1alpha1.RunStatus{
				{APIVersion: "tekton.dev/v1", Kind: "PipelineRun", Name: name + "-2", Created: metav1.NewTime(now.Add(-time.Minute)), Succeeded: newest, Reason: "R", Message: msg},
				{APIVersion: "tekton.dev/v1", Kind: "PipelineRun", Name: name + "-1", Created: metav1.NewTime(now.Add(-time.Hour)), Succeeded: True, Reason: "Succeeded"},
			},
		},
	}
}

func TestRunnablePages(t *testing.T) {
	store := web.NewStore()
	synced(store, v1alpha1.KindRunnable)
	for i := range 3 {
		store.SetRunnable(runnable(fmt.Sprintf("ns-%d", i%2), fmt.Sprintf("r-%d", i), True, ""))
	}
	store.SetRunnable(runnable("dev", "tests", False, `<script>alert("x")</script> failed`))
	ts := serve(t, store, web.Options{PageSize: 2})

	resp, body := get(t, ts.URL+"/runnables")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /runnables: %s", resp.Status)
	}
	rows := regexp.MustCompile(`<tr data-runnable="([^"]+)">`).FindAllStringSubmatch(body, -1)
	if len(rows) != 2 || rows[0][1] != "dev/tests" || rows[1][1] != "ns-0/r-0" {
		t.Errorf("the first page's rows %v, want dev/tests and ns-0/r-0", rows)
	}
	flat := strings.ReplaceAll(body, "\n", "")
	for _, want := range []string{
		`<p class="range">1–2 of 4 · <a rel="next" href="/runnables?page=2">next</a></p>`,
		`<td class="name"><a href="/runnables/dev/tests">tests</a></td><td>tekton</td><td class="gen">1</td><td class="ready"><span class="st st-False">False</span></td><td>PipelineRun/tests-2</td><td><span class="st st-False">False</span></td><td>2</td><td class="reason">SucceededCondition</td>`,
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the list lacks %s", want)
		}
	}
	_, body = get(t, ts.URL+"/runnables?ns=ns-1")
	if rows := regexp.MustCompile(`<tr data-runnable="([^"]+)">`).FindAllStringSubmatch(body, -1); len(rows) != 1 || rows[0][1] != "ns-1/r-1" {
		t.Errorf("namespace ns-1: rows %v", rows)
	}

	_, body = get(t, ts.URL+"/runnables/dev/tests")
	flat = strings.ReplaceAll(body, "\n", "")
	msg := `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; failed`
	for _, want := range []string{
		`<dt>Runnable</dt><dd>dev/tests (generation 1)</dd><dt>Run template</dt><dd>tekton</dd>`,
		`<tr data-condition="StampedObjectCondition"><td>StampedObjectCondition</td><td><span class="st st-False">False</span></td><td>1</td><td>SucceededCondition</td><td>60s</td><td class="msg">` + msg + `</td></tr>`,
		`<tr data-output="revision"><th>revision</th><td><pre>&#34;abc&#34;</pre></td></tr>`,
		`<tr data-run="PipelineRun/tests-2"><td>PipelineRun/tests-2</td><td><span class="st st-False">False</span></td><td>R</td><td>60s</td><td class="msg">` + msg + `</td></tr><tr data-run="PipelineRun/tests-1">`,
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the Runnable page lacks %s\n%s", want, flat)
		}
	}
	if n := strings.Count(body, "<script"); n != 1 {
		t.Errorf("%d script elements, want only app.js", n)
	}
	resp, body = get(t, ts.URL+"/runnables/dev/nothere")
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "There is no such Runnable (or it was deleted).") {
		t.Errorf("a missing Runnable: %s", resp.Status)
	}
}

func TestRunnablePageIsLive(t *testing.T) {
	store := web.NewStore()
	store.SetRunnable(runnable("dev", "tests", Unknown, "running"))
	ts := serve(t, store, web.Options{Heartbeat: time.Hour, MinInterval: time.Millisecond})
	s := openStream(t, ts.URL+"/events/runnables/dev/tests?since="+position(store), "")
	if e := s.next(patience); e.retry == "" {
		t.Fatalf("first = %s, want the retry field", e)
	}
	store.SetRunnable(runnable("dev", "other", False, "not on this page"))
	store.SetRunnable(runnable("dev", "tests", True, "all passed"))
	want := position(store)
	e := s.nextEvent(patience)
	if e.id != want || !strings.Contains(e.data, "all passed") || strings.Contains(e.data, "not on this page") {
		t.Errorf("event %s, want id %s showing the change alone", e, want)
	}
	store.DeleteRunnable(web.Key{Kind: v1alpha1.KindRunnable, Namespace: "dev", Name: "tests"})
	if e := s.nextEvent(patience); !strings.Contains(e.data, "There is no such Runnable") {
		t.Errorf("after the deletion: %s", e)
	}
}
