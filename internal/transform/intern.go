package transform

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// The decoder gives every cached object its own copy of each string, though most of
// them are shared by all objects: label keys, condition types, reasons and statuses,
// kinds and API versions. The cache transform below replaces those with one shared
// copy as objects enter the cache (docs/performance.md, "What changed (issue 15)", has what it saves
// per object). Strings that differ per object
// (names, messages, digests) are left alone, so the table stays small.

// internTable holds the shared copies of at most limit strings. Condition types and
// reasons come from users' rules, and revision names change with every blueprint
// change, so the strings worth sharing are not a closed set: the table evicts what is
// no longer used instead of keeping the first strings it saw forever.
//
// It keeps two generations, each of up to limit/2 strings: a string is looked up in
// the current one, then in the previous one, from which it moves to the current one.
// When the current generation is full it becomes the previous one and the old previous
// one is dropped, so a string no object has entered the cache with for a whole
// generation is forgotten. That is a clock with one bit per string, at the cost of two
// map lookups, and no per-string bookkeeping (an LRU list would double the table's
// size for strings of a few bytes).
type internTable struct {
	mu            sync.Mutex
	current, prev map[string]string
	limit         int
}

// newInternTable is an empty table of at most limit strings (limit ≥ 2).
func newInternTable(limit int) *internTable {
	return &internTable{current: make(map[string]string, limit/2), limit: limit}
}

var interned = newInternTable(4096)

// intern is s's shared copy.
func intern(s string) string { return interned.intern(s) }

func (t *internTable) intern(s string) string {
	if s == "" {
		return s
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if v, ok := t.current[s]; ok {
		return v
	}
	v, ok := t.prev[s]
	if !ok {
		v = s
	}
	if len(t.current) >= t.limit/2 {
		t.prev, t.current = t.current, make(map[string]string, t.limit/2)
	}
	t.current[s] = v
	return v
}

// len is how many strings the table holds.
func (t *internTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.current) + len(t.prev)
}

// sharedLabelValues are the labels Surveyor stamps whose values many objects share.
var sharedLabelValues = map[string]bool{
	v1alpha1.LabelWorkloadNamespace: true, v1alpha1.LabelDeliverableNamespace: true,
	v1alpha1.LabelSupplyChainName: true, v1alpha1.LabelDeliveryName: true,
	v1alpha1.LabelResourceName: true, v1alpha1.LabelTemplateKind: true, v1alpha1.LabelClusterTemplateName: true,
}

// internMeta shares the strings of an object's metadata that many objects hold: its
// namespace, label and annotation keys, Surveyor's shared label values, and the kinds
// of its owners.
func internMeta(obj metav1.Object) {
	obj.SetNamespace(intern(obj.GetNamespace()))
	if labels := obj.GetLabels(); len(labels) > 0 {
		shared := make(map[string]string, len(labels))
		for k, v := range labels {
			if sharedLabelValues[k] {
				v = intern(v)
			}
			shared[intern(k)] = v
		}
		obj.SetLabels(shared)
	}
	if annotations := obj.GetAnnotations(); len(annotations) > 0 {
		shared := make(map[string]string, len(annotations))
		for k, v := range annotations {
			shared[intern(k)] = v
		}
		obj.SetAnnotations(shared)
	}
	if refs := obj.GetOwnerReferences(); len(refs) > 0 {
		for i := range refs {
			refs[i].APIVersion, refs[i].Kind = intern(refs[i].APIVersion), intern(refs[i].Kind)
		}
		obj.SetOwnerReferences(refs)
	}
}

// internStatus shares the strings of an owner's status that owners of one blueprint
// hold alike.
func internStatus(st *v1alpha1.OwnerStatus) {
	internConditions(st.Conditions)
	st.BlueprintRevision = intern(st.BlueprintRevision)
	for i := range st.Resources {
		rs := &st.Resources[i]
		rs.Name = intern(rs.Name)
		if ref := rs.StampedRef; ref != nil {
			ref.APIVersion, ref.Kind, ref.Namespace, ref.Resource = intern(ref.APIVersion), intern(ref.Kind), intern(ref.Namespace), intern(ref.Resource)
		}
		if ref := rs.TemplateRef; ref != nil {
			ref.APIVersion, ref.Kind, ref.Name = intern(ref.APIVersion), intern(ref.Kind), intern(ref.Name)
		}
		for j := range rs.Inputs {
			rs.Inputs[j].Name = intern(rs.Inputs[j].Name)
		}
		for j := range rs.Outputs {
			rs.Outputs[j].Name = intern(rs.Outputs[j].Name)
		}
		internConditions(rs.Conditions)
	}
}

func internConditions(conditions []metav1.Condition) {
	for i := range conditions {
		c := &conditions[i]
		c.Type, c.Status, c.Reason = intern(c.Type), metav1.ConditionStatus(intern(string(c.Status))), intern(c.Reason)
	}
}

var stripManagedFields = cache.TransformStripManagedFields()

// Intern is a cache transform: it strips managedFields, which no code reads,
// and shares the strings of owners and stamped objects.
func Intern(obj any) (any, error) {
	obj, err := stripManagedFields(obj)
	if err != nil {
		return obj, err
	}
	if m, err := meta.Accessor(obj); err == nil {
		internMeta(m)
	}
	if owner, ok := obj.(v1alpha1.Owner); ok {
		internStatus(owner.GetOwnerStatus())
		if ref := owner.GetBlueprintRef(); ref != nil {
			ref.Kind, ref.Name = intern(ref.Kind), intern(ref.Name)
		}
	}
	return obj, nil
}
