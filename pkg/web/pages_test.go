package web_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/view"
	"github.com/surveyor-dev/surveyor/pkg/web"
)

func synced(s *web.Store, kinds ...string) {
	for _, k := range kinds {
		s.SetKindState(web.KindState{Kind: k, Synced: true})
	}
}

func TestPagesEscapeStatusAndForbidInlineCode(t *testing.T) {
	store := web.NewStore()
	synced(store, v1alpha1.KindWorkload, v1alpha1.KindDeliverable)
	store.SetOwner(workload("dev", "app", False, `<script>alert("x")</script> & "quotes"`))
	ts := serve(t, store, web.Options{})

	for _, path := range []string{"/", "/owners/workload/dev/app"} {
		resp, body := get(t, ts.URL+path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		if got, want := resp.Header.Get("Content-Security-Policy"), "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"; got != want {
			t.Errorf("GET %s: Content-Security-Policy %q, want %q", path, got, want)
		}
		if n := strings.Count(body, "<script"); n != 1 || !strings.Contains(body, `<script src="/static/app.js" defer></script>`) {
			t.Errorf("GET %s: %d script elements, want only app.js", path, n)
		}
		if regexp.MustCompile(`<style|\sstyle=|\son[a-z]+=`).MatchString(body) {
			t.Errorf("GET %s: inline style or event handler in:\n%s", path, body)
		}
	}
	_, body := get(t, ts.URL+"/owners/workload/dev/app")
	want := `app (ConfigMap/app-app): Healthy=False MatchedField: &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#34;quotes&#34;`
	if !strings.Contains(body, `<li>`+want+`</li>`) || !strings.Contains(body, `<p class="message">`+want+`</p>`) {
		t.Errorf("the why line is not shown, escaped, in the problems and at the resource; page:\n%s", body)
	}
}

func TestOnlyLoopbackHostsAreServed(t *testing.T) {
	ts := serve(t, web.NewStore(), web.Options{})
	checkHosts(t, ts.URL, map[string]int{
		"127.0.0.1:8080": http.StatusOK, "localhost:8080": http.StatusOK, "[::1]:8080": http.StatusOK, "localhost": http.StatusOK,
		"attacker.example:8080": http.StatusMisdirectedRequest, "10.0.0.1:8080": http.StatusMisdirectedRequest,
	})
}

// checkHosts asks url for / with each Host header and checks the status it answers.
func checkHosts(t *testing.T, url string, want map[string]int) {
	t.Helper()
	for host, code := range want {
		req, _ := http.NewRequest(http.MethodGet, url+"/", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Errorf("Host %s: %s, want %d", host, resp.Status, code)
		}
	}
}

// rows are the data-owner attributes of the list's rows, in order.
func rows(body string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<tr data-owner="([^"]+)">`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestListCountsFiltersAndPages(t *testing.T) {
	store := web.NewStore()
	synced(store, v1alpha1.KindWorkload, v1alpha1.KindDeliverable)
	for i := range 250 {
		ready := True
		if i%5 == 0 {
			ready = False
		}
		store.SetOwner(workload(fmt.Sprintf("ns-%d", i%2), fmt.Sprintf("w-%03d", i), ready, "bad"))
	}
	done := workload("ns-0", "job", True, "")
	done.Status.Conditions = append(done.Status.Conditions, cond(v1alpha1.ConditionComplete, True, 1, "ConditionRulesPassed", ""))
	store.SetOwner(done)
	rolling := workload("ns-1", "rolling", Unknown, "")
	rolling.Generation = 2
	rolling.Status.ObservedGeneration = 2
	rolling.Status.Conditions[3].ObservedGeneration = 2
	rolling.Status.Conditions[4] = cond(v1alpha1.ConditionAvailable, True, 1, "HealthyAtGeneration", "")
	store.SetOwner(rolling)
	ts := serve(t, store, web.Options{PageSize: 100})

	_, body := get(t, ts.URL+"/")
	for _, want := range []string{
		`<a class="count on" href="/"><b>252</b> all</a>`,
		`<a class="count" href="/?state=ready"><b>201</b> Ready</a>`,
		`<a class="count" href="/?state=not-ready"><b>51</b> not Ready</a>`,
		`<a class="count" href="/?state=unhealthy"><b>50</b> unhealthy</a>`,
		`<a class="count" href="/?state=complete"><b>1</b> complete</a>`,
		`<a class="count" href="/?state=rolling-out"><b>1</b> rolling out</a>`,
		`<p class="range">1–100 of 252 · <a rel="next" href="/?page=2">next</a></p>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the list lacks %s", want)
		}
	}
	if got := rows(body); len(got) != 100 || got[0] != "Workload/ns-0/job" || got[1] != "Workload/ns-0/w-000" {
		t.Errorf("first page: %d rows starting %v, want 100 by namespace and name", len(got), got[:2])
	}

	_, body = get(t, ts.URL+"/?ns=ns-1&state=not-ready&page=2")
	if !strings.Contains(body, `<p class="range">1–26 of 26</p>`) {
		t.Errorf("a page past the last shows the last; got %s", regexp.MustCompile(`<p class="range">.*</p>`).FindString(body))
	}
	for _, r := range rows(body) {
		if !strings.HasPrefix(r, "Workload/ns-1/") {
			t.Errorf("row %s is outside namespace ns-1", r)
		}
	}
	if !strings.Contains(body, `<a class="count on" href="/?ns=ns-1&amp;state=not-ready"><b>26</b> not Ready</a>`) {
		t.Errorf("the counts are not those of namespace ns-1 with the state chosen")
	}
	_, body = get(t, ts.URL+"/?state=rolling-out")
	if got := rows(body); len(got) != 1 || got[0] != "Workload/ns-1/rolling" {
		t.Errorf("rolling out: %v", got)
	}
	if !strings.Contains(body, `<td class="ready"><span class="st st-Unknown">Unknown</span></td><td class="available"><span class="st st-True">True</span> (gen 1)</td>`) {
		t.Errorf("the rolling-out row does not show Available at its last good generation")
	}
}

func TestPagesSayWhatIsNotLoaded(t *testing.T) {
	store := web.NewStore()
	store.SetKindState(web.KindState{Kind: v1alpha1.KindWorkload, Synced: true})
	store.SetKindState(web.KindState{Kind: v1alpha1.KindDeliverable, Err: "not allowed by RBAC: deliverables is forbidden"})
	ts := serve(t, store, web.Options{})
	_, body := get(t, ts.URL+"/")
	if !strings.Contains(body, `<p class="banner">Deliverables: not allowed by RBAC: deliverables is forbidden</p>`) {
		t.Errorf("the list does not say that Deliverables cannot be listed:\n%s", body)
	}
	resp, body := get(t, ts.URL+"/owners/workload/dev/nothere")
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "There is no such owner (or it was deleted).") {
		t.Errorf("a missing owner: %s\n%s", resp.Status, body)
	}
}

func TestOwnerPageShowsTheTreeAlongInputs(t *testing.T) {
	store := web.NewStore()
	o := workload("dev", "app", Unknown, "")
	res := o.Status.Resources[0]
	src := res
	src.Name, src.Inputs = "source", nil
	src.Outputs = []v1alpha1.Output{{Name: "url", Preview: "https://git.example/app\n", Digest: "sha256:0123456789abcdef0123", LastTransitionTime: metav1.NewTime(now.Add(-5 * 60e9))}}
	src.Conditions = []metav1.Condition{cond(v1alpha1.ConditionReady, True, 1, "Ready", ""), cond(v1alpha1.ConditionHealthy, True, 1, "OutputsAvailable", "")}
	res.Inputs = []v1alpha1.Input{{Name: "source"}}
	o.Status.Resources = []v1alpha1.ResourceStatus{src, res}
	store.SetOwner(o)
	ts := serve(t, store, web.Options{})
	_, body := get(t, ts.URL+"/owners/workload/dev/app")
	flat := regexp.MustCompile(`\n`).ReplaceAllString(body, "")
	for _, want := range []string{
		`<li class="node" data-resource="source"><div class="resource"><b>source</b> <span class="object">ConfigMap/app-app</span> <span class="st st-True" data-condition="Ready">Ready True</span> <span class="st st-True" data-condition="Healthy">Healthy True</span></div>`,
		`<tr><th>url</th><td><pre>https://git.example/app</pre></td><td class="digest" title="sha256:0123456789abcdef0123">sha256:0123456789ab</td><td>changed 5m ago</td></tr>`,
		`<ul class="tree"><li class="node" data-resource="app">`,
		`<a href="/blueprints/clustersupplychain/chain">ClusterSupplyChain chain</a>`,
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the owner page lacks %s", want)
		}
	}
	if strings.Index(flat, `data-resource="app"`) < strings.Index(flat, `data-resource="source"`) {
		t.Error("app, which reads source, is not under it")
	}
}

