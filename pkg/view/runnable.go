package view

import (
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// Runnable is what every printer reads of a Runnable: its status, and the run template it
// names.
type Runnable struct {
	Namespace, Name string
	// Generation is metadata.generation: the spec the status should speak about.
	Generation int64
	// Created is metadata.creationTimestamp.
	Created time.Time
	// Template is spec.runTemplateRef.name.
	Template string
	Status   v1alpha1.RunnableStatus
}

// RunnableOf is the Runnable of a Runnable object.
func RunnableOf(r *v1alpha1.Runnable) Runnable {
	return Runnable{
		Namespace: r.Namespace, Name: r.Name, Generation: r.Generation, Created: r.CreationTimestamp.Time,
		Template: r.Spec.RunTemplateRef.Name, Status: r.Status,
	}
}

// Condition is the Runnable's condition of type t, or nil.
func (r Runnable) Condition(t string) *metav1.Condition {
	return meta.FindStatusCondition(r.Status.Conditions, t)
}

// Observed says whether the status speaks about the current generation.
func (r Runnable) Observed() bool { return r.Status.ObservedGeneration >= r.Generation }

// Reason is why the Runnable is not Ready, in a word, or "" when it is.
func (r Runnable) Reason() string {
	return notReadyReason(r.Observed(), r.Condition(v1alpha1.ConditionReady))
}

// Outputs are the Runnable's outputs, by name, each a line of JSON cut to maxOutputWidth.
func (r Runnable) Outputs() []Field {
	names := make([]string, 0, len(r.Status.Outputs))
	for name := range r.Status.Outputs {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]Field, len(names))
	for i, name := range names {
		out[i] = Field{Label: name, Value: plain(cut(string(r.Status.Outputs[name].Raw), maxOutputWidth))}
	}
	return out
}

// maxOutputWidth is how much of an output's JSON a printer shows.
const maxOutputWidth = 100

// cut is s cut to n characters, with an ellipsis when it was longer.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// Summary is the Runnable at a glance: its name and generation, its run template and Ready
// at the current generation.
func (r Runnable) Summary() []Field {
	return []Field{
		{v1alpha1.KindRunnable, plain(r.Namespace + "/" + r.Name + " (generation " + strconv.FormatInt(r.Generation, 10) + ")")},
		{"Run template", plain(orDash(r.Template))},
		{"Ready", r.readyLine()},
	}
}

func (r Runnable) readyLine() text {
	return readyLine(r.Condition(v1alpha1.ConditionReady), r.Observed(), r.Generation)
}

// PrintRunnable prints one Runnable: a summary, its conditions with the generation each
// speaks about, its outputs, and its runs, newest first, with their Succeeded condition.
func PrintRunnable(w io.Writer, r Runnable, opts Options) error {
	var b strings.Builder
	summary := table{}
	for _, f := range r.Summary() {
		summary.row(plain(f.Label+":"), f.Value)
	}
	if err := summary.write(&b, opts.Color); err != nil {
		return err
	}
	b.WriteByte('\n')
	if err := writeConditions(&b, v1alpha1.KindRunnable, r.Status.Conditions, opts); err != nil {
		return err
	}
	if outputs := r.Outputs(); len(outputs) > 0 {
		b.WriteByte('\n')
		t := table{}
		t.plainRow("OUTPUT", "VALUE")
		for _, f := range outputs {
			t.row(plain(f.Label), f.Value)
		}
		if err := t.write(&b, opts.Color); err != nil {
			return err
		}
	}
	b.WriteByte('\n')
	if len(r.Status.Runs) == 0 {
		b.WriteString("No runs.\n")
	} else {
		runs := table{}
		runs.plainRow("RUN", "SUCCEEDED", "REASON", "AGE", "MESSAGE")
		for _, run := range r.Status.Runs {
			runs.row(plain(run.Kind+"/"+run.Name), statusText(run.Succeeded), plain(orDash(run.Reason)),
				plain(opts.Age(run.Created.Time)), plain(oneLine(run.Message)))
		}
		if err := runs.write(&b, opts.Color); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// PrintRunnables prints a table of Runnables, a row each: name, run template, generation,
// Ready (with the generation it speaks about when that is not the current one), the
// newest run and its Succeeded status, how many runs there are, the reason it is not
// Ready, and its age.
func PrintRunnables(w io.Writer, rs []Runnable, opts ListOptions) error {
	t := table{}
	var header []string
	if opts.AllNamespaces {
		header = append(header, "NAMESPACE")
	}
	t.plainRow(append(header, "NAME", "TEMPLATE", "GEN", "READY", "LATEST RUN", "SUCCEEDED", "RUNS", "REASON", "AGE")...)
	for _, r := range rs {
		var row []text
		if opts.AllNamespaces {
			row = append(row, plain(r.Namespace))
		}
		latest, succeeded := plain("-"), plain("-")
		if len(r.Status.Runs) > 0 {
			latest, succeeded = plain(r.Status.Runs[0].Name), statusText(r.Status.Runs[0].Succeeded)
		}
		row = append(row, plain(r.Name), plain(orDash(r.Template)), plain(strconv.FormatInt(r.Generation, 10)),
			atGeneration(r.Condition(v1alpha1.ConditionReady), r.Generation), latest, succeeded, plain(strconv.Itoa(len(r.Status.Runs))), plain(r.Reason()), plain(opts.Age(r.Created)))
		t.row(row...)
	}
	return t.write(w, opts.Color)
}
