package realizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

func revisionFixture() (*v1alpha1.ClusterSupplyChain, []v1alpha1.Template) {
	sc := &v1alpha1.ClusterSupplyChain{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 4},
		Spec: v1alpha1.ClusterSupplyChainSpec{
			OwnerSelector:   v1alpha1.OwnerSelector{Selector: map[string]string{"app": "web"}},
			RolloutStrategy: &v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll},
			Resources: []v1alpha1.SupplyChainResource{
				{Name: "config", TemplateRef: v1alpha1.SupplyChainTemplateReference{Kind: v1alpha1.KindClusterConfigTemplate, Name: "cfg"}},
				{Name: "app", TemplateRef: v1alpha1.SupplyChainTemplateReference{Kind: v1alpha1.KindClusterTemplate, Name: "app"}},
			},
		},
	}
	cfg := &v1alpha1.ClusterConfigTemplate{}
	mustUnmarshal(`{"metadata":{"name":"cfg","generation":2},"spec":{"configPath":".data",
		"template":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}}}`, cfg)
	app := &v1alpha1.ClusterTemplate{}
	mustUnmarshal(`{"metadata":{"name":"app","generation":7},"spec":{"params":[{"name":"replicas","default":2}],
		"template":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}}}`, app)
	return sc, []v1alpha1.Template{cfg, app}
}

func mustUnmarshal(doc string, into any) {
	if err := json.Unmarshal([]byte(doc), into); err != nil {
		panic(err)
	}
}

// TestRevisionIsContentAddressed: the same blueprint and templates always give the same
// revision, whatever the order the templates come in and whatever the rollout strategy, and a
// change to a template gives another.
func TestRevisionIsContentAddressed(t *testing.T) {
	sc, templates := revisionFixture()
	rev, err := newRevision(v1alpha1.SupplyChains, sc, templates)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rev.Name, "web-") || len(rev.Name) != len("web-")+revisionHashLen || !strings.HasPrefix(rev.Spec.Hash, rev.Name[len("web-"):]) {
		t.Errorf("name %q, hash %q: want web- and the hash's first %d digits", rev.Name, rev.Spec.Hash, revisionHashLen)
	}
	if got := rev.Labels; got[v1alpha1.LabelBlueprintKind] != v1alpha1.KindClusterSupplyChain || got[v1alpha1.LabelBlueprintName] != "web" {
		t.Errorf("labels %v", got)
	}
	if strings.Contains(string(rev.Spec.BlueprintSpec.Raw), "rolloutStrategy") {
		t.Errorf("the revision holds the rollout strategy: %s", rev.Spec.BlueprintSpec.Raw)
	}

	sc2, templates2 := revisionFixture()
	sc2.Spec.RolloutStrategy = &v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressive, Paused: true}
	sc2.Generation = 9
	same, err := newRevision(v1alpha1.SupplyChains, sc2, []v1alpha1.Template{templates2[1], templates2[0]})
	if err != nil {
		t.Fatal(err)
	}
	if same.Name != rev.Name {
		t.Errorf("reordered templates and another strategy gave %s, want %s", same.Name, rev.Name)
	}

	_, templates3 := revisionFixture()
	templates3[1].(*v1alpha1.ClusterTemplate).Spec.Params[0].Default.Raw = []byte(`3`)
	other, err := newRevision(v1alpha1.SupplyChains, sc, templates3)
	if err != nil {
		t.Fatal(err)
	}
	if other.Name == rev.Name {
		t.Errorf("a changed template gave the same revision %s", rev.Name)
	}
}

// TestBlueprintAtRevision: a blueprint read from a revision has the revision's resources and
// templates, and the live blueprint's identity and status.
func TestBlueprintAtRevision(t *testing.T) {
	sc, templates := revisionFixture()
	rev, err := newRevision(v1alpha1.SupplyChains, sc, templates)
	if err != nil {
		t.Fatal(err)
	}
	live := render.BlueprintOf(sc.DeepCopy())
	live.Resources = live.Resources[:1] // the blueprint has changed since
	bp, err := blueprintAt(v1alpha1.SupplyChains, live, rev)
	if err != nil {
		t.Fatal(err)
	}
	if bp.Revision != rev.Name || bp.Name != "web" || bp.Generation != 4 || bp.Status != live.Status || bp.Strategy != live.Strategy {
		t.Errorf("blueprint %+v: want the revision's name and the live identity", bp)
	}
	if got := len(bp.Resources); got != 2 {
		t.Errorf("%d resources, want the revision's 2", got)
	}
	rz := &realization{bp: bp}
	got, err := rz.template(v1alpha1.KindClusterTemplate, "app")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(templates[1].(*v1alpha1.ClusterTemplate).Spec, got.(*v1alpha1.ClusterTemplate).Spec); diff != "" {
		t.Errorf("template from the revision differs (-want +got):\n%s", diff)
	}
	if _, err := rz.template(v1alpha1.KindClusterTemplate, "gone"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("a template the revision does not hold: %v, want not found", err)
	}
}

