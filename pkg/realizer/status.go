package realizer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/health"
	"github.com/surveyor-dev/surveyor/pkg/render"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

// observation is everything one reconcile saw of an owner's realization.
type observation struct {
	blueprint    metav1.Condition // SupplyChainReady or DeliveryReady
	blueprintRef *v1alpha1.BlueprintReference
	// revision is the blueprint revision the resources were realized at, empty for a
	// blueprint without a rolloutStrategy.
	revision  string
	resources []*render.Result
	// keepResources is set when nothing was realized (no usable blueprint): the
	// previous resource entries stay, so their objects can still be pruned later.
	keepResources bool
	// pending are the stamped objects awaiting deletion after this pass (prune).
	pending []v1alpha1.PendingDeletion
}

// ownerStatus computes the whole status from an observation: a pure function of the
// previous status (for transition times and the last good generation), what was
// observed, the owner's generation and the time. With kstatus the owner also carries
// kstatus's Stalled or Reconciling, last (health.KStatus).
func ownerStatus(kind *v1alpha1.OwnerKind, prev *v1alpha1.OwnerStatus, obs *observation, generation int64, now metav1.Time, kstatus bool) v1alpha1.OwnerStatus {
	// The rollout record is the blueprint reconciler's alone to write (DESIGN §9, One clock):
	// the owner's status carries it as it was read, whatever was observed.
	st := v1alpha1.OwnerStatus{ObservedGeneration: generation, BlueprintRevision: obs.revision, Rollout: prev.Rollout}
	bp := render.WithGeneration(obs.blueprint, generation)
	if obs.keepResources {
		st.BlueprintRevision = prev.BlueprintRevision
		// No blueprint to realize: there are no resources to submit or judge, so the
		// owner has only its blueprint condition, Ready (which copies it) and
		// Available, as in Cartographer. Resource entries and rule conditions stay as
		// they were, so objects can still be pruned and a verdict is not forgotten.
		st.Resources, st.PendingDeletions = prev.Resources, prev.PendingDeletions
		ready := bp
		ready.Type = v1alpha1.ConditionReady
		available := health.Available(health.AvailableInput{
			Previous: meta.FindStatusCondition(prev.Conditions, v1alpha1.ConditionAvailable), Generation: generation,
		})
		owner := []metav1.Condition{bp, ready, available}
		for _, c := range prev.Conditions {
			if !slices.Contains(kind.ConditionTypes(), c.Type) && c.Type != v1alpha1.ConditionStalled && c.Type != v1alpha1.ConditionReconciling {
				owner = append(owner, c)
			}
		}
		if kstatus {
			owner = append(owner, health.KStatus(ready, nil)...)
		}
		st.Conditions = mergeConditions(prev.Conditions, owner, now)
		return st
	}

	// A pending deletion changes no condition: Ready judges what the owner stamps now.
	st.PendingDeletions = obs.pending
	var healths []health.ResourceCondition
	var rules []workitems.ResourceConditions
	for _, res := range obs.resources {
		rs := res.Status
		healthy := res.Healthy
		if res.PassThrough {
			// Nothing was stamped, so there is no object to judge: Ready is submission alone.
			healthy = metav1.Condition{Type: v1alpha1.ConditionHealthy, Status: metav1.ConditionTrue}
		}
		ready := health.ResourceReady(generation, &res.Submitted, &healthy)
		var old []metav1.Condition
		for _, p := range prev.Resources {
			if p.Name == rs.Name {
				old = p.Conditions
			}
		}
		if !res.Frozen {
			want := []metav1.Condition{res.Submitted, res.Healthy, ready}
			if res.PassThrough {
				want = []metav1.Condition{res.Submitted, ready}
			}
			want = append(want, res.Rules...)
			for i := range want {
				want[i].ObservedGeneration = generation
			}
			rs.Conditions = mergeConditions(old, want, now)
		}
		st.Resources = append(st.Resources, rs)
		if !res.PassThrough {
			healths = append(healths, health.ResourceCondition{Name: rs.Name, Condition: &res.Healthy})
		}
		var types []string
		for _, c := range res.Rules {
			types = append(types, c.Type)
		}
		rules = append(rules, workitems.ResourceConditions{Name: rs.Name, Conditions: rs.Conditions, RuleTypes: types})
	}

	submitted := render.WithGeneration(resourcesSubmitted(obs.resources), generation)
	healthy := health.ResourcesHealthy(generation, healths)
	// Every resource is stamped and judged at this generation whenever the blueprint
	// could be realized; frozen resources count as current too.
	ready := health.OwnerReady(health.OwnerReadyInput{
		Generation: generation, BlueprintReady: &bp, ResourcesSubmitted: &submitted, ResourcesHealthy: &healthy, AllCurrent: true,
	})
	available := health.Available(health.AvailableInput{
		Previous: meta.FindStatusCondition(prev.Conditions, v1alpha1.ConditionAvailable), ResourcesHealthy: &healthy,
		Generation: generation, AllCurrent: true,
	})
	owner := []metav1.Condition{bp, submitted, healthy, ready, available}
	for _, c := range workitems.OwnerConditions(rules) {
		owner = append(owner, render.WithGeneration(c, generation))
	}
	if kstatus {
		owner = append(owner, health.KStatus(ready, healths)...)
	}
	st.Conditions = mergeConditions(prev.Conditions, owner, now)
	return st
}

