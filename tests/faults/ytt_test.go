package faults

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// yttRunaways are templates no evaluation survives, and the limit each meets.
var yttRunaways = []struct{ name, ytt, limit string }{
	{"faults-ytt-loop", "#@ for i in range(1000000000):\n#@ end\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: loop}\n",
		"ytt: evaluation exceeded the time limit of 4s"},
	{"faults-ytt-memory", "#@ big = [0] * (1 << 28)\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: memory}\n",
		"ytt: evaluation exceeded the memory limit of 256 MiB"},
}

// A template looping 10^9 times and one building a 4 GiB list each fail on their own
// Workload, with a condition naming the limit, while 50 Workloads whose templates are ytt
// too converge; the controller's memory does not move (the runaways ran in its ytt
// workers, which were killed and replaced).
func TestYTTRunawaysStallNoOtherWorkload(t *testing.T) {
	ns := newNamespace(t, "faults-ytt")
	healthyNS := newNamespace(t, "faults-ytt-healthy")
	yttConfigMapChain(t, "faults-ytt-healthy")
	for _, r := range yttRunaways {
		env.CreateAll(ctx, t,
			&v1alpha1.ClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: r.name}, Spec: v1alpha1.TemplateSpec{Ytt: r.ytt}},
			&v1alpha1.ClusterSupplyChain{
				ObjectMeta: metav1.ObjectMeta{Name: r.name},
				Spec: v1alpha1.ClusterSupplyChainSpec{
					OwnerSelector: v1alpha1.OwnerSelector{Selector: map[string]string{caseLabel: r.name}},
					Resources: []v1alpha1.SupplyChainResource{
						{Name: "app", TemplateRef: v1alpha1.SupplyChainTemplateReference{Kind: v1alpha1.KindClusterTemplate, Name: r.name}},
					},
				},
			})
	}
	c := launchController(t, "surveyor-ytt")
	c.waitLeader(t, 2*time.Minute)

	// The first 50 converge with no runaway around, which starts the workers.
	createWorkloads(t, healthyNS, "faults-ytt-healthy", 0, stallWorkloads)
	alone := waitAllReady(t, healthyNS, stallWorkloads, 2*time.Minute)
	before, err := c.Proc()
	if err != nil {
		t.Fatal(err)
	}

	// The runaways and 50 more at once.
	for i, r := range yttRunaways {
		env.CreateAll(ctx, t, newWorkload(ns, r.name, i))
	}
	createWorkloads(t, healthyNS, "faults-ytt-healthy", stallWorkloads, 2*stallWorkloads)
	beside := waitAllReady(t, healthyNS, 2*stallWorkloads, 2*time.Minute)
	t.Logf("%d ytt workloads converged in %s alone, %d more in %s beside the runaways",
		stallWorkloads, alone.Round(time.Millisecond), stallWorkloads, beside.Round(time.Millisecond))
	for i, r := range yttRunaways {
		want := fmt.Sprintf("unable to stamp object for resource [app] for template [ClusterTemplate/%s] in supply chain [%s]: unable to apply ytt template: %s", r.name, r.name, r.limit)
		eventually(t, time.Minute, func() (bool, string) {
			var wl v1alpha1.Workload
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: workloadName(i)}, &wl); err != nil {
				return false, err.Error()
			}
			c := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.ConditionResourcesSubmitted)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonTemplateStampFailure || c.Message != want {
				return false, fmt.Sprintf("%s: ResourcesSubmitted %+v, want TemplateStampFailure %q", wl.Name, c, want)
			}
			return true, ""
		})
	}

	after, err := c.Proc()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("controller RSS %d MiB before the runaways, %d MiB after (peak %d MiB, then %d MiB)",
		before.RSS>>20, after.RSS>>20, before.HWM>>20, after.HWM>>20)
	// 50 more Workloads cost the controller a few MiB; the 4 GiB list would cost it 4 GiB.
	const slack = 48 << 20
	if after.HWM > before.HWM+slack {
		t.Errorf("the controller's peak RSS rose from %d MiB to %d MiB", before.HWM>>20, after.HWM>>20)
	}
	if after.RSS > before.RSS+slack {
		t.Errorf("the controller's RSS rose from %d MiB to %d MiB", before.RSS>>20, after.RSS>>20)
	}
}

// yttConfigMapChain is configMapChain with its two templates written in ytt.
func yttConfigMapChain(t testing.TB, name string) {
	t.Helper()
	const header = "#@ load(\"@ytt:data\", \"data\")\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: #@ data.values.workload.metadata.name + "
	env.CreateAll(ctx, t,
		&v1alpha1.ClusterConfigTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-config"},
			Spec: v1alpha1.ClusterConfigTemplateSpec{
				ConfigPath:   ".data.config",
				TemplateSpec: v1alpha1.TemplateSpec{Ytt: header + "\"-config\"\ndata:\n  config: #@ data.values.workload.spec.source.git.url\n"},
			},
		},
		&v1alpha1.ClusterTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-app"},
			Spec:       v1alpha1.TemplateSpec{Ytt: header + "\"-app\"\ndata:\n  source: #@ data.values.config\n  mode: stamped\n"},
		},
		harness.ConfigMapSupplyChain(name),
	)
}
