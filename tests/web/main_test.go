// Package web tests `kubectl carto web` in a real browser: Debian's chromium, headless,
// driven by chromedp, against the local cluster of hack/cluster with the realizer running
// in-process and samples/ applied. The web view runs in-process (pkg/web on an httptest
// server) as a ServiceAccount that may only get, list and watch carto.run owners and
// blueprints. Screenshots go to tests/web/artifacts/ (git-ignored).
//
// Without a browser the tests skip, except with CI=true, where they fail.
package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/surveyor-dev/surveyor/hack/cluster"
	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/web"
)

var (
	// ctx lives as long as the test binary.
	ctx context.Context
	// env is the running cluster with CRDs, RBAC, the controller and samples/.
	env *harness.Env
	// site is the web view, served as the viewer ServiceAccount.
	site *httptest.Server
	// viewerClient reads carto.run as the viewer ServiceAccount.
	viewerClient rest.Interface
)

// viewer is the ServiceAccount the web view reads as: get, list and watch on the owners
// and blueprints, nothing else.
const viewer = "carto-viewer"

func TestMain(m *testing.M) {
	harness.Main(m, harness.Options{Controller: true, Ctx: &ctx, Env: &env, Setup: func(ctx context.Context, env *harness.Env) error {
		if err := cluster.Apply(ctx, env.Cluster.Config, filepath.Join(harness.Root(), "samples")); err != nil {
			return err
		}
		var err error
		site, err = startWeb(ctx)
		return err
	}})
}

// startWeb creates the viewer ServiceAccount and serves the web view as it until ctx ends.
func startWeb(ctx context.Context) (*httptest.Server, error) {
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: viewer, Namespace: "default"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: viewer}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{v1alpha1.GroupVersion.Group},
			Resources: []string{"workloads", "deliverables", "clustersupplychains", "clusterdeliveries", "runnables"},
			Verbs:     []string{"get", "list", "watch"},
		}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: viewer},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: viewer},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: viewer, Namespace: "default"}}},
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			return nil, err
		}
	}
	kubeconfig, err := env.Cluster.ServiceAccountKubeconfig(ctx, "default", viewer)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	if viewerClient, err = restClient(cfg); err != nil {
		return nil, err
	}
	store := web.NewStore()
	go func() { _ = web.Watch(ctx, viewerClient, "", store) }()
	srv, err := web.NewServer(ctx, store, web.Options{Heartbeat: 2 * time.Second})
	if err != nil {
		return nil, err
	}
	return httptest.NewServer(srv), nil
}

// restClient is a client of carto.run/v1alpha1, as kubectl-carto makes one.
func restClient(cfg *rest.Config) (rest.Interface, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return apiutil.RESTClientForGVK(v1alpha1.GroupVersion.WithKind(v1alpha1.KindWorkload), false, false, cfg,
		serializer.NewCodecFactory(env.Scheme), hc)
}

// browserPath is Debian's chromium, or another Chrome on PATH.
func browserPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser opens a tab of a new headless browser for the test, 1280×900. Without a
// browser the test is skipped, or fails when CI=true: CI installs chromium (.ci/run).
func browser(t testing.TB) context.Context {
	t.Helper()
	path := browserPath()
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no chromium on PATH: .ci/run installs it (apt-get install chromium)")
		}
		t.Skip("no chromium on PATH (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1280, 900))
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Run(tab); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return tab
}

// open opens a page of the web view in a new tab of the test's browser.
func open(t testing.TB, browserCtx context.Context, path string) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	if err := chromedp.Run(tab, chromedp.Navigate(site.URL+path)); err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	return tab
}

// waitText waits until the text of the first element sel selects is want, polling in the
// page (no reload). It fails the test with the last text seen.
func waitText(t testing.TB, tab context.Context, sel, want string, timeout time.Duration) {
	t.Helper()
	var ok bool
	expr := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e !== null && e.textContent === %q; })()`, sel, want)
	err := chromedp.Run(tab, chromedp.Poll(expr, &ok, chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(10*time.Millisecond)))
	if err != nil {
		t.Fatalf("%s: text is %q, want %q (%v)", sel, textOf(tab, sel), want, err)
	}
}

// waitGone waits until sel selects nothing.
func waitGone(t testing.TB, tab context.Context, sel string, timeout time.Duration) {
	t.Helper()
	var ok bool
	expr := fmt.Sprintf(`document.querySelector(%q) === null`, sel)
	if err := chromedp.Run(tab, chromedp.Poll(expr, &ok, chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(10*time.Millisecond))); err != nil {
		t.Fatalf("%s is still there: %q (%v)", sel, textOf(tab, sel), err)
	}
}

// textOf is the text of the first element sel selects, or a note that there is none.
func textOf(tab context.Context, sel string) string {
	var s string
	expr := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e === null ? "(no element)" : e.textContent; })()`, sel)
	if err := chromedp.Run(tab, chromedp.Evaluate(expr, &s)); err != nil {
		return err.Error()
	}
	return s
}

// screenshot saves the tab's whole page as tests/web/artifacts/NAME.png.
func screenshot(t testing.TB, tab context.Context, name string) {
	t.Helper()
	var png []byte
	// A tab in the background paints no frame to capture.
	if err := chromedp.Run(tab, page.BringToFront(), chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(harness.Root(), "tests", "web", "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// row is the selector of a cell of an owner's row in the list.
func row(owner, cell string) string {
	return fmt.Sprintf(`tr[data-owner=%q] %s`, owner, cell)
}
