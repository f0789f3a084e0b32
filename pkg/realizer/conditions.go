package realizer

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// mergeConditions returns want, in want's order, with each condition's
// LastTransitionTime carried over from old when its status did not change and set to
// now when it did. It is the one place the realizer stamps transition times, so a
// condition only "moves" when its status really changes.
func mergeConditions(old, want []metav1.Condition, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, len(want))
	for i, c := range want {
		if prev := meta.FindStatusCondition(old, c.Type); prev != nil && prev.Status == c.Status {
			c.LastTransitionTime = prev.LastTransitionTime
		} else {
			c.LastTransitionTime = now
		}
		out[i] = c
	}
	return out
}
