package render

import (
	"encoding/json"
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/health"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

// conditionSucceeded is the condition a run reports its verdict in, as Tekton's runs do.
const conditionSucceeded = "Succeeded"

// Verdict is a run's Succeeded condition: True a success, False a failure, Unknown (also
// when it has no such condition, Found false) still running.
type Verdict struct {
	Status          metav1.ConditionStatus
	Reason, Message string
	Found           bool
}

// VerdictOf reads a run's Succeeded condition from status.conditions. It does not ask
// whether the run observed its latest generation: runs are never updated.
func VerdictOf(run *unstructured.Unstructured) Verdict {
	conds, _, _ := unstructured.NestedSlice(run.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != conditionSucceeded {
			continue
		}
		v := Verdict{Status: metav1.ConditionUnknown, Found: true}
		v.Reason, _ = m["reason"].(string)
		v.Message, _ = m["message"].(string)
		if s, _ := m["status"].(string); s == string(metav1.ConditionTrue) || s == string(metav1.ConditionFalse) {
			v.Status = metav1.ConditionStatus(s)
		}
		return v
	}
	return Verdict{Status: metav1.ConditionUnknown}
}

// Expired says which of a resource's objects, oldest first, a retention policy deletes,
// given each one's verdict (True a success, False a failure, Unknown still running): the
// successes beyond the newest MaxSuccessfulRuns and the failures beyond the newest
// MaxFailedRuns. The newest object is never deleted, and one still running never is. The
// indexes come newest first. Immutable templates and Runnables keep their objects by it.
func Expired(verdicts []metav1.ConditionStatus, policy v1alpha1.RetentionPolicy) []int {
	var out []int
	var succeeded, failed int64
	for i := len(verdicts) - 1; i >= 0; i-- {
		keep := true
		switch verdicts[i] {
		case metav1.ConditionTrue:
			succeeded++
			keep = succeeded <= policy.MaxSuccessfulRuns
		case metav1.ConditionFalse:
			failed++
			keep = failed <= policy.MaxFailedRuns
		}
		if !keep && i != len(verdicts)-1 {
			out = append(out, i)
		}
	}
	return out
}

// SameRun says whether run, a Runnable's newest run, was stamped from stamped's content: by
// the digest Surveyor records on every run it creates, or, on a run without one (Cartographer
// created it before Surveyor took over), by run holding every field the stamp sets. So a
// Runnable taken over from Cartographer gets no new run for the content it already ran.
func SameRun(run, stamped *unstructured.Unstructured) bool {
	if digest, ok := run.GetAnnotations()[AnnotationStampDigest]; ok {
		return digest == stamped.GetAnnotations()[AnnotationStampDigest]
	}
	bare := stamped.DeepCopy()
	annotations := bare.GetAnnotations()
	delete(annotations, AnnotationStampDigest)
	bare.SetAnnotations(annotations)
	return stamp.Contains(run.Object, bare.Object)
}

// OutputsError is an output of a run template that could not be read from the run it was
// read from.
type OutputsError struct {
	// Name and Path are the output's, as the template wrote them.
	Name, Path string
	// Run is the run the output was read from.
	Run *unstructured.Unstructured
	Err error
}

// Error says which path failed to evaluate, and why.
func (e *OutputsError) Error() string {
	return fmt.Sprintf("failed to evaluate path [%s]: %v", e.Path, e.Err)
}

// Unwrap is the error the path's evaluation failed with.
func (e *OutputsError) Unwrap() error { return e.Err }

// LatestSucceeded is the newest of runs, oldest first, whose Succeeded condition is True, or
// nil.
func LatestSucceeded(runs []*unstructured.Unstructured) *unstructured.Unstructured {
	for i := len(runs) - 1; i >= 0; i-- {
		if VerdictOf(runs[i]).Status == metav1.ConditionTrue {
			return runs[i]
		}
	}
	return nil
}

// RunOutputs reads a run template's outputs (name to jsonpath) from run, as JSON values. Each
// path must select exactly one value. The first output that cannot be read, in name order,
// is an *OutputsError.
func RunOutputs(run *unstructured.Unstructured, paths map[string]string) (map[string]apiextensionsv1.JSON, error) {
	names := make([]string, 0, len(paths))
	for name := range paths {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make(map[string]apiextensionsv1.JSON, len(paths))
	for _, name := range names {
		v, err := readOne(run, paths[name])
		if err == nil {
			var raw []byte
			raw, err = json.Marshal(v)
			out[name] = apiextensionsv1.JSON{Raw: raw}
		}
		if err != nil {
			return nil, &OutputsError{Name: name, Path: paths[name], Run: run, Err: err}
		}
	}
	return out, nil
}

// readOne is the one value path selects in obj.
func readOne(obj *unstructured.Unstructured, path string) (any, error) {
	p, err := expr.ParsePath(path)
	if err != nil {
		return nil, err
	}
	values, err := p.Find(obj.Object)
	switch {
	case err != nil:
		return nil, err
	case len(values) > 1:
		return nil, fmt.Errorf("too many results for the query: %s", path)
	}
	return values[0], nil
}

// RunnableResult is what one reconcile of a Runnable found, for its conditions.
type RunnableResult struct {
	// Failure is RunTemplateReady when something failed: its reason and message. Nil when
	// the run template was stamped, its newest run found or created and its outputs read.
	Failure *metav1.Condition
	// NoRuns marks a failure before any run could be looked for (the ServiceAccount, its
	// client): there is then no StampedObjectCondition, as in Cartographer.
	NoRuns bool
	// Newest is the newest run (the one the current stamp made, or found), nil when there
	// is none or it could not be known.
	Newest *unstructured.Unstructured
}

// RunTemplateFailure is a False RunTemplateReady with reason and message.
func RunTemplateFailure(reason, format string, args ...any) *metav1.Condition {
	return &metav1.Condition{
		Type: v1alpha1.ConditionRunTemplateReady, Status: metav1.ConditionFalse, Reason: reason, Message: fmt.Sprintf(format, args...),
	}
}

// RunnableConditions are a Runnable's conditions at generation, in order: RunTemplateReady,
// StampedObjectCondition (the newest run's Succeeded condition; absent when no run could be
// looked for) and Ready. Ready is True when all are; otherwise the last False of them decides
// it, else the first Unknown, as in Cartographer. Transition times are the caller's.
func RunnableConditions(res RunnableResult, generation int64) []metav1.Condition {
	template := metav1.Condition{Type: v1alpha1.ConditionRunTemplateReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonReady}
	if res.Failure != nil {
		template = *res.Failure
		template.Type = v1alpha1.ConditionRunTemplateReady
	}
	conds := []metav1.Condition{template}
	if !res.NoRuns {
		stamped := metav1.Condition{Type: v1alpha1.ConditionStampedObjectCondition, Status: metav1.ConditionUnknown, Reason: v1alpha1.ReasonUnknown}
		if res.Newest != nil {
			if v := VerdictOf(res.Newest); v.Found {
				stamped.Status, stamped.Reason, stamped.Message = v.Status, v1alpha1.ReasonSucceededCondition, health.TruncateMessage(v.Message)
			}
		}
		conds = append(conds, stamped)
	}
	ready := metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonReady}
	for _, c := range conds {
		switch {
		case c.Status == metav1.ConditionFalse:
			ready.Status, ready.Reason, ready.Message = c.Status, c.Reason, c.Message
		case c.Status == metav1.ConditionUnknown && ready.Status == metav1.ConditionTrue:
			ready.Status, ready.Reason, ready.Message = c.Status, c.Reason, c.Message
		}
	}
	conds = append(conds, ready)
	for i := range conds {
		conds[i].ObservedGeneration = generation
	}
	return conds
}

// RunsOf are runs, oldest first, as status.runs reports them: newest first, at most
// v1alpha1.MaxReportedRuns.
func RunsOf(runs []*unstructured.Unstructured) []v1alpha1.RunStatus {
	var out []v1alpha1.RunStatus
	for i := len(runs) - 1; i >= 0 && len(out) < v1alpha1.MaxReportedRuns; i-- {
		r, v := runs[i], VerdictOf(runs[i])
		out = append(out, v1alpha1.RunStatus{
			APIVersion: r.GetAPIVersion(), Kind: r.GetKind(), Name: r.GetName(), Created: r.GetCreationTimestamp(),
			Succeeded: v.Status, Reason: v.Reason, Message: health.TruncateMessage(v.Message),
		})
	}
	return out
}
