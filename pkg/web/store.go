package web

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/surveyor-dev/surveyor/pkg/view"
)

// Key names an object the store holds: an owner (Kind, Namespace, Name), a blueprint
// (Kind, Name), or, with only Kind set, the state of that kind's watch.
type Key struct {
	Kind      string
	Namespace string
	Name      string
}

// changeLog is how many changes the store remembers for streams that resume: one whose
// last event is older than that gets its page again, as it would with a new one.
const changeLog = 4096

// change is one numbered change to the store.
type change struct {
	seq uint64
	key Key
}

// KindState is how the watch of one kind is doing.
type KindState struct {
	Kind string
	// Synced is true once the first list arrived.
	Synced bool
	// Err is the last error of its list or watch, "" once it works again.
	Err string
}

// Store holds the owners, blueprints and Runnables the informers saw, numbers every change, and
// wakes the event streams. It is safe for concurrent use.
//
// Its writers are the informers' event handlers, which must never wait on a page: a
// handler that blocks holds up its informer's whole queue (DESIGN §12 allows it 10 ms at
// 10,000 owners). So a write is O(1) under mu and nothing slow ever holds mu. Each owner
// lives in a cell whose value is swapped atomically; the list reads cells in an order
// (ownerOrder) that is sorted outside mu, by one reader at a time, and only again after
// an owner was added or deleted: a change of status, by far the most common event,
// touches neither the order nor the lock for longer than a map lookup.
type Store struct {
	mu     sync.RWMutex
	owners map[Key]*ownerCell
	// ownersVersion counts the additions and deletions of owners: an ownerOrder of an
	// older version misses some.
	ownersVersion uint64
	// order is the owners sorted, as of some ownersVersion; sorting serializes the
	// readers that find it stale, so that 10,000 keys are sorted once, not once each.
	order   atomic.Pointer[ownerOrder]
	sorting sync.Mutex

	blueprints map[Key]view.Blueprint
	runnables  map[Key]view.Runnable
	kinds      map[string]*KindState
	// seq numbers the last change; log holds the last changeLog of them, oldest first.
	seq uint64
	log []change
	// changed is closed, and replaced, on every change.
	changed chan struct{}
	// epoch tells this store's event ids from those of an earlier run of the server.
	epoch string
}

// NewStore is an empty store.
func NewStore() *Store {
	return &Store{
		owners: map[Key]*ownerCell{}, blueprints: map[Key]view.Blueprint{}, runnables: map[Key]view.Runnable{}, kinds: map[string]*KindState{},
		changed: make(chan struct{}), epoch: strconv.FormatInt(time.Now().UnixNano(), 36),
	}
}

// record numbers a change to k and wakes the streams. The caller holds mu.
func (s *Store) record(k Key) {
	s.seq++
	if len(s.log) == changeLog {
		s.log = slices.Delete(s.log, 0, changeLog/4)
	}
	s.log = append(s.log, change{s.seq, k})
	close(s.changed)
	s.changed = make(chan struct{})
}

// ownerCell holds the latest version of one owner; nil once it was deleted, so that an
// order sorted before the deletion skips it.
type ownerCell struct {
	owner atomic.Pointer[view.Owner]
}

// ownerOrder is the owners in the list's order (namespace, name, kind), as of version.
type ownerOrder struct {
	version    uint64
	cells      []*ownerCell
	namespaces []string
}

// SetOwner adds or replaces an owner. It is O(1): an informer's handler calls it.
func (s *Store) SetOwner(o view.Owner) {
	k := Key{o.Kind, o.Namespace, o.Name}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.owners[k]
	if !ok {
		c = &ownerCell{}
		s.owners[k] = c
		s.ownersVersion++
	}
	c.owner.Store(&o)
	s.record(k)
}

// DeleteOwner removes an owner.
func (s *Store) DeleteOwner(k Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.owners[k]
	if !ok {
		return
	}
	c.owner.Store(nil)
	delete(s.owners, k)
	s.ownersVersion++
	s.record(k)
}

// sortedOwners is the owners' order as of now, sorted again when owners were added or
// deleted since the last one. mu is held only to copy the cells' pointers; the sort runs
// outside it.
func (s *Store) sortedOwners() *ownerOrder {
	s.mu.RLock()
	version := s.ownersVersion
	s.mu.RUnlock()
	if ord := s.order.Load(); ord != nil && ord.version == version {
		return ord
	}
	s.sorting.Lock()
	defer s.sorting.Unlock()
	type entry struct {
		key  Key
		cell *ownerCell
	}
	s.mu.RLock()
	version = s.ownersVersion
	if ord := s.order.Load(); ord != nil && ord.version == version {
		s.mu.RUnlock()
		return ord
	}
	entries := make([]entry, 0, len(s.owners))
	for k, c := range s.owners {
		entries = append(entries, entry{k, c})
	}
	s.mu.RUnlock()

	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(strings.Compare(a.key.Namespace, b.key.Namespace), strings.Compare(a.key.Name, b.key.Name), strings.Compare(a.key.Kind, b.key.Kind))
	})
	ord := &ownerOrder{version: version, cells: make([]*ownerCell, len(entries))}
	for i, e := range entries {
		ord.cells[i] = e.cell
		if i == 0 || e.key.Namespace != entries[i-1].key.Namespace {
			ord.namespaces = append(ord.namespaces, e.key.Namespace)
		}
	}
	s.order.Store(ord)
	return ord
}

