package realizer

import (
	"context"
	"errors"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/surveyor-dev/surveyor/internal/apierr"
	"github.com/surveyor-dev/surveyor/internal/events"
	"github.com/surveyor-dev/surveyor/internal/watch"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

// readTimeout bounds a Runnable's reads of the API server (its ServiceAccount, the objects
// its selector chooses from), so that a kind that does not answer holds no worker (DESIGN
// §12): the Runnable is retried with backoff.
const readTimeout = 5 * time.Second

// runObservation is what one reconcile saw of a Runnable.
type runObservation struct {
	result render.RunnableResult
	// runs are the runs of the current template, oldest first, when runsKnown.
	runs      []*unstructured.Unstructured
	runsKnown bool
	// outputs replace status.outputs when not nil.
	outputs map[string]apiextensionsv1.JSON
	// deferred is how long the new run the stamp calls for waits for the Runnable's pace.
	deferred time.Duration
}

// runRealization is one pass over a Runnable, with the cluster around the pure steps of
// pkg/render.
type runRealization struct {
	r   *RunnableReconciler
	ctx context.Context
	rn  *v1alpha1.Runnable
	req ctrl.Request
	// writer writes as the Runnable's ServiceAccount, once realize has its client; a
	// runs' kind that has not synced yet drops the pass.
	writer
	events events.Log
}

// realize takes the Runnable through its steps: its ServiceAccount, its template, its
// selector, the stamp, its runs (a new one when the stamp differs from the newest's),
// retention and outputs. The observation always says what happened; an error is returned
// as well when a retry may get further: errRetryLater for what is fixed outside anything
// watched, any other for a transient API failure.
func (rz *runRealization) realize() (*runObservation, error) {
	obs := &runObservation{}
	fail := func(err error, reason, format string, args ...any) (*runObservation, error) {
		obs.result.Failure = render.RunTemplateFailure(reason, format, args...)
		return obs, err
	}
	ns, sa := rz.rn.Namespace, render.RunnableServiceAccount(rz.rn)
	account := &metav1.PartialObjectMetadata{}
	account.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"})
	getCtx, cancel := context.WithTimeout(rz.ctx, readTimeout)
	defer cancel()
	if err := rz.r.live.Get(getCtx, client.ObjectKey{Namespace: ns, Name: sa}, account); err != nil {
		obs.result.NoRuns = true
		return fail(retryable(err), v1alpha1.ReasonServiceAccountError, "unable to get service account [%s/%s]: %v", ns, sa, err)
	}
	cl, err := rz.r.imp.ClientFor(ns, sa)
	if err != nil {
		obs.result.NoRuns = true
		return fail(err, v1alpha1.ReasonClientBuilderError, "unable to build a client for service account [%s/%s]: %v", ns, sa, err)
	}
	rz.writer = writer{watch: rz.r.watch, owner: rz.req, client: cl}

	name := rz.rn.Spec.RunTemplateRef.Name
	tpl := &v1alpha1.ClusterRunTemplate{}
	if err := rz.r.client.Get(rz.ctx, client.ObjectKey{Name: name}, tpl); err != nil {
		// A missing template is created later, and its creation re-queues the Runnable.
		return fail(client.IgnoreNotFound(err), v1alpha1.ReasonRunTemplateNotFound,
			"unable to get run template [%s]: failed to get run template object from api server [%s/%s]: %v", name, v1alpha1.KindClusterRunTemplate, name, err)
	}
	selected, err := rz.selected()
	if err != nil {
		sel := rz.rn.Spec.Selector
		return fail(retryable(err), v1alpha1.ReasonTemplateStampFailure, "unable to resolve selector [%v], apiVersion [%s], kind [%s]: %v",
			sel.MatchingLabels, sel.Resource.APIVersion, sel.Resource.Kind, err)
	}
	stamped, err := render.StampRun(rz.rn, tpl, selected)
	if err != nil {
		return fail(nil, v1alpha1.ReasonTemplateStampFailure, "unable to stamp object for run template [%s]: %v", name, err)
	}

	gvk := stamped.GroupVersionKind()
	if err := rz.ensure(gvk); err != nil {
		var notServed *watch.NotServedError
		if errors.Is(err, apierr.ErrNotStampable) || meta.IsNoMatchError(err) || errors.As(err, &notServed) || rz.syncing {
			return rz.rejected(obs, stamped, name, err)
		}
		// The informer of the runs' kind could not start: nothing the Runnable says.
		return fail(err, v1alpha1.ReasonUnknownError, "unable to watch objects of kind [%s]: %v", gvk, err)
	}
	runs, err := stampedObjects(rz.ctx, rz.r.runs, &rz.r.created, rz.rn, name, gvk, client.MatchingLabels{
		v1alpha1.LabelRunnableName: rz.rn.Name, v1alpha1.LabelRunTemplateName: name,
	})
	if err != nil {
		return fail(err, v1alpha1.ReasonFailedToListCreatedObjects, "unable to list objects in namespace [%s] with labels [%v]: %v",
			ns, map[string]string{v1alpha1.LabelRunnableName: rz.rn.Name, v1alpha1.LabelRunTemplateName: name}, err)
	}
	n := len(runs)
	newRun := n == 0 || !render.SameRun(runs[n-1], stamped)
	if newRun && n > 0 {
		obs.deferred = rz.r.pace.wait(rz.req.NamespacedName, rz.r.now().Time)
	}
	switch {
	case obs.deferred > 0:
		rz.events.Add(v1alpha1.EventRunDeferred, "Deferred a new run for %s: a Runnable creates %d runs at once, then one every %s",
			obs.deferred.Round(time.Second), runBurst, runPace)
	case newRun:
		created, err := rz.create(stamped, name)
		if err != nil {
			obs.runs, obs.runsKnown = runs, true
			if n > 0 {
				obs.result.Newest = runs[n-1]
			}
			return rz.rejected(obs, stamped, name, err)
		}
		runs = append(runs, created)
	}
	runs, retainErr := rz.retain(runs)
	obs.runs, obs.runsKnown = runs, true
	obs.result.Newest = runs[len(runs)-1]
	obs, err = rz.outputs(obs, tpl)
	// A run whose delete failed is listed, and tried, again on the next pass: with backoff.
	return obs, errors.Join(err, retainErr)
}

// selected is the one object the Runnable's selector chooses, listed as its ServiceAccount,
// or nil without a selector. Its kind is watched from here on.
func (rz *runRealization) selected() (*unstructured.Unstructured, error) {
	sel := rz.rn.Spec.Selector
	if sel == nil {
		return nil, nil
	}
	gvk := schema.FromAPIVersionAndKind(sel.Resource.APIVersion, sel.Resource.Kind)
	if gvk.Group == "" && gvk.Kind == "Secret" {
		// A Secret's data would reach the run and, through outputs, this status (DESIGN §12).
		return nil, selectionError("a selector may not choose a Secret: its data would reach the Runnable's status")
	}
	mapping, err := rz.r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("failed to list server api resources: %w", err)
	}
	if err := rz.r.selected.Ensure(gvk); err != nil {
		logf.FromContext(rz.ctx).Error(err, "watching selected objects", "kind", gvk)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	opts := []client.ListOption{client.MatchingLabels(sel.MatchingLabels)}
	scope := "at cluster scope"
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		opts = append(opts, client.InNamespace(rz.rn.Namespace))
		scope = "in namespace"
	}
	listCtx, cancel := context.WithTimeout(rz.ctx, readTimeout)
	defer cancel()
	if err := rz.client.List(listCtx, list, opts...); err != nil {
		return nil, fmt.Errorf("failed to list objects %s matching selector [%v]: %w", scope, sel.MatchingLabels, err)
	}
	switch len(list.Items) {
	case 0:
		return nil, selectionError("selector did not match any objects")
	case 1:
		return &list.Items[0], nil
	}
	return nil, selectionError("selector matched multiple objects")
}

