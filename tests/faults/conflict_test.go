package faults

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

const (
	// fightFor is how long the other writer keeps at it, editing every fightEvery.
	fightFor   = 5 * time.Second
	fightEvery = 300 * time.Millisecond
	// quietWindow must pass without a single apply once the fight is over. A retry loop
	// re-applies within its first backoff steps (50ms, 100ms, ...) and an echo of
	// Surveyor's own restore within the time a watch event takes, so a few seconds
	// would see either.
	quietWindow = 3 * time.Second
)

// A writer that is not Surveyor keeps changing a stamped object: the value of a field
// the template sets, the field's ownership (a forced server-side apply), Surveyor's
// labels (which take the object out of Surveyor's label-filtered informer), or the
// object's existence. Surveyor restores the object after every change, with at most
// two applies per change and none once the writer stops (no retry loop), and the
// Workload stays Ready: the status has no signal for the fight, only Events do (see the
// report; DESIGN says nothing about drift).
func TestOtherWriterFightsOverStampedObject(t *testing.T) {
	ns := newNamespace(t, "faults-conflict")
	const chain = "faults-conflict"
	configMapChain(t, chain)
	c := launchController(t, "surveyor-conflict")
	c.waitLeader(t, 2*time.Minute)
	createWorkloads(t, ns, chain, 0, 1)
	waitAllReady(t, ns, 1, 2*time.Minute)
	key := client.ObjectKey{Namespace: ns, Name: workloadName(0) + "-app"}

	cases := []struct {
		name string
		// edit changes the object once; it returns how many server-side applies it sent.
		edit func(cm *corev1.ConfigMap, i int) (applies int, err error)
	}{
		{"update the stamped value", func(cm *corev1.ConfigMap, i int) (int, error) {
			cm.Data["mode"] = fmt.Sprintf("tampered-%d", i)
			return 0, k8s.Update(ctx, cm)
		}},
		{"force-apply the stamped value as another manager", func(cm *corev1.ConfigMap, i int) (int, error) {
			u := &corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: cm.Namespace},
				Data:       map[string]string{"mode": fmt.Sprintf("applied-%d", i)},
			}
			return 1, k8s.Patch(ctx, u, client.Apply, client.FieldOwner("other-writer"), client.ForceOwnership)
		}},
		{"remove Surveyor's labels", func(cm *corev1.ConfigMap, i int) (int, error) {
			cm.Labels = map[string]string{"other-writer": fmt.Sprint(i)}
			return 0, k8s.Update(ctx, cm)
		}},
		{"delete the object", func(cm *corev1.ConfigMap, i int) (int, error) {
			return 0, k8s.Delete(ctx, cm)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			waitRestored(t, key, time.Minute)
			before := applyCount(t)
			edits, writerApplies := 0, 0
			var lastEdit time.Time
			for start := time.Now(); time.Since(start) < fightFor; time.Sleep(fightEvery) {
				cm := &corev1.ConfigMap{}
				if err := k8s.Get(ctx, key, cm); err != nil {
					continue // deleted and not recreated yet
				}
				if isRestored(cm) != "" {
					continue // Surveyor has not restored the last edit yet
				}
				applies, err := tc.edit(cm, edits)
				writerApplies += applies
				switch {
				case err == nil:
					edits++
					lastEdit = time.Now()
				case apierrors.IsConflict(err), apierrors.IsNotFound(err):
				default:
					t.Fatalf("edit %d: %v", edits, err)
				}
			}
			waitRestored(t, key, time.Minute)
			t.Logf("restored within %s of the writer's last edit", time.Since(lastEdit).Round(time.Millisecond))
			restored := applyCount(t)
			fight := restored - before - float64(writerApplies)
			t.Logf("%d edits by the other writer, %.0f applies by Surveyor", edits, fight)
			if edits < 3 {
				t.Fatalf("only %d edits got through in %s; the fight never happened", edits, fightFor)
			}
			if limit := float64(2*edits + 2); fight > limit {
				t.Errorf("Surveyor applied %.0f times to undo %d edits, want at most %.0f: restores are not bounded", fight, edits, limit)
			}
			env.Consistently(ctx, t, quietWindow, 250*time.Millisecond, func() (bool, string) {
				quiet := applyCount(t) - restored
				return quiet == 0, fmt.Sprintf("Surveyor applied %.0f times after the object was restored, want 0 in %s", quiet, quietWindow)
			})
			wl := &v1alpha1.Workload{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: workloadName(0)}, wl); err != nil {
				t.Fatal(err)
			}
			if !isReady(wl) {
				t.Errorf("the workload is not Ready after the object was restored: %+v", meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.ConditionReady))
			}
		})
	}

	// What the Workload reports about the fight: only Events (the recorder's spam filter
	// lets 25 through per object, then one per five minutes).
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	reasons := map[string]int32{}
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == v1alpha1.KindWorkload {
			reasons[e.Reason] += max(e.Count, 1)
		}
	}
	t.Logf("events on the workload by reason: %v", reasons)
	if reasons[v1alpha1.EventStampedObjectApplied] < 2 {
		t.Errorf("the workload has %d %s events, want one for the first stamp and at least one for a restore",
			reasons[v1alpha1.EventStampedObjectApplied], v1alpha1.EventStampedObjectApplied)
	}
}

// isRestored says what still differs from the stamp in cm ("" when nothing does).
func isRestored(cm *corev1.ConfigMap) string {
	switch {
	case cm.Data["mode"] != "stamped":
		return fmt.Sprintf("data.mode=%q", cm.Data["mode"])
	case cm.Labels[v1alpha1.LabelResourceName] != "app":
		return fmt.Sprintf("labels=%v", cm.Labels)
	}
	return ""
}

func waitRestored(t *testing.T, key client.ObjectKey, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, func() (bool, string) {
		cm := &corev1.ConfigMap{}
		if err := k8s.Get(ctx, key, cm); err != nil {
			return false, err.Error()
		}
		diff := isRestored(cm)
		return diff == "", diff
	})
}

// applyCount is the API server's count of server-side applies to ConfigMaps.
func applyCount(t *testing.T) float64 {
	t.Helper()
	return env.APIServerMetrics(t).Sum("apiserver_request_total", map[string]string{"verb": "APPLY", "resource": "configmaps"})
}