// SetBlueprint adds or replaces a blueprint.
func (s *Store) SetBlueprint(bp view.Blueprint) {
	put(s, s.blueprints, Key{Kind: bp.Kind, Name: bp.Name}, bp)
}

// DeleteBlueprint removes a blueprint.
func (s *Store) DeleteBlueprint(k Key) { remove(s, s.blueprints, k) }

// put sets m[k], one of the store's maps, to v and records the change. It is O(1): an
// informer's handler calls it.
func put[V any](s *Store, m map[Key]V, k Key, v V) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m[k] = v
	s.record(k)
}

// remove deletes m[k], one of the store's maps, and records the change, if it was there.
func remove[V any](s *Store, m map[Key]V, k Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := m[k]; !ok {
		return
	}
	delete(m, k)
	s.record(k)
}

// SetKindState records how the watch of a kind is doing, when that changed.
func (s *Store) SetKindState(st KindState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.kinds[st.Kind]; ok && *old == st {
		return
	}
	s.kinds[st.Kind] = &st
	s.record(Key{Kind: st.Kind})
}

// KindState is how the watch of kind is doing; a kind never watched is not synced.
func (s *Store) KindState(kind string) KindState {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if st, ok := s.kinds[kind]; ok {
		return *st
	}
	return KindState{Kind: kind}
}

// Owner is the owner k, if the store has it.
func (s *Store) Owner(k Key) (view.Owner, bool) {
	s.mu.RLock()
	c, ok := s.owners[k]
	s.mu.RUnlock()
	if !ok {
		return view.Owner{}, false
	}
	o := c.owner.Load()
	if o == nil {
		return view.Owner{}, false
	}
	return *o, true
}

// Blueprint is the blueprint k, if the store has it.
func (s *Store) Blueprint(k Key) (view.Blueprint, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	bp, ok := s.blueprints[k]
	return bp, ok
}

// Owners are the owners that keep returns true for, by namespace, name and kind, each
// as the store last had it. It holds no lock while it reads them: the informers' handlers
// go on meanwhile, and an owner changed during the call is read in either version.
func (s *Store) Owners(keep func(view.Owner) bool) []view.Owner {
	var out []view.Owner
	for _, c := range s.sortedOwners().cells {
		if o := c.owner.Load(); o != nil && keep(*o) {
			out = append(out, *o)
		}
	}
	return out
}

// Namespaces are the namespaces of the owners, sorted.
func (s *Store) Namespaces() []string { return s.sortedOwners().namespaces }

// Position is the number of the last change and a channel closed at the next one: wait
// on the channel, then ask ChangedSince.
func (s *Store) Position() (uint64, <-chan struct{}) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.seq, s.changed
}

// ChangedSince reports whether a change after seq touched a key that relevant accepts.
// Changes older than the log count as changed.
func (s *Store) ChangedSince(seq uint64, relevant func(Key) bool) bool {
	return s.ChangedBetween(seq, math.MaxUint64, relevant)
}

// ChangedBetween reports whether a change after from and up to to touched a key that
// relevant accepts. Changes older than the log count as changed.
func (s *Store) ChangedBetween(from, to uint64, relevant func(Key) bool) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	to = min(to, s.seq)
	if from >= to {
		return false
	}
	if len(s.log) == 0 || from+1 < s.log[0].seq {
		return true
	}
	for i := len(s.log) - 1; i >= 0 && s.log[i].seq > from; i-- {
		if s.log[i].seq <= to && relevant(s.log[i].key) {
			return true
		}
	}
	return false
}

// EventID is the id of the event that shows the store as of change seq.
func (s *Store) EventID(seq uint64) string { return fmt.Sprintf("%s-%d", s.epoch, seq) }

// ParseEventID is the change an event id of this store stands for; false for an id of
// another run of the server, or none.
func (s *Store) ParseEventID(id string) (uint64, bool) {
	epoch, n, ok := strings.Cut(id, "-")
	if !ok || epoch != s.epoch {
		return 0, false
	}
	seq, err := strconv.ParseUint(n, 10, 64)
	if err != nil {
		return 0, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return seq, seq <= s.seq
}