// create creates run as the ServiceAccount and returns it as the API server answered.
func (rz *runRealization) create(run *unstructured.Unstructured, template string) (*unstructured.Unstructured, error) {
	created := stampedAt(run, rz.r.now())
	if err := rz.writer.create(rz.ctx, created); err != nil {
		return nil, err
	}
	rz.r.created.remember(rz.rn, template, created)
	rz.events.Add(v1alpha1.EventStampedObjectApplied, "Created object [%s/%s]", rz.r.watch.Resource(created.GroupVersionKind()), created.GetName())
	return created, nil
}

// rejected reports a run the API server did not take, or whose kind cannot be stamped, on
// obs, with the retry it calls for.
func (rz *runRealization) rejected(obs *runObservation, run *unstructured.Unstructured, template string, err error) (*runObservation, error) {
	name := run.GetName()
	if name == "" {
		name = run.GetGenerateName()
	}
	failure := render.RunTemplateFailure(v1alpha1.ReasonStampedObjectRejectedByAPIServer, "unable to apply object [%s/%s] for run template [%s]: %v",
		rz.rn.Namespace, name, template, err)
	obs.result.Failure = failure
	var notServed *watch.NotServedError
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) || meta.IsNoMatchError(err) || errors.As(err, &notServed):
		// The kind is not served (its CRD is missing or being deleted, or its writes
		// stall): the API server's to fix, so look again later.
		failure.Status, failure.Reason = metav1.ConditionUnknown, v1alpha1.ReasonKindNotServed
		return obs, fmt.Errorf("%w: %w", errRetryLater, err)
	case apierrors.IsForbidden(err):
		// RBAC is fixed outside the Runnable and nothing here watches it.
		return obs, fmt.Errorf("%w: %w", errRetryLater, err)
	case apierr.Transient(err):
		failure.Status = metav1.ConditionUnknown
		return obs, err
	}
	// Invalid, AlreadyExists (a fixed name), a cluster-scoped kind: the template or the
	// Runnable must change, and either change re-queues it.
	return obs, nil
}

