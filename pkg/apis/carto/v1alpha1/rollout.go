package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Progressive rollout of blueprint changes (DESIGN §9, seed 004).

// RolloutType is how a blueprint change reaches its owners.
// +kubebuilder:validation:Enum=All;Progressive;ProgressivePerGroup
type RolloutType string

const (
	// RolloutAll admits every owner at once, still recording each owner's state.
	RolloutAll RolloutType = "All"
	// RolloutProgressive admits owners in name order, at most maxConcurrency in flight.
	RolloutProgressive RolloutType = "Progressive"
	// RolloutProgressivePerGroup admits one group (or chunk of a group) at a time.
	RolloutProgressivePerGroup RolloutType = "ProgressivePerGroup"
)

// RolloutStrategy says how a change of a blueprint, or of a template it references, reaches the
// owners it realizes. Without one, a change reaches every owner at once.
//
// +kubebuilder:validation:XValidation:rule="!has(self.mandatoryGroups) || self.mandatoryGroups.all(m, has(self.groups) && self.groups.exists(g, g.name == m))",message="every mandatory group must be one of groups"
// +kubebuilder:validation:XValidation:rule="!has(self.maxConcurrency) || self.type == 'Progressive'",message="maxConcurrency applies to type Progressive only"
type RolloutStrategy struct {
	// Type is All, Progressive or ProgressivePerGroup.
	// +required
	Type RolloutType `json:"type"`

	// Groups are ordered; an owner joins the first group whose selector matches its labels.
	// Owners in no group come after every group.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Groups []RolloutGroup `json:"groups,omitempty"`

	// OwnersPerGroup splits every group, and the owners in no group, into chunks of this many
	// owners sorted by namespace/name: an integer (above a group's size, the whole group), or a
	// percentage of every owner the blueprint selects (rounded up).
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self > 0 : self.matches('^([1-9][0-9]?|100)%$')",message="must be a positive integer or a percentage from 1% to 100%"
	OwnersPerGroup *intstr.IntOrString `json:"ownersPerGroup,omitempty"`

	// MandatoryGroups go first, one at a time, and tolerate no failure.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	MandatoryGroups []string `json:"mandatoryGroups,omitempty"`

	// MaxConcurrency is, for type Progressive, how many owners may be in flight at once: an
	// integer, or a percentage of all owners (rounded up).
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self > 0 : self.matches('^([1-9][0-9]?|100)%$')",message="must be a positive integer or a percentage from 1% to 100%"
	MaxConcurrency *intstr.IntOrString `json:"maxConcurrency,omitempty"`

	// MaxFailures is how many owners may fail (Failed or TimeOut) before admission stops: per
	// group for ProgressivePerGroup, of all owners for Progressive; type All has no budget. An
	// integer, or a percentage of every owner the blueprint selects (rounded up). Zero when not
	// set.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^([0-9]|[1-9][0-9]|100)%$')",message="must be a non-negative integer or a percentage from 0% to 100%"
	MaxFailures *intstr.IntOrString `json:"maxFailures,omitempty"`

	// MinSuccessTime is how long an owner must stay Ready at the new revision, continuously,
	// to count as Succeeded, e.g. 5m.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="must be a duration such as 30s or 5m, not negative"
	MinSuccessTime *metav1.Duration `json:"minSuccessTime,omitempty"`

	// ProgressDeadline is how long after its admission an owner may still be not Ready at the
	// new revision before it is TimeOut, a failure: a duration such as 15m, or None (as OCM
	// spells it). None when not set.
	// +optional
	ProgressDeadline ProgressDeadline `json:"progressDeadline,omitempty"`

	// Paused stops new admissions; owners already admitted go on.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// RolloutGroup is a named group of owners, chosen by their labels.
type RolloutGroup struct {
	// Name identifies the group in mandatoryGroups and in status.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// Selector chooses the group's owners by their labels.
	// +required
	Selector metav1.LabelSelector `json:"selector"`
}

// RolloutState is where one owner is in a rollout.
type RolloutState string

const (
	// RolloutToApply is the state of an owner not yet admitted; it runs its previous
	// revision.
	RolloutToApply RolloutState = "ToApply"
	// RolloutProgressing is the state of an owner admitted but not yet Ready at its
	// generation and the target revision for minSuccessTime.
	RolloutProgressing RolloutState = "Progressing"
	// RolloutSucceeded is the state of an owner that has been Ready at the target revision
	// for minSuccessTime, continuously.
	RolloutSucceeded RolloutState = "Succeeded"
	// RolloutFailed is the state of an owner that is Ready=False at the target revision.
	RolloutFailed RolloutState = "Failed"
	// RolloutTimeOut is the state of an owner still in flight progressDeadline after its
	// admission.
	RolloutTimeOut RolloutState = "TimeOut"
	// RolloutSkip is the state of an owner that was not Ready at the stable revision when
	// the rollout reached it; admitted with its group, it neither blocks nor counts.
	RolloutSkip RolloutState = "Skip"
)

// OwnerRolloutStatus is an owner's place in its blueprint's rollout.
type OwnerRolloutStatus struct {
	// Revision is the revision the owner is rolling out to, or runs.
	// +required
	Revision string `json:"revision"`

	// State is ToApply, Progressing, Succeeded, Failed, TimeOut or Skip.
	// +required
	State RolloutState `json:"state"`

	// Group is the rollout group the owner is in, empty when it is in none.
	// +optional
	Group string `json:"group,omitempty"`

	// LastTransitionTime is when State last changed.
	// +required
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`

	// AdmittedTime is when the owner was admitted to Revision (or re-admitted after it fell
	// back from Succeeded); progressDeadline counts from it.
	// +optional
	AdmittedTime *metav1.Time `json:"admittedTime,omitempty"`

	// ReadyTime is when a status first showed the owner Ready at its generation and Revision,
	// Ready ever since: minSuccessTime counts from it, not from admission. Unset while it is not
	// Ready there.
	// +optional
	ReadyTime *metav1.Time `json:"readyTime,omitempty"`
}

// ProgressDeadline is a duration such as 15m, or None.
// +kubebuilder:validation:MaxLength=32
// +kubebuilder:validation:Pattern=`^(None|([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+)$`
// +kubebuilder:validation:XValidation:rule="self == 'None' || duration(self) > duration('0s')",message="must be None or a positive duration such as 15m"
type ProgressDeadline string

// ProgressDeadlineNone means no deadline.
const ProgressDeadlineNone ProgressDeadline = "None"

// Duration is the deadline, zero for none (unset, None, or not a positive duration).
func (d ProgressDeadline) Duration() time.Duration {
	if d == "" || d == ProgressDeadlineNone {
		return 0
	}
	v, err := time.ParseDuration(string(d))
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// BlueprintRolloutStatus is the aggregate of a blueprint's rollout.
type BlueprintRolloutStatus struct {
	// StableRevision is the last revision that reached every owner.
	// +optional
	StableRevision string `json:"stableRevision,omitempty"`

	// TargetRevision is the revision being rolled out.
	// +optional
	TargetRevision string `json:"targetRevision,omitempty"`

	// Complete is true once TargetRevision has reached every owner (StableRevision is then
	// TargetRevision). It tells a finished rollout from one that reverts to the stable revision,
	// where StableRevision equals TargetRevision too.
	// +optional
	Complete bool `json:"complete,omitempty"`

	// CurrentGroup is the group being admitted.
	// +optional
	CurrentGroup string `json:"currentGroup,omitempty"`

	// Counts are the owners in each state.
	// +optional
	Counts RolloutCounts `json:"counts,omitempty"`

	// Groups are the counts per group, in rollout order; the owners in no group come last,
	// with an empty name.
	// +optional
	// +listType=atomic
	Groups []GroupRolloutStatus `json:"groups,omitempty"`

	// FailedOwners are up to 20 owners that are Failed or TimeOut, as namespace/name.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	FailedOwners []string `json:"failedOwners,omitempty"`

	// NextCheckTime is when the rollout is looked at again without any event: the end of a
	// soak or of a progress deadline.
	// +optional
	NextCheckTime *metav1.Time `json:"nextCheckTime,omitempty"`
}

// GroupRolloutStatus is one group's counts.
type GroupRolloutStatus struct {
	// Name is the group's name, empty for the owners in no group.
	// +optional
	Name string `json:"name"`

	// Counts are the group's owners in each state.
	// +optional
	Counts RolloutCounts `json:"counts,omitempty"`
}

// RolloutCounts are owners per rollout state.
type RolloutCounts struct {
	// +optional
	ToApply int32 `json:"toApply,omitempty"`
	// +optional
	Progressing int32 `json:"progressing,omitempty"`
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// +optional
	TimeOut int32 `json:"timeOut,omitempty"`
	// +optional
	Skip int32 `json:"skip,omitempty"`
}