func TestBlueprintPageShowsTheRollout(t *testing.T) {
	store := web.NewStore()
	store.SetOwner(workload("shop", "checkout", False, "bad"))
	store.SetBlueprint(view.Blueprint{Kind: v1alpha1.KindClusterSupplyChain, Name: "chain", Generation: 2,
		Strategy: &v1alpha1.RolloutStrategy{Type: "ProgressivePerGroup", MandatoryGroups: []string{"canary"}},
		Status: v1alpha1.BlueprintStatus{Rollout: &v1alpha1.BlueprintRolloutStatus{
			StableRevision: "chain-1", TargetRevision: "chain-2", CurrentGroup: "canary",
			Counts:       v1alpha1.RolloutCounts{ToApply: 3, Failed: 1},
			Groups:       []v1alpha1.GroupRolloutStatus{{Name: "canary", Counts: v1alpha1.RolloutCounts{Failed: 1}}, {Counts: v1alpha1.RolloutCounts{ToApply: 3}}},
			FailedOwners: []string{"shop/checkout"},
		}}})
	ts := serve(t, store, web.Options{})
	_, body := get(t, ts.URL+"/blueprints/clustersupplychain/chain")
	body = strings.ReplaceAll(body, "\n", "")
	for _, want := range []string{
		`<dt>Revision</dt><dd>chain-2 (rolling out over chain-1)</dd>`,
		`<tr data-group="canary"><td>canary</td><td>0</td><td>0</td><td>0</td><td>1</td><td>0</td><td>0</td></tr>`,
		`<tr data-group="(no group)"><td>(no group)</td><td>3</td>`,
		`<tr data-group="all"><td>all</td><td>3</td><td>0</td><td>0</td><td>1</td>`,
		`<section class="failed"><h2>Failed owners</h2>`,
		`<a href="/owners/workload/shop/checkout">checkout</a>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the blueprint page lacks %s\n", want)
		}
	}
}
