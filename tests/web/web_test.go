package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/hack/cluster"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// TestListsTheSamples: the list shows every sample owner as kubectl carto get does, once
// the controller has realized them.
func TestListsTheSamples(t *testing.T) {
	b := browser(t)
	list := open(t, b, "/")
	waitText(t, list, row("Workload/default/hello-web", "td.ready"), "True", 2*time.Minute)
	waitText(t, list, row("Workload/default/hello-web", "td.name"), "hello-web", 10*time.Second)
	waitText(t, list, row("Workload/default/hello-web-prebuilt", "td.reason"), "SupplyChainNotFound", time.Minute)
	waitText(t, list, row("Workload/default/hello-job", "td.ready"), "True", time.Minute)
	waitText(t, list, row("Deliverable/default/hello-delivered", "td.ready"), "True", time.Minute)
	screenshot(t, list, "list-samples")

	owner := open(t, b, "/owners/workload/default/hello-web")
	waitText(t, owner, `li[data-resource="source-provider"] > .resource [data-condition="Ready"]`, "Ready True", time.Minute)
	waitText(t, owner, `li[data-resource="deployer"] > .resource .object`, "Deployment/hello-web", 10*time.Second)
	screenshot(t, owner, "owner-hello-web")
}

// liveFixture is a supply chain of one ConfigMap whose health is its data.state (ok or
// broken, with data.message as the message), and a Workload "live" that sets both.
const liveFixture = `
apiVersion: carto.run/v1alpha1
kind: ClusterTemplate
metadata: {name: %[1]s}
spec:
  healthyConditionRule:
    multiMatch:
      healthy:
        matchFields: [{key: data.state, operator: In, values: [ok]}]
      unhealthy:
        matchFields: [{key: data.state, operator: In, values: [broken], messagePath: data.message}]
  template:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: $(workload.metadata.name)$-app}
    data: {state: $(params.state)$, message: $(params.message)$}
---
apiVersion: carto.run/v1alpha1
kind: ClusterSupplyChain
metadata: {name: %[1]s}
spec:
  selector: {web.surveyor.dev/chain: %[1]s}
  resources:
    - name: app
      templateRef: {kind: ClusterTemplate, name: %[1]s}
---
apiVersion: carto.run/v1alpha1
kind: Workload
metadata:
  name: live
  namespace: %[1]s
  labels: {web.surveyor.dev/chain: %[1]s}
spec:
  serviceAccountName: stamper
  params:
    - {name: state, value: broken}
    - {name: message, value: %[2]q}
`

// A message that would run if the page put it in as markup.
const markup = `<script>document.title="pwned"</script><img src=x onerror="document.title='pwned'"> deploy failed`

// TestWorkloadTurnsReadyOnThePage: a Workload whose resource is unhealthy shows the
// message as kubectl carto why gives it, as text; when the test makes the resource
// healthy, the list and the owner page both show it Ready, without a reload.
func TestWorkloadTurnsReadyOnThePage(t *testing.T) {
	b := browser(t)
	ns := env.StamperNamespace(ctx, t, env.Client, "web-live", "stamper")
	path := filepath.Join(t.TempDir(), "live.yaml")
	if err := os.WriteFile(path, fmt.Appendf(nil, liveFixture, ns, markup), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Apply(ctx, env.Cluster.Config, path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.Delete(ctx, &v1alpha1.ClusterSupplyChain{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		_ = env.Client.Delete(ctx, &v1alpha1.ClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	key := "Workload/" + ns + "/live"
	list := open(t, b, "/?ns="+ns)
	owner := open(t, b, "/owners/workload/"+ns+"/live")
	why := "app (ConfigMap/live-app): Healthy=False MatchedField: field value: broken, message: " + markup
	waitText(t, list, row(key, "td.ready"), "False", time.Minute)
	waitText(t, list, row(key, "td.reason"), "HealthyConditionRule", 10*time.Second)
	waitText(t, owner, ".why li", why, 10*time.Second)
	waitText(t, owner, `li[data-resource="app"] > .message`, why, 10*time.Second)
	var title string
	var elements int
	if err := chromedp.Run(owner, chromedp.Title(&title),
		chromedp.Evaluate(`document.querySelectorAll("main script, main img").length`, &elements)); err != nil {
		t.Fatal(err)
	}
	if title != "Workload "+ns+"/live · Surveyor" || elements != 0 {
		t.Errorf("the message was taken as markup: title %q, %d script or img elements in <main>", title, elements)
	}
	screenshot(t, owner, "owner-unhealthy")

	// A reload would lose these marks.
	for _, tab := range []context.Context{list, owner} {
		if err := chromedp.Run(tab, chromedp.Evaluate(`window.surveyorTestMark = 1`, nil)); err != nil {
			t.Fatal(err)
		}
	}
	patch := []byte(`{"spec":{"params":[{"name":"state","value":"ok"},{"name":"message","value":""}]}}`)
	wl := &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "live", Namespace: ns}}
	if err := env.Client.Patch(ctx, wl, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	waitText(t, list, row(key, "td.ready"), "True", time.Minute)
	waitText(t, list, row(key, "td.reason"), "", 10*time.Second)
	waitText(t, owner, `li[data-resource="app"] > .resource [data-condition="Ready"]`, "Ready True", 10*time.Second)
	waitGone(t, owner, ".why", 10*time.Second)
	for name, tab := range map[string]context.Context{"list": list, "owner page": owner} {
		var mark bool
		if err := chromedp.Run(tab, chromedp.Evaluate(`window.surveyorTestMark === 1`, &mark)); err != nil {
			t.Fatal(err)
		}
		if !mark {
			t.Errorf("the %s was reloaded", name)
		}
	}
	screenshot(t, list, "list-ready")
}

// TestUpdateLatency times a change in the cluster until the page shows it: a Workload's
// new generation (no controller in between: the web view's own watch), ten times, then
// once more after the page's event stream was dropped. It logs the figures and asserts
// only that the page shows every change.
func TestUpdateLatency(t *testing.T) {
	b := browser(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "web-latency-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, ns) })
	wl := &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "timed", Namespace: ns.Name, Labels: map[string]string{"web.surveyor.dev/chain": "none"}}}
	if err := env.Client.Create(ctx, wl); err != nil {
		t.Fatal(err)
	}
	key := "Workload/" + ns.Name + "/timed"
	list := open(t, b, "/?ns="+ns.Name)
	waitText(t, list, row(key, "td.gen"), "1", 30*time.Second)

	touch := func(i int) time.Duration {
		start := time.Now()
		patch := fmt.Appendf(nil, `{"spec":{"params":[{"name":"touch","value":%d}]}}`, i)
		if err := env.Client.Patch(ctx, wl, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
		waitText(t, list, row(key, "td.gen"), fmt.Sprint(wl.Generation), 10*time.Second)
		return time.Since(start)
	}
	var took []time.Duration
	for i := range 10 {
		took = append(took, touch(i))
	}
	slices.Sort(took)
	t.Logf("change in the cluster → on the page, 10 changes: median %s, max %s (the patch's round trip included)",
		took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))

	site.CloseClientConnections()
	resumed := touch(10)
	waitText(t, list, "#live", "live", 10*time.Second)
	t.Logf("after the event stream was dropped: on the page %s after the change", resumed.Round(time.Millisecond))
}
