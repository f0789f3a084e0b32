package realizer

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"

	"github.com/surveyor-dev/surveyor/internal/echo"
	"github.com/surveyor-dev/surveyor/pkg/render"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

// Writes never loop on what the API server does to a stamp (DESIGN §3.5). The reconciler
// skips a write when the live object holds every stamped field (stamp.Contains), but a
// server keeps some stamps otherwise: a field a newer CRD version no longer has is dropped
// (Cartographer's examples stamp a v1beta1 GitRepository with spec.gitImplementation, which
// the v1 storage version prunes, and every apply that sends it bumps the generation), a
// conversion renames a field, a webhook defaults or rewrites one. Such an object never
// holds its stamp, and applying it again changes nothing but the generation.
//
// So the reconciler compares such an object with what the server made of the stamp: the
// values the apply's answer held at the stamped paths (stamp.Project). While the live
// object still holds them, the stamp is applied and nothing is written; an edit by someone
// else at a stamped path shows as a difference and is corrected by the next apply. What
// the server made of a stamp is learnt from the answer of each apply; when the reconciler
// has no answer for the stamp (after a restart, or for an object another controller
// stamped), a server-side dry run of the apply gives it, without a write.
//
// The other ways considered: comparing with the whole answer (minus status) would count
// every other controller's metadata write as drift, one more write each; keeping the
// answer's projection in an annotation would take a second write per change; a dry run on
// every reconcile would cost an API call per object and reconcile, where this one is made
// once per stamp and process.

// answersSize bounds the remembered answers. Only objects the server keeps otherwise than
// stamped are remembered; one evicted costs a dry run, never a write.
const answersSize = 16384

// answers remembers, per stamped object, what the API server made of its last stamp.
type answers struct{ cache *lru.Cache }

func newAnswers() answers { return answers{cache: lru.New(answersSize)} }

// answer is what the server made of one stamp of one object.
type answer struct {
	uid    types.UID
	digest string
	// held are the answer's values at the stamp's paths (stamp.Project).
	held map[string]any
}

// holds tells whether live still holds what the server made of the stamp with digest.
func (a answers) holds(live *unstructured.Unstructured, digest string) bool {
	v, ok := a.cache.Get(echo.ObjectKey(live))
	if !ok {
		return false
	}
	ans := v.(answer)
	return ans.uid == live.GetUID() && ans.digest == digest && stamp.Contains(live.Object, ans.held)
}

// learn records what the server answered (got) to an apply of the stamp stored (asStored of
// what was sent), or forgets the object when the answer holds the stamp itself: Contains
// then decides. The digest is the answer's, which is the one sent.
func (a answers) learn(got, stored *unstructured.Unstructured) {
	key := echo.ObjectKey(got)
	if stamp.Contains(got.Object, stored.Object) {
		a.cache.Remove(key)
		return
	}
	a.cache.Add(key, answer{
		uid:    got.GetUID(),
		digest: got.GetAnnotations()[render.AnnotationStampDigest],
		held:   stamp.Project(got.Object, stored.Object),
	})
}

// applied tells whether applying obj would leave live as it is at every path of stored (the
// fields of obj to compare, as the server stores them). It holds them
// (the common case), or what the server made of it when last applied; failing both, a dry
// run of the apply asks the server. An error of the dry run answers false: the apply that
// follows meets it too and reports it.
func (rz *realization) applied(obj, stored, live *unstructured.Unstructured) bool {
	if stamp.Contains(live.Object, stored.Object) {
		return true
	}
	answers := rz.r.answers
	if answers.holds(live, obj.GetAnnotations()[render.AnnotationStampDigest]) {
		return true
	}
	got, err := rz.serverSideApply(obj, true)
	if err != nil || got.GetUID() != live.GetUID() {
		return false
	}
	if !stamp.Contains(live.Object, stamp.Project(got.Object, stored.Object)) {
		return false
	}
	answers.learn(got, stored)
	return true
}
