package rollout_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/rollout"
)

// BenchmarkDecide is one decision over 10,000 owners in 10 groups, half of them admitted.
func BenchmarkDecide(b *testing.B) {
	s := ppg(func(s *v1alpha1.RolloutStrategy) { s.MinSuccessTime = dur(time.Minute) })
	for g := range 10 {
		s.Groups = append(s.Groups, group(fmt.Sprintf("g%d", g), fmt.Sprintf("g%d", g)))
	}
	in := rollout.Input{Strategy: s, Target: "r2", Previous: currentIn(rolling("r1", "r2"), "g5"), Now: t0}
	for i := range 10000 {
		g := fmt.Sprintf("g%d", i%10)
		o := owner(fmt.Sprintf("ns/w%05d", i), label("tier", g), done)
		if i%10 < 5 {
			succeededAtR2(g)(&o)
		}
		in.Owners = append(in.Owners, o)
	}
	b.ReportAllocs()
	for b.Loop() {
		rollout.Decide(in)
	}
}
