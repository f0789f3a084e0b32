package realizer

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

func revisionFixture() (*v1alpha1.ClusterSupplyChain, []client.Object) {
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
	return sc, []client.Object{cfg, app}
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
	rev, err := newRevision(supplyChainKind, sc, templates)
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
	same, err := newRevision(supplyChainKind, sc2, []client.Object{templates2[1], templates2[0]})
	if err != nil {
		t.Fatal(err)
	}
	if same.Name != rev.Name {
		t.Errorf("reordered templates and another strategy gave %s, want %s", same.Name, rev.Name)
	}

	_, templates3 := revisionFixture()
	templates3[1].(*v1alpha1.ClusterTemplate).Spec.Params[0].Default.Raw = []byte(`3`)
	other, err := newRevision(supplyChainKind, sc, templates3)
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
	rev, err := newRevision(supplyChainKind, sc, templates)
	if err != nil {
		t.Fatal(err)
	}
	live := supplyChainKind.of(sc.DeepCopy())
	live.resources = live.resources[:1] // the blueprint has changed since
	bp, err := blueprintAt(supplyChainKind, live, rev)
	if err != nil {
		t.Fatal(err)
	}
	if bp.revision != rev.Name || bp.name != "web" || bp.generation != 4 || bp.status != live.status || bp.strategy != live.strategy {
		t.Errorf("blueprint %+v: want the revision's name and the live identity", bp)
	}
	if got := len(bp.resources); got != 2 {
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
