package rollout

import (
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// TestRecreatedWithoutStrategyClearsRecords: a supply chain replaced (deleted and created again
// under its name, as GitOps does) without its rolloutStrategy leaves its owners no rollout
// record, exactly as removing the strategy in place does (TestStrategyRemovedClearsRecords):
// a record left behind would pin the owner again, to a revision it no longer runs, once a
// strategy comes back.
func TestRecreatedWithoutStrategyClearsRecords(t *testing.T) {
	const (
		name   = "rollout-recreated-no-strategy"
		owners = 3
	)
	ns := completedAll(t, name, owners)

	old := supplyChain(t, name)
	if err := k8s.Delete(ctx, old); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() (bool, string) {
		err := k8s.Get(ctx, client.ObjectKey{Name: name}, &v1alpha1.ClusterSupplyChain{})
		return apierrors.IsNotFound(err), fmt.Sprintf("supply chain still there: %v", err)
	})
	sc := &v1alpha1.ClusterSupplyChain{}
	sc.Name = name
	sc.Spec = *old.Spec.DeepCopy()
	sc.Spec.RolloutStrategy = nil
	if err := k8s.Create(ctx, sc); err != nil {
		t.Fatal(err)
	}
	// The new supply chain's status is written and every Workload runs it without a revision
	// and without a record. The records are cleared once the controller's cache shows them,
	// however soon after their pins the supply chain was replaced; the old code never cleared
	// them, and this waits out its minute.
	eventually(t, time.Minute, func() (bool, string) {
		now := supplyChain(t, name)
		if now.UID != sc.UID || now.Status.ObservedGeneration != now.Generation {
			return false, fmt.Sprintf("supply chain observedGeneration %d of %d", now.Status.ObservedGeneration, now.Generation)
		}
		for _, wl := range workloads(t, ns) {
			if wl.Status.Rollout != nil || wl.Status.BlueprintRevision != "" || !isReady(&wl) {
				return false, fmt.Sprintf("workload %s runs %q, record %s, Ready %s", wl.Name, wl.Status.BlueprintRevision, recordString(wl.Status.Rollout), conditionString(readyCondition(&wl)))
			}
		}
		return true, ""
	})
}