// resourcesSubmitted is True when every resource was submitted; otherwise it carries
// the first False resource's reason and message, else the first Unknown one's. A
// deployment's verdict (ConditionNotMet, FailedConditionMet) is named by resource, as
// Cartographer words it.
func resourcesSubmitted(res []*render.Result) metav1.Condition {
	c := metav1.Condition{Type: v1alpha1.ConditionResourcesSubmitted, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonResourceSubmissionComplete}
	for _, want := range []metav1.ConditionStatus{metav1.ConditionFalse, metav1.ConditionUnknown} {
		for _, r := range res {
			if r.Submitted.Status != want {
				continue
			}
			c.Status, c.Reason, c.Message = want, r.Submitted.Reason, r.Submitted.Message
			switch r.Submitted.Reason {
			case v1alpha1.ReasonConditionNotMet:
				c.Message = fmt.Sprintf("resource [%s] condition not met: %s", r.Status.Name, r.Submitted.Message)
			case v1alpha1.ReasonFailedConditionMet:
				c.Message = fmt.Sprintf("resource [%s] failed condition met: %s", r.Status.Name, r.Submitted.Message)
			}
			return c
		}
	}
	return c
}

// statusWriter is the one way a status is written: an owner's by the owner reconciler, the
// blueprint reconciler (an owner's rollout record, which only it writes) and the panic path
// alike, a Runnable's by the Runnable reconciler, a blueprint's and a template's by their
// reconcilers. It writes the whole status, with the resourceVersion it was computed from, so a
// status computed from a stale copy loses to a newer one (a conflict, which every caller
// answers by looking again) instead of overwriting it.
type statusWriter interface {
	// update writes obj's status and sets its resourceVersion to the one written.
	update(ctx context.Context, obj v1alpha1.Object) error
}

// restStatusWriter writes statuses of one kind through a plain REST client: the body is the
// object with its new status, and of the answer only the new resourceVersion is read. A
// typed client would decode the whole object back, and a merge patch would diff two.
type restStatusWriter struct {
	rest     rest.Interface
	gvk      schema.GroupVersionKind
	resource string
	// namespaced: the kind lives in a namespace. A request to a cluster-scoped kind names
	// none (the REST client refuses an empty namespace together with a name).
	namespaced bool
}

func newStatusWriter(mgr ctrl.Manager, kind *v1alpha1.KindInfo) (statusWriter, error) {
	cfg := rest.CopyConfig(mgr.GetConfig())
	cfg.GroupVersion = &v1alpha1.GroupVersion
	cfg.APIPath = "/apis"
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(mgr.GetScheme()).WithoutConversion()
	rc, err := rest.RESTClientForConfigAndClient(cfg, mgr.GetHTTPClient())
	if err != nil {
		return nil, err
	}
	return &restStatusWriter{rest: rc, gvk: v1alpha1.GroupVersion.WithKind(kind.Kind), resource: kind.Resource, namespaced: kind.Namespaced}, nil
}

// metadataOnly asks the API server to answer a write with the object's metadata alone,
// or, failing that, with the object: the status read back is never decoded, so there is
// no reason to have it sent (docs/performance.md, "What changed (issue 15)", has the sizes).
const metadataOnly = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

func (w *restStatusWriter) update(ctx context.Context, obj v1alpha1.Object) error {
	obj.GetObjectKind().SetGroupVersionKind(w.gvk)
	body, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	req := w.rest.Put()
	if w.namespaced {
		req = req.Namespace(obj.GetNamespace())
	}
	raw, err := req.Resource(w.resource).Name(obj.GetName()).
		SubResource("status").SetHeader("Accept", metadataOnly).Body(body).Do(ctx).Raw()
	if err != nil {
		return err
	}
	var answer struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return fmt.Errorf("reading the answer to a status write: %w", err)
	}
	obj.SetResourceVersion(answer.Metadata.ResourceVersion)
	return nil
}
