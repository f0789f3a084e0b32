package realizer

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/internal/watch"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

// annotationStampedAt orders the objects of an immutable resource: the time, to the
// nanosecond, at which the realizer created each one (creationTimestamp has only
// seconds, and two changes can come within one).
const annotationStampedAt = "carto.run/stamped-at"

// createImmutable realizes a resource whose template is immutable: it creates a new
// object (named by the template's generateName) unless the newest object of the
// resource was stamped from the same content, and returns the newest object. Old
// objects are never updated; the oldest finished ones beyond the template's retention
// policy are deleted.
func (rz *realization) createImmutable(res *v1alpha1.BlueprintResource, tpl render.Template, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	objects, err := rz.immutableObjects(res, obj)
	if err != nil {
		return nil, err
	}
	newest := len(objects) - 1
	if newest < 0 || objects[newest].GetAnnotations()[render.AnnotationStampDigest] != obj.GetAnnotations()[render.AnnotationStampDigest] {
		created := stampedAt(obj, rz.r.now())
		if err := rz.create(rz.ctx, created); err != nil {
			return nil, err
		}
		rz.r.created.remember(rz.owner, res.Name, created)
		rz.events.Add(v1alpha1.EventStampedObjectApplied, "Created %s/%s for resource [%s]", created.GetKind(), created.GetName(), res.Name)
		objects = append(objects, created)
	}
	rz.retain(res, tpl, objects)
	return objects[len(objects)-1], nil
}

// immutableObjects lists the objects stamped for the resource, oldest first (see
// stampedObjects).
func (rz *realization) immutableObjects(res *v1alpha1.BlueprintResource, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	labels := client.MatchingLabels{
		rz.r.kind.Labels.Name:      rz.owner.GetName(),
		rz.r.kind.Labels.Namespace: rz.owner.GetNamespace(),
		v1alpha1.LabelResourceName: res.Name,
	}
	return stampedObjects(rz.ctx, rz.r.stamped, &rz.r.created, rz.owner, res.Name, obj.GroupVersionKind(), labels)
}

// stampedObjects lists the gvk objects in owner's namespace that carry labels and that
// owner controls, oldest first, from the label-filtered cache read, plus the one this
// process created last under owner and key if the cache has not seen it yet (so a quick
// second reconcile cannot create a duplicate). Immutable objects and Runnables' runs alike.
func stampedObjects(ctx context.Context, read watch.StampedReader, created *createdObjects, owner client.Object, key string, gvk schema.GroupVersionKind, labels client.MatchingLabels) ([]*unstructured.Unstructured, error) {
	listed, err := read.List(ctx, gvk, client.InNamespace(owner.GetNamespace()), labels)
	if err != nil {
		return nil, err
	}
	var objects []*unstructured.Unstructured
	for _, o := range listed {
		if metav1.IsControlledBy(o, owner) {
			objects = append(objects, o)
		}
	}
	if last := created.get(owner, key); last != nil {
		seen := slices.ContainsFunc(objects, func(o *unstructured.Unstructured) bool { return o.GetName() == last.GetName() })
		if seen {
			created.forget(owner, key)
		} else if last.GroupVersionKind() == gvk {
			objects = append(objects, last)
		}
	}
	slices.SortStableFunc(objects, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(
			a.GetCreationTimestamp().Compare(b.GetCreationTimestamp().Time),
			cmp.Compare(a.GetAnnotations()[annotationStampedAt], b.GetAnnotations()[annotationStampedAt]),
			cmp.Compare(a.GetName(), b.GetName()),
		)
	})
	return objects, nil
}

// stampedAt is a copy of obj to create, annotated with the time it was stamped, which
// orders it among its kin to the nanosecond.
func stampedAt(obj *unstructured.Unstructured, now metav1.Time) *unstructured.Unstructured {
	created := obj.DeepCopy()
	annotations := created.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[annotationStampedAt] = now.UTC().Format(time.RFC3339Nano)
	created.SetAnnotations(annotations)
	return created
}

