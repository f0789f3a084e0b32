package rollout

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// chainObservation is one state of a supply chain as the test's informer saw it.
type chainObservation struct {
	generation int64
	// rollout is status.rollout, nil if none.
	rollout *v1alpha1.BlueprintRolloutStatus
	// degraded is the RolloutDegraded condition, nil if none.
	degraded *metav1.Condition
}

// chainHistory is every state of one supply chain that the API server went through, in order.
type chainHistory struct {
	*harness.History[*v1alpha1.ClusterSupplyChain]
}

// watchSupplyChain records the history of the supply chain name from now until the test ends.
func watchSupplyChain(t *testing.T, name string) chainHistory {
	t.Helper()
	opts := cache.Options{ByObject: map[client.Object]cache.ByObject{
		&v1alpha1.ClusterSupplyChain{}: {Field: fields.OneTermEqualSelector("metadata.name", name)},
	}}
	return chainHistory{harness.Record(ctx, t, env, &v1alpha1.ClusterSupplyChain{}, opts)}
}

func (h chainHistory) observations() []chainObservation {
	var out []chainObservation
	for _, o := range h.States() {
		sc := o.Object
		out = append(out, chainObservation{
			generation: sc.Generation,
			rollout:    sc.Status.Rollout,
			degraded:   meta.FindStatusCondition(sc.Status.Conditions, v1alpha1.ConditionRolloutDegraded),
		})
	}
	return out
}

// stamp is one state of a stamped ConfigMap.
type stamp struct {
	resourceVersion string
	// version is data.version: which template version stamped it.
	version string
	// applied is the time of the newest server-side-apply entry of its managedFields, the
	// controller's last change of it (to the second).
	applied time.Time
}

// stampHistory is every state of a namespace's ConfigMaps.
type stampHistory struct {
	*harness.History[*corev1.ConfigMap]
}

// watchStamps records the history of ns's ConfigMaps from now until the test ends.
func watchStamps(t *testing.T, ns string) stampHistory {
	t.Helper()
	return stampHistory{harness.Record(ctx, t, env, &corev1.ConfigMap{}, harness.InNamespace(ns))}
}

// of is every state of ConfigMap name seen so far, each resourceVersion once.
func (h stampHistory) of(name string) []stamp {
	var out []stamp
	for _, o := range h.States() {
		cm := o.Object
		if cm.Name != name {
			continue
		}
		// A relist delivers an object again at the same resourceVersion: not a change.
		if len(out) > 0 && out[len(out)-1].resourceVersion == cm.ResourceVersion {
			continue
		}
		s := stamp{resourceVersion: cm.ResourceVersion, version: cm.Data["version"]}
		for _, f := range cm.ManagedFields {
			if f.Operation == metav1.ManagedFieldsOperationApply && f.Time != nil && f.Time.After(s.applied) {
				s.applied = f.Time.Time
			}
		}
		out = append(out, s)
	}
	return out
}

// admittedTo reports whether record admits its owner to one of revs (any state but ToApply).
func admittedTo(record *v1alpha1.OwnerRolloutStatus, revs ...string) bool {
	if record == nil || record.State == v1alpha1.RolloutToApply {
		return false
	}
	for _, r := range revs {
		if record.Revision == r {
			return true
		}
	}
	return false
}

// workload reads Workload name in ns.
func workload(t *testing.T, ns, name string) *v1alpha1.Workload {
	t.Helper()
	wl := &v1alpha1.Workload{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, wl); err != nil {
		t.Fatal(err)
	}
	return wl
}

// updateWorkload reads Workload name in ns, changes it and writes it back, again on a conflict,
// and returns it as written.
func updateWorkload(t *testing.T, ns, name string, mutate func(*v1alpha1.Workload)) *v1alpha1.Workload {
	t.Helper()
	wl := &v1alpha1.Workload{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, wl); err != nil {
			return err
		}
		mutate(wl)
		return k8s.Update(ctx, wl)
	})
	if err != nil {
		t.Fatalf("updating workload %s/%s: %v", ns, name, err)
	}
	return wl
}

// waitFailed waits until Workload name runs rev, is Ready=False at its generation there, and its
// record says Failed at rev in group; it returns the Workload as it then was.
func waitFailed(t *testing.T, ns, name, rev, group string) *v1alpha1.Workload {
	t.Helper()
	var wl *v1alpha1.Workload
	eventually(t, time.Minute, func() (bool, string) {
		wl = workload(t, ns, name)
		r, ready := wl.Status.Rollout, readyCondition(wl)
		ok := r != nil && r.Revision == rev && r.State == v1alpha1.RolloutFailed && r.Group == group &&
			wl.Status.BlueprintRevision == rev &&
			ready != nil && ready.Status == metav1.ConditionFalse && ready.ObservedGeneration == wl.Generation
		return ok, fmt.Sprintf("%s runs %q at generation %d, record %s, Ready %s at generation %d; want Failed at %s in group %s",
			name, wl.Status.BlueprintRevision, wl.Generation, recordString(r), conditionString(ready), observedGeneration(ready), rev, group)
	})
	return wl
}

// waitDegraded waits until the supply chain targets target and says, at its generation,
// RolloutDegraded True with reason and message; it returns the supply chain as it then was.
func waitDegraded(t *testing.T, chain, target, reason, message string) *v1alpha1.ClusterSupplyChain {
	t.Helper()
	var sc *v1alpha1.ClusterSupplyChain
	eventually(t, time.Minute, func() (bool, string) {
		sc = supplyChain(t, chain)
		r := sc.Status.Rollout
		c := meta.FindStatusCondition(sc.Status.Conditions, v1alpha1.ConditionRolloutDegraded)
		ok := r != nil && r.TargetRevision == target && c != nil && c.ObservedGeneration == sc.Generation &&
			c.Status == metav1.ConditionTrue && c.Reason == reason && c.Message == message
		return ok, fmt.Sprintf("supply chain at generation %d, rollout %+v, RolloutDegraded %s at generation %d; want True/%s %q targeting %s",
			sc.Generation, r, conditionString(c), observedGeneration(c), reason, message, target)
	})
	return sc
}

func observedGeneration(c *metav1.Condition) int64 {
	if c == nil {
		return 0
	}
	return c.ObservedGeneration
}

// reportAll fails the test with every problem, up to ten of them.
func reportAll(t *testing.T, problems []string) {
	t.Helper()
	for i, p := range problems {
		if i == 10 {
			t.Errorf("... and %d more", len(problems)-i)
			break
		}
		t.Error(p)
	}
}

// holds checks cond at once, every interval and once more when window ends, and reports the
// first time it does not hold with t.Errorf, so that the test goes on to report what its
// histories saw (env.Consistently would stop the test there). It returns whether cond held
// throughout. The caller says why the window is long enough to see a violation if there was one.
func holds(t *testing.T, window, interval time.Duration, cond func() (bool, string)) bool {
	t.Helper()
	start := time.Now()
	deadline := start.Add(window)
	for {
		if ok, observed := cond(); !ok {
			t.Errorf("%s into a %s window: %s", time.Since(start).Round(time.Millisecond), window, observed)
			return false
		}
		left := time.Until(deadline)
		if left <= 0 {
			return true
		}
		select {
		case <-time.After(min(interval, left)):
		case <-ctx.Done():
			t.Fatalf("interrupted %s into a %s window: %v", time.Since(start).Round(time.Millisecond), window, ctx.Err())
		}
	}
}