// asStoredRevision is rev as the API server gives it back: its JSON decoded into maps and
// encoded again, so every object's keys come back sorted, whatever order they were written in.
func asStoredRevision(t *testing.T, rev *v1alpha1.BlueprintRevision) *v1alpha1.BlueprintRevision {
	t.Helper()
	doc, err := json.Marshal(rev)
	if err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	if err := json.Unmarshal(doc, &generic); err != nil {
		t.Fatal(err)
	}
	if doc, err = json.Marshal(generic); err != nil {
		t.Fatal(err)
	}
	out := &v1alpha1.BlueprintRevision{}
	if err := json.Unmarshal(doc, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRevisionTrust: a revision is trusted for a blueprint only when it is that blueprint's
// (spec, labels and owner reference, with the blueprint's uid) and its content hashes to its
// hash and name (DESIGN §12). Anything else, whoever wrote it, is an untrustedRevisionError
// saying what is wrong.
func TestRevisionTrust(t *testing.T) {
	sc, templates := revisionFixture()
	sc.UID = "uid-web"
	good, err := newRevision(v1alpha1.SupplyChains, sc, templates)
	if err != nil {
		t.Fatal(err)
	}
	other, otherTemplates := revisionFixture()
	other.Name, other.UID = "admin", "uid-admin"
	otherRev, err := newRevision(v1alpha1.SupplyChains, other, otherTemplates)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		rev  func() *v1alpha1.BlueprintRevision
		uid  string
		want string // in the error; "" for trusted
	}{
		{name: "its own, as stored", rev: func() *v1alpha1.BlueprintRevision { return asStoredRevision(t, good) }},
		{name: "another blueprint's", rev: func() *v1alpha1.BlueprintRevision { return otherRev.DeepCopy() },
			want: "it is a revision of ClusterSupplyChain [admin]"},
		{name: "another blueprint's relabelled as this one's", want: "its content hashes to", rev: func() *v1alpha1.BlueprintRevision {
			r := otherRev.DeepCopy()
			r.Name = good.Name
			r.Spec.Blueprint.Name = "web"
			r.Labels[v1alpha1.LabelBlueprintName] = "web"
			r.OwnerReferences = good.OwnerReferences
			return r
		}},
		{name: "labels of another blueprint", want: "its labels name ClusterSupplyChain [admin]", rev: func() *v1alpha1.BlueprintRevision {
			r := good.DeepCopy()
			r.Labels[v1alpha1.LabelBlueprintName] = "admin"
			return r
		}},
		{name: "owned by an earlier blueprint of that name", want: "not owned by this ClusterSupplyChain", rev: func() *v1alpha1.BlueprintRevision {
			r := good.DeepCopy()
			r.OwnerReferences[0].UID = "uid-earlier"
			return r
		}},
		{name: "no owner", want: "not owned by this ClusterSupplyChain", uid: "-", rev: func() *v1alpha1.BlueprintRevision {
			r := good.DeepCopy()
			r.OwnerReferences = nil
			return r
		}},
		{name: "a template changed under the same hash", want: "its content hashes to", rev: func() *v1alpha1.BlueprintRevision {
			r := good.DeepCopy()
			r.Spec.Templates[1].Spec.Raw = []byte(`{"template":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"a"}}}`)
			return r
		}},
		{name: "hash and content changed, name kept", want: "does not match its hash and name", rev: func() *v1alpha1.BlueprintRevision {
			_, changed := revisionFixture()
			changed[1].(*v1alpha1.ClusterTemplate).Spec.Params[0].Default.Raw = []byte(`3`)
			r, err := newRevision(v1alpha1.SupplyChains, sc, changed)
			if err != nil {
				t.Fatal(err)
			}
			r.Name = good.Name
			return r
		}},
		{name: "unreadable template kind", want: "unknown template kind", rev: func() *v1alpha1.BlueprintRevision {
			r := good.DeepCopy()
			r.Spec.Templates[0].Kind = "Pod"
			return r
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uid := sc.UID
			if tt.uid == "-" {
				uid = ""
			}
			_, _, err := trustedContent(v1alpha1.SupplyChains, "web", uid, tt.rev())
			var untrusted *untrustedRevisionError
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("untrusted: %v", err)
			case tt.want != "" && (!errors.As(err, &untrusted) || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want an untrustedRevisionError saying %q", err, tt.want)
			}
		})
	}
}

// TestUnneededRevisions: the newest ten revisions stay, and so does any older one an owner or
// the blueprint still needs; the rest go.
func TestUnneededRevisions(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var revs []v1alpha1.BlueprintRevision
	for i := range 14 { // r00 oldest .. r13 newest, listed in no particular order
		rev := v1alpha1.BlueprintRevision{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("r%02d", (i*5)%14), CreationTimestamp: metav1.NewTime(t0.Add(time.Duration((i*5)%14) * time.Minute)),
		}}
		revs = append(revs, rev)
	}
	var got []string
	for _, rev := range unneededRevisions(revs, map[string]bool{"r01": true, "r12": true, "": true}) {
		got = append(got, rev.Name)
	}
	slices.Sort(got)
	if want := []string{"r00", "r02", "r03"}; !slices.Equal(got, want) {
		t.Errorf("unneeded %v, want %v", got, want)
	}
	if got := unneededRevisions(revs[:keepRevisions], nil); got != nil {
		t.Errorf("with %d revisions, unneeded %v, want none", keepRevisions, got)
	}
}
