package install

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/realizer"
)

const (
	// takeoverWorkloads is how many Workloads Cartographer realized before the takeover;
	// each has two stamped ConfigMaps.
	takeoverWorkloads = 25
	// cartographerUserAgent is the user agent of Cartographer's controller (client-go's
	// default for its binary): the API server names the field manager of its writes,
	// which name none, after the program in it.
	cartographerUserAgent = "cartographer/v0.8.11 (linux/amd64) kubernetes/$Format"
)

// Surveyor started on a cluster where Cartographer realized Workloads takes their stamped
// objects over in place (DESIGN §13): every Workload turns Ready, no object is deleted or
// recreated (each keeps its uid), each is written once, and the one write moves
// Cartographer's fields to Surveyor's field manager, so that a field later dropped from
// a template is removed from the objects rather than kept for Cartographer. An object
// Cartographer had not yet brought up to date (every fifth Workload's source moved after
// it stamped) takes that write and the apply of what changed.
func TestTakeoverFromCartographer(t *testing.T) {
	const chain = "takeover"
	ns := env.StamperNamespace(ctx, t, k8s, "takeover", "stamper")
	env.CreateAll(ctx, t, harness.ConfigMapChain(t, chain, `"mode": "stamped", "tier": "web"`)...)
	workloads := make([]*v1alpha1.Workload, takeoverWorkloads)
	for i := range workloads {
		workloads[i] = &v1alpha1.Workload{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%02d", i), Namespace: ns, Labels: map[string]string{harness.CaseLabel: chain}},
			Spec: v1alpha1.WorkloadSpec{
				ServiceAccountName: "stamper",
				Source:             &v1alpha1.Source{Git: &v1alpha1.GitSource{URL: fmt.Sprintf("https://example.com/app-%02d.git", i)}},
			},
		}
		env.CreateAll(ctx, t, workloads[i])
	}

	// Cartographer's writes: as the Workload's ServiceAccount, under its user agent, each
	// object created (from an earlier commit's URL) and then brought up to date with a
	// merge patch, as its repository does.
	cfg := rest.CopyConfig(env.Cluster.Config)
	cfg.UserAgent = cartographerUserAgent
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":stamper"}
	cartographer, err := client.New(cfg, client.Options{Scheme: k8s.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	behind := map[string]bool{}
	for i, wl := range workloads {
		for _, cm := range cartographerStamps(wl, chain) {
			current := cm.Data
			cm.Data = map[string]string{}
			for k, v := range current {
				cm.Data[k] = strings.Replace(v, ".git", "-old.git", 1)
			}
			if err := cartographer.Create(ctx, cm); err != nil {
				t.Fatal(err)
			}
			if i%5 == 0 {
				behind[cm.Name] = true
				continue
			}
			before := cm.DeepCopy()
			cm.Data = current
			if err := cartographer.Patch(ctx, cm, client.MergeFrom(before)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var stamped corev1.ConfigMapList
	if err := k8s.List(ctx, &stamped, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	uids := map[string]types.UID{}
	for _, cm := range stamped.Items {
		if cm.Labels[v1alpha1.LabelSupplyChainName] != chain {
			continue
		}
		uids[cm.Name] = cm.UID
		if !managedBy(cm.ManagedFields, realizer.CartographerFieldManager, metav1.ManagedFieldsOperationUpdate) {
			t.Fatalf("ConfigMap %s is not managed by %q before the takeover: %v", cm.Name, realizer.CartographerFieldManager, managers(cm.ManagedFields))
		}
	}
	if len(uids) != 2*takeoverWorkloads {
		t.Fatalf("%d ConfigMaps stamped by Cartographer, want %d", len(uids), 2*takeoverWorkloads)
	}
	writes := watchWrites(t, ns, stamped.ResourceVersion)

	start := time.Now()
	env.LaunchForTest(ctx, t, harness.Process{Name: "surveyor-takeover", NoLeaderElection: true})
	env.Eventually(ctx, t, 2*time.Minute, func() (bool, string) {
		ready := shardReadiness(t, ns)[""]
		return ready == takeoverWorkloads, fmt.Sprintf("%d of %d Workloads Ready", ready, takeoverWorkloads)
	})
	t.Logf("%d Workloads Ready %s after Surveyor started", takeoverWorkloads, time.Since(start).Round(time.Millisecond))
	// Reconciles after the first (the Workloads' own status writes) must write nothing more.
	env.Consistently(ctx, t, 3*time.Second, 250*time.Millisecond, func() (bool, string) {
		for name, n := range writes.modified() {
			if want := writesWanted(behind[name]); n > want {
				return false, fmt.Sprintf("ConfigMap %s written %d times, want %d", name, n, want)
			}
		}
		return true, ""
	})
	written := writes.modified()
	if other := writes.other(); len(other) > 0 {
		t.Errorf("stamped ConfigMaps deleted or created during the takeover: %v", other)
	}
	if err := k8s.List(ctx, &stamped, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, cm := range stamped.Items {
		uid, ok := uids[cm.Name]
		if !ok {
			continue
		}
		total += written[cm.Name]
		if want := writesWanted(behind[cm.Name]); written[cm.Name] != want {
			t.Errorf("ConfigMap %s written %d times, want %d", cm.Name, written[cm.Name], want)
		}
		if want := strings.TrimSuffix(cm.Name, "-"+cm.Labels[v1alpha1.LabelResourceName]) + ".git"; !strings.HasSuffix(cm.Data["config"]+cm.Data["source"], want) {
			t.Errorf("ConfigMap %s holds %v, want the Workload's current source", cm.Name, cm.Data)
		}
		if cm.UID != uid {
			t.Errorf("ConfigMap %s was recreated: uid %s, was %s", cm.Name, cm.UID, uid)
		}
		if managedBy(cm.ManagedFields, realizer.CartographerFieldManager, metav1.ManagedFieldsOperationUpdate) {
			t.Errorf("ConfigMap %s still has fields managed by %q: %v", cm.Name, realizer.CartographerFieldManager, managers(cm.ManagedFields))
		}
		if !managedBy(cm.ManagedFields, realizer.FieldManager, metav1.ManagedFieldsOperationApply) {
			t.Errorf("ConfigMap %s has no fields applied by %q: %v", cm.Name, realizer.FieldManager, managers(cm.ManagedFields))
		}
	}
	t.Logf("takeover: %d objects (%d behind the Workload), %d writes, %d uids kept", len(uids), len(behind), total, len(uids))

	// The fields are Surveyor's: a field dropped from the template leaves the objects.
	var tpl v1alpha1.ClusterTemplate
	if err := k8s.Get(ctx, client.ObjectKey{Name: chain + "-app"}, &tpl); err != nil {
		t.Fatal(err)
	}
	tpl.Spec.Template = harness.ConfigMapApp(t, `"mode": "stamped"`)
	if err := k8s.Update(ctx, &tpl); err != nil {
		t.Fatal(err)
	}
	env.Eventually(ctx, t, time.Minute, func() (bool, string) {
		if err := k8s.List(ctx, &stamped, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelResourceName: "app"}); err != nil {
			return false, err.Error()
		}
		for _, cm := range stamped.Items {
			if tier, ok := cm.Data["tier"]; ok {
				return false, fmt.Sprintf("ConfigMap %s still has data.tier=%q, dropped from the template", cm.Name, tier)
			}
		}
		return len(stamped.Items) == takeoverWorkloads, fmt.Sprintf("%d app ConfigMaps", len(stamped.Items))
	})
}

// writesWanted is how many writes taking an object over costs: one, and the apply of what
// changed when Cartographer had not yet brought it up to date.
func writesWanted(behind bool) int {
	if behind {
		return 2
	}
	return 1
}

// cartographerStamps are the objects Cartographer stamps for wl from harness.ConfigMapChain's
// templates: its labels (DESIGN §3, "Own") and the Workload as controller owner.
func cartographerStamps(wl *v1alpha1.Workload, chain string) []*corev1.ConfigMap {
	url := wl.Spec.Source.Git.URL
	stamp := func(resource, kind, template string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name: wl.Name + "-" + resource, Namespace: wl.Namespace,
				Labels: map[string]string{
					v1alpha1.LabelWorkloadName: wl.Name, v1alpha1.LabelWorkloadNamespace: wl.Namespace,
					v1alpha1.LabelSupplyChainName: chain, v1alpha1.LabelResourceName: resource,
					v1alpha1.LabelTemplateKind: kind, v1alpha1.LabelClusterTemplateName: template,
					v1alpha1.LabelTemplateLifecycle: "mutable",
				},
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: v1alpha1.GroupVersion.String(), Kind: "Workload", Name: wl.Name, UID: wl.UID,
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
				}},
			},
			Data: data,
		}
	}
	return []*corev1.ConfigMap{
		stamp("config", v1alpha1.KindClusterConfigTemplate, chain+"-config", map[string]string{"config": url}),
		stamp("app", v1alpha1.KindClusterTemplate, chain+"-app", map[string]string{"source": url, "mode": "stamped", "tier": "web"}),
	}
}

func managedBy(entries []metav1.ManagedFieldsEntry, manager string, op metav1.ManagedFieldsOperationType) bool {
	for _, e := range entries {
		if e.Manager == manager && e.Operation == op {
			return true
		}
	}
	return false
}

func managers(entries []metav1.ManagedFieldsEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Manager+"/"+string(e.Operation))
	}
	return out
}

// writes counts the watch events of a namespace's ConfigMaps.
type writes struct {
	mu     sync.Mutex
	counts map[string]int
	others []string
}

func (w *writes) modified() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.counts))
	for k, v := range w.counts {
		out[k] = v
	}
	return out
}

func (w *writes) other() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.others...)
}

// watchWrites watches ns's ConfigMaps from resourceVersion on, until the test ends.
func watchWrites(t *testing.T, ns, resourceVersion string) *writes {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: resourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	out := &writes{counts: map[string]int{}}
	go func() {
		for ev := range w.ResultChan() {
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok {
				continue
			}
			out.mu.Lock()
			switch ev.Type {
			case watch.Modified:
				out.counts[cm.Name]++
			case watch.Added, watch.Deleted:
				if cm.Labels[v1alpha1.LabelResourceName] != "" {
					out.others = append(out.others, string(ev.Type)+" "+cm.Name)
				}
			}
			out.mu.Unlock()
		}
	}()
	return out
}
