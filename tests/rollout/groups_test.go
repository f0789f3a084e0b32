package rollout

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// groupOwners is how many Workloads each of the five groups of TestGroupsSoakInOrder holds.
const groupOwners = 100

// A ProgressivePerGroup rollout to 500 Workloads in five groups of 100 (ownersPerGroup 100%)
// keeps every group's soak: each Workload reaches Succeeded no earlier than minSuccessTime after
// its soak began, every Workload of group k+1 is admitted no earlier than the last Succeeded
// transition of group k, nobody is admitted twice or goes backwards, and the rollout completes.
func TestGroupsSoakInOrder(t *testing.T) {
	const (
		name       = "rollout-groups"
		minSuccess = 5 * time.Second
	)
	groups := []string{"g0", "g1", "g2", "g3", "g4"}
	owners := groupOwners * len(groups)
	ns := newNamespace(t, name)
	whole := intstr.FromString("100%")
	rolloutCase(t, name, v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressivePerGroup, Groups: groupsByLabel(groups...), OwnersPerGroup: &whole})
	createWorkloads(t, ns, name, owners, inGroups(owners, groups...))
	launchController(t, name)
	start := time.Now()
	rev1, _ := waitComplete(t, completion{ns: ns, chain: name, owners: owners, version: "v1"}, 3*time.Minute)
	t.Logf("%d workloads realized at the first revision in %s", owners, time.Since(start).Round(time.Millisecond))

	h := watchWorkloads(t, ns)
	start = time.Now()
	change(t, name, minSuccess, "v2", "ok")
	rev2 := waitTarget(t, name, rev1)
	_, wls := waitComplete(t, completion{ns: ns, chain: name, target: rev2, owners: owners, version: "v2"}, 4*time.Minute)
	t.Logf("rolled %s out to %d workloads in %d groups in %s", rev2, owners, len(groups), time.Since(start).Round(time.Millisecond))

	var previousEnd time.Time
	for i, g := range groups {
		members := inGroup(wls, g)
		if len(members) != groupOwners {
			t.Errorf("group %s has %d workloads, want %d", g, len(members), groupOwners)
		}
		if i > 0 {
			assertAdmittedAfter(t, members, previousEnd, fmt.Sprintf("the last Succeeded transition of %s", groups[i-1]))
		}
		previousEnd = assertSoaked(t, members, minSuccess)
		t.Logf("group %s done at %s", g, previousEnd.UTC().Format(timeFormat))
	}
	h.checkHistory(t, rev2)
}