// retain deletes the oldest finished objects beyond the template's retention policy
// (writer.retain): a healthy object is a successful run, an unhealthy one a failed run, and
// one whose health is unknown is still running and kept. A failed delete is tried again
// on the next pass, which the owner is re-queued for (rz.retention).
func (rz *realization) retain(res *v1alpha1.BlueprintResource, tpl render.Template, objects []*unstructured.Unstructured) {
	policy := v1alpha1.DefaultRetention
	if tpl.Spec.RetentionPolicy != nil {
		policy = *tpl.Spec.RetentionPolicy
	}
	verdict := func(o *unstructured.Unstructured) metav1.ConditionStatus {
		_, err := stamp.ReadOutputs(o, tpl.Outputs)
		return render.Health(o, tpl, err == nil, nil).Status
	}
	_, err := rz.writer.retain(rz.ctx, objects, policy, verdict, func(o *unstructured.Unstructured) {
		rz.events.Add(v1alpha1.EventStampedObjectRemoved, "Removed %s/%s of resource [%s]: beyond the retention policy", o.GetKind(), o.GetName(), res.Name)
	}, func(o *unstructured.Unstructured, err error) {
		rz.events.Warn(v1alpha1.EventStampedObjectRemovalFailed, "Resource [%s], beyond the retention policy: %s", res.Name, deleteFailure(refOf(o), err))
	})
	rz.retention = errors.Join(rz.retention, err)
}

// createdObjects remembers, per owner and resource, the immutable object this process
// created last, until the cache has seen it. An entry is needed for the moment between
// a create and its watch event (milliseconds, seconds under load), so the map is
// bounded: an owner's entries go when it is deleted or completes (forgetOwner), and
// past maxCreatedOwners owners the entries older than createdTTL go, then arbitrary
// ones. Losing an entry early costs at worst one duplicate object in that moment,
// which the retention policy deletes; keeping it forever costs memory for every owner
// that ever existed.
type createdObjects struct {
	mu sync.Mutex
	// owners are keyed by name, so that an owner that is gone (known by its name
	// alone) can be forgotten; uid tells a recreated owner from the old one.
	owners map[types.NamespacedName]*ownerCreated
	// max and ttl are maxCreatedOwners and createdTTL, smaller in tests.
	max int
	ttl time.Duration
	now func() time.Time
}

// maxCreatedOwners bounds the owners with an entry: as many as create an immutable
// object within createdTTL, with room to spare.
const maxCreatedOwners = 10000

// createdTTL is how long an entry outlives its create at most once the map is full: by
// then the object's watch event has long arrived.
const createdTTL = 5 * time.Minute

// ownerCreated is one owner's entries, by resource name.
type ownerCreated struct {
	uid       types.UID
	at        time.Time // of the last remember
	resources map[string]*unstructured.Unstructured
}

func (c *createdObjects) remember(owner client.Object, resource string, obj *unstructured.Unstructured) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.owners == nil {
		c.owners = map[types.NamespacedName]*ownerCreated{}
	}
	key := client.ObjectKeyFromObject(owner)
	now := c.clock()
	oc := c.owners[key]
	if oc == nil || oc.uid != owner.GetUID() {
		c.makeRoom()
		oc = &ownerCreated{uid: owner.GetUID(), resources: map[string]*unstructured.Unstructured{}}
		c.owners[key] = oc
	}
	oc.at = now
	oc.resources[resource] = obj
}

// makeRoom drops entries until there is room for one more owner; c.mu is held.
func (c *createdObjects) makeRoom() {
	limit, ttl := c.max, c.ttl
	if limit == 0 {
		limit, ttl = maxCreatedOwners, createdTTL
	}
	if len(c.owners) < limit {
		return
	}
	now := c.clock()
	for key, oc := range c.owners {
		if now.Sub(oc.at) > ttl {
			delete(c.owners, key)
		}
	}
	for key := range c.owners {
		if len(c.owners) < limit {
			break
		}
		delete(c.owners, key) // map order: an arbitrary one
	}
}

func (c *createdObjects) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

func (c *createdObjects) get(owner client.Object, resource string) *unstructured.Unstructured {
	c.mu.Lock()
	defer c.mu.Unlock()
	oc := c.owners[client.ObjectKeyFromObject(owner)]
	if oc == nil || oc.uid != owner.GetUID() {
		return nil
	}
	return oc.resources[resource]
}

func (c *createdObjects) forget(owner client.Object, resource string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := client.ObjectKeyFromObject(owner)
	if oc := c.owners[key]; oc != nil && oc.uid == owner.GetUID() {
		delete(oc.resources, resource)
		if len(oc.resources) == 0 {
			delete(c.owners, key)
		}
	}
}

// forgetOwner drops every entry of the owner named key: it is gone, being deleted or
// complete, so it creates nothing more.
func (c *createdObjects) forgetOwner(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.owners, key)
}

// len is how many owners have an entry.
func (c *createdObjects) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.owners)
}
