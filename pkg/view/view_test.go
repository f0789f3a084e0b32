package view_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/view"
)

func cond(t string, s metav1.ConditionStatus, gen int64) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, ObservedGeneration: gen, Reason: "Test"}
}

// owner is a Workload at generation gen whose status is for observed, with conds.
func owner(gen, observed int64, conds ...metav1.Condition) view.Owner {
	return view.Owner{Kind: v1alpha1.KindWorkload, Namespace: "dev", Name: "app", Generation: gen,
		Status: v1alpha1.OwnerStatus{ObservedGeneration: observed, Conditions: conds}}
}

const (
	True    = metav1.ConditionTrue
	False   = metav1.ConditionFalse
	Unknown = metav1.ConditionUnknown
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name  string
		owner view.Owner
		goal  view.Goal
		want  view.Outcome
	}{
		{"ready at the current generation", owner(2, 2, cond("Ready", True, 2)), view.GoalReady, view.Met},
		{"ready at an older generation is never enough", owner(3, 2, cond("Ready", True, 2)), view.GoalReady, view.Waiting},
		{"ready condition older than the status", owner(3, 3, cond("Ready", True, 2)), view.GoalReady, view.Waiting},
		{"unknown at the current generation waits", owner(2, 2, cond("Ready", Unknown, 2)), view.GoalReady, view.Waiting},
		{"false at the current generation fails fast", owner(2, 2, cond("Ready", False, 2)), view.GoalReady, view.Failed},
		{"false at an older generation waits for the new one", owner(3, 2, cond("Ready", False, 2)), view.GoalReady, view.Waiting},
		{"available at the last good generation during a rollout",
			owner(3, 3, cond("Ready", Unknown, 3), cond("Available", True, 2)), view.GoalAvailable, view.Met},
		{"available wins over a failing new generation",
			owner(3, 3, cond("Ready", False, 3), cond("Available", True, 2)), view.GoalAvailable, view.Met},
		{"never available and failing", owner(1, 1, cond("Ready", False, 1), cond("Available", False, 0)), view.GoalAvailable, view.Failed},
		{"not yet available", owner(1, 1, cond("Ready", Unknown, 1), cond("Available", False, 0)), view.GoalAvailable, view.Waiting},
		{"complete, even unhealthy", owner(1, 1, cond("Ready", False, 1), cond("Complete", True, 1)), view.GoalComplete, view.Met},
		{"complete but the spec changed since", owner(2, 1, cond("Complete", True, 1)), view.GoalComplete, view.Waiting},
		{"no status yet", owner(1, 0), view.GoalReady, view.Waiting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := view.Check(tt.owner, tt.goal); got != tt.want {
				t.Errorf("Check(--for=%s) = %d, want %d", tt.goal, got, tt.want)
			}
		})
	}
}

func TestTreeFollowsInputs(t *testing.T) {
	res := func(name string, inputs ...string) v1alpha1.ResourceStatus {
		r := v1alpha1.ResourceStatus{Name: name}
		for _, in := range inputs {
			r.Inputs = append(r.Inputs, v1alpha1.Input{Name: in})
		}
		return r
	}
	o := owner(1, 1)
	o.Status.Resources = []v1alpha1.ResourceStatus{
		res("source"), res("image", "source"), res("config", "image", "source"), res("deploy", "config"), res("cycle", "later"), res("later"),
	}
	var b strings.Builder
	var walk func(nodes []*view.Node, depth int)
	walk = func(nodes []*view.Node, depth int) {
		for _, n := range nodes {
			b.WriteString(strings.Repeat("  ", depth) + n.Resource.Name)
			if len(n.AlsoReads) > 0 {
				b.WriteString(" +" + strings.Join(n.AlsoReads, ","))
			}
			b.WriteString("\n")
			walk(n.Children, depth+1)
		}
	}
	walk(view.Tree(o), 0)
	want := "source\n  image\n    config +source\n      deploy\ncycle +later\nlater\n"
	if b.String() != want {
		t.Errorf("tree:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestProblems(t *testing.T) {
	stale := owner(3, 2, cond("Ready", True, 2))
	if p := view.Problems(stale); len(p) != 1 || !strings.Contains(p[0].Condition.Message, "has not observed generation 3") {
		t.Errorf("a status behind the spec: %+v", p)
	}
	ready := owner(2, 2, cond("Ready", True, 2))
	if p := view.Problems(ready); len(p) != 0 {
		t.Errorf("a Ready owner has problems: %+v", p)
	}
	broken := owner(1, 1, cond("SupplyChainReady", True, 1), cond("Ready", False, 1))
	broken.Status.Resources = []v1alpha1.ResourceStatus{
		{Name: "ok", Conditions: []metav1.Condition{cond("ResourceSubmitted", True, 1), cond("Healthy", True, 1), cond("Ready", True, 1)}},
		{Name: "bad", StampedRef: &v1alpha1.StampedRef{Kind: "ConfigMap", Name: "bad"},
			Conditions: []metav1.Condition{cond("ResourceSubmitted", Unknown, 1), cond("Healthy", False, 1), cond("Ready", False, 1)}},
	}
	p := view.Problems(broken)
	if len(p) != 1 || p[0].Resource != "bad" || p[0].Object != "ConfigMap/bad" || p[0].Condition.Type != "Healthy" {
		t.Errorf("the False condition decides before the Unknown one: %+v", p)
	}
}

func TestColour(t *testing.T) {
	var b strings.Builder
	o := owner(2, 2, cond("Ready", True, 2), cond("Available", False, 0))
	if err := view.PrintList(&b, v1alpha1.KindWorkload, []view.Owner{o}, view.ListOptions{Options: view.Options{Color: true}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[1], "\x1b[32mTrue\x1b[0m") || !strings.Contains(lines[1], "\x1b[31mFalse\x1b[0m") {
		t.Errorf("statuses are not coloured: %q", lines[1])
	}
	// Columns line up on the text, not on the colour codes.
	header, row := lines[0], strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(lines[1], "\x1b[32m", ""), "\x1b[31m", ""), "\x1b[0m", "")
	if strings.Index(header, "AVAILABLE") != strings.Index(row, "False") {
		t.Errorf("columns do not line up:\n%s\n%s", header, row)
	}
}

// Rows printed later under one header (get --watch) keep its columns and their widths; a
// wider cell can only push what follows it.
func TestListPrinterKeepsColumns(t *testing.T) {
	long := owner(12, 12, cond("Ready", True, 12))
	long.Name = "a-rather-long-name"
	p := &view.ListPrinter{Kind: v1alpha1.KindWorkload, Options: view.ListOptions{Options: view.Options{Now: now}}}
	var b strings.Builder
	if err := p.Print(&b, []view.Owner{long}); err != nil {
		t.Fatal(err)
	}
	if err := p.Print(&b, []view.Owner{owner(1, 1, cond("Ready", Unknown, 1))}); err != nil {
		t.Fatal(err)
	}
	want := `NAME                 SUPPLYCHAIN   GEN   READY   AVAILABLE   RESOURCES   REASON   AGE
a-rather-long-name   -             12    True    -           -                    -
app                  -             1     Unknown   -           -           Test     -
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