// retain deletes the finished runs beyond the Runnable's retention policy, as its
// ServiceAccount (writer.retain), and returns the runs that are left, oldest first, and
// the error of the deletes that failed: those runs are deleted on a later pass.
func (rz *runRealization) retain(runs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	verdict := func(run *unstructured.Unstructured) metav1.ConditionStatus { return render.VerdictOf(run).Status }
	return rz.writer.retain(rz.ctx, runs, render.RunnableRetention(rz.rn), verdict, func(run *unstructured.Unstructured) {
		rz.events.Add(v1alpha1.EventStampedObjectRemoved, "Deleted object [%s/%s]", rz.r.watch.Resource(run.GroupVersionKind()), run.GetName())
	}, func(run *unstructured.Unstructured, err error) {
		rz.events.Warn(v1alpha1.EventStampedObjectRemovalFailed, "Beyond the retention policy: %s", deleteFailure(refOf(run), err))
	})
}

// outputs reads the template's outputs from the latest run that succeeded into obs. With
// none yet, or no outputs declared, status.outputs stays as it is; an output that cannot
// be read is OutputPathNotSatisfied, and status.outputs stays as well.
func (rz *runRealization) outputs(obs *runObservation, tpl *v1alpha1.ClusterRunTemplate) (*runObservation, error) {
	latest := render.LatestSucceeded(obs.runs)
	if latest == nil || len(tpl.Spec.Outputs) == 0 {
		return obs, nil
	}
	values, err := render.RunOutputs(latest, tpl.Spec.Outputs)
	resource := rz.r.watch.Resource(latest.GroupVersionKind())
	if err != nil {
		obs.result.Failure = render.RunTemplateFailure(v1alpha1.ReasonOutputPathNotSatisfied,
			"waiting to read value from resource [%s/%s] in namespace [%s]: unable to retrieve outputs from stamped object [%s/%s] of type [%s] for run template [%s]: %v",
			resource, latest.GetName(), latest.GetNamespace(), latest.GetNamespace(), latest.GetName(), resource, tpl.Name, err)
		return obs, nil
	}
	if !equality.Semantic.DeepEqual(values, rz.rn.Status.Outputs) {
		rz.events.Add(v1alpha1.EventResourceOutputChanged, "Runnable [%s] found a new output in [%s/%s]", rz.rn.Name, resource, latest.GetName())
	}
	obs.outputs = values
	return obs, nil
}

// selectionError is a selector that chose no object, or several, or one it may not: only
// a watched change (of the Runnable, or of an object of the selected kind) fixes it.
type selectionError string

func (e selectionError) Error() string { return string(e) }

// retryable is how a failure of the Runnable's ServiceAccount or selector is retried: not
// at all when a watched change fixes it (a selection), with backoff when a retry may get
// past it at once (a transient API error), and later otherwise, for what is fixed outside
// anything watched (RBAC, a ServiceAccount created, a kind served).
func retryable(err error) error {
	var selection selectionError
	switch {
	case errors.As(err, &selection):
		return nil
	case apierr.Transient(err):
		return err
	}
	return fmt.Errorf("%w: %w", errRetryLater, err)
}
