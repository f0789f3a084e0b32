package rollout

import (
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/surveyor-dev/surveyor/internal/harness"
)

// shortLease makes a relaunched controller take the lease a SIGKILLed one left behind within
// a few seconds instead of the default 15s, so that it leads again in the middle of a soak.
var shortLease = []string{"--leader-elect-lease-duration=5s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=1s"}

// controller is one Surveyor process the cluster launched, with leader election on.
type controller struct{ *harness.Controller }

// launchController starts the built controller as process name. After the test it is
// terminated, which releases its lease for the next test, and its log tail is printed if the
// test failed.
func launchController(t *testing.T, name string, extra ...string) *controller {
	t.Helper()
	return &controller{env.LaunchForTest(ctx, t, harness.Process{Name: name, Args: append([]string{"--zap-log-level=info"}, extra...)})}
}

// killAndRelaunch SIGKILLs the controller, starts it again with the same flags no earlier than
// notBefore (zero: at once) and waits until the new process holds the lease. It returns when the
// kill happened and when the new process acquired the lease, as the API server recorded it.
func (c *controller) killAndRelaunch(t *testing.T, notBefore time.Time) (killed, leads time.Time) {
	t.Helper()
	before := lease(t).Spec.HolderIdentity
	if err := env.Cluster.Kill(c.Name); err != nil {
		t.Fatal(err)
	}
	killed = time.Now()
	// Not a wait for something to happen: the test needs the controller down across a point
	// in time (a deadline), and nothing can move while it is.
	time.Sleep(time.Until(notBefore))
	if err := env.Cluster.Relaunch(ctx, c.Name); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() (bool, string) {
		l := lease(t)
		holder := l.Spec.HolderIdentity
		if holder == nil || *holder == "" || (before != nil && *holder == *before) || l.Spec.AcquireTime == nil {
			return false, fmt.Sprintf("lease held by %v, the killed process", deref(before))
		}
		leads = l.Spec.AcquireTime.Time
		return true, ""
	})
	t.Logf("killed %s at %s; relaunched, it leads at %s", c.Name, killed.Format(time.TimeOnly), leads.Format(time.TimeOnly))
	return killed, leads
}

// lease reads the leader-election lease.
func lease(t *testing.T) *coordinationv1.Lease {
	t.Helper()
	return harness.Lease(ctx, t, k8s)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
