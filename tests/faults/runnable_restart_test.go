package faults

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// restartRunnables is how many Runnables the restart must leave with one run each.
const restartRunnables = 20

// A controller restart creates no run (DESIGN §11): Cartographer remembers the run it
// submitted last in memory, so its first reconcile after a restart creates a new run for
// every Runnable; Surveyor finds the newest run by the digest annotation it carries. Nor
// does the restart write any Runnable's status.
func TestRestartCreatesNoRun(t *testing.T) {
	ns := newNamespace(t, "faults-runnable")
	tpl := configMapRunTemplate(t, "faults-restart-run", "$(runnable.spec.inputs.revision)$")
	c := launchController(t, "surveyor-runnable-restart")
	c.waitLeader(t, 2*time.Minute)
	createRunnables(t, ns, tpl.Name, restartRunnables)
	eventually(t, 2*time.Minute, func() (bool, string) {
		runs, statuses := runnableState(t, ns)
		return len(runs) == restartRunnables && len(statuses) == restartRunnables,
			fmt.Sprintf("%d runs of %d runnables with a status, want %d", len(runs), len(statuses), restartRunnables)
	})
	before, statuses := runnableState(t, ns)

	if err := env.Cluster.Terminate(c.Name); err != nil {
		t.Fatal(err)
	}
	c.relaunch(t)
	c.waitLeader(t, 2*time.Minute)
	eventually(t, 2*time.Minute, func() (bool, string) {
		families, err := c.Metrics(ctx)
		if err != nil {
			return false, err.Error()
		}
		got := families.ReconcileTotal("runnable")
		return got >= restartRunnables, fmt.Sprintf("%.0f of %d runnables reconciled since the restart", got, restartRunnables)
	})
	// And for a few seconds more, which span the retries of anything that failed.
	env.Consistently(ctx, t, 3*time.Second, 250*time.Millisecond, func() (bool, string) {
		runs, now := runnableState(t, ns)
		if len(runs) != len(before) {
			return false, fmt.Sprintf("%d runs after the restart, %d before", len(runs), len(before))
		}
		for name, was := range statuses {
			if now[name] != was {
				return false, fmt.Sprintf("runnable %s was written after the restart:\nbefore: %s\nafter:  %s", name, was, now[name])
			}
		}
		return true, ""
	})
}

// runnableState is the runs of ns (their names) and each Runnable's resourceVersion and
// status, for those with one.
func runnableState(t *testing.T, ns string) (map[string]bool, map[string]string) {
	t.Helper()
	var cms corev1.ConfigMapList
	if err := k8s.List(ctx, &cms, client.InNamespace(ns), client.HasLabels{v1alpha1.LabelRunnableName}); err != nil {
		t.Fatal(err)
	}
	runs := map[string]bool{}
	for _, cm := range cms.Items {
		runs[cm.Name] = true
	}
	var list v1alpha1.RunnableList
	if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	statuses := map[string]string{}
	for _, rn := range list.Items {
		if len(rn.Status.Runs) == 0 {
			continue
		}
		status, err := json.Marshal(rn.Status)
		if err != nil {
			t.Fatal(err)
		}
		statuses[rn.Name] = rn.ResourceVersion + " " + string(status)
	}
	return runs, statuses
}

// configMapRunTemplate creates a ClusterRunTemplate of ConfigMap runs, which the stamper may
// create, whose data.revision is revision; its spec is dropped by the API server.
func configMapRunTemplate(t *testing.T, name, revision string) *v1alpha1.ClusterRunTemplate {
	t.Helper()
	tpl := &v1alpha1.ClusterRunTemplate{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := json.Unmarshal([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"$(runnable.metadata.name)$-"},`+
		`"spec":{},"data":{"revision":"`+revision+`"}}`), &tpl.Spec.Template); err != nil {
		t.Fatal(err)
	}
	env.CreateAll(ctx, t, tpl)
	return tpl
}

// createRunnables creates n Runnables of template in ns as the stamper, run-00 to run-<n-1>,
// each with its own revision input.
func createRunnables(t *testing.T, ns, template string, n int) {
	t.Helper()
	for i := range n {
		rn := &v1alpha1.Runnable{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("run-%02d", i), Namespace: ns},
			Spec: v1alpha1.RunnableSpec{
				RunTemplateRef:     v1alpha1.RunTemplateReference{Name: template},
				ServiceAccountName: stamper,
				Inputs:             map[string]apiextensionsv1.JSON{"revision": {Raw: []byte(fmt.Sprintf(`"r%d"`, i))}},
			},
		}
		if err := k8s.Create(ctx, rn); err != nil {
			t.Fatal(err)
		}
	}
}
