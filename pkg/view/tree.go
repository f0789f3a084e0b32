package view

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// Node is a resource in the tree of an owner's resources along their inputs.
type Node struct {
	Resource v1alpha1.ResourceStatus
	// AlsoReads are the inputs of the resource other than its parent.
	AlsoReads []string
	// Children are the resources whose first input is this one, in blueprint order.
	Children []*Node
}

// Tree arranges an owner's resources along the data flow: each resource under the first
// of its inputs that is an earlier resource, the others at the root, in blueprint order.
func Tree(o Owner) []*Node {
	var roots []*Node
	nodes := map[string]*Node{}
	for _, r := range o.Status.Resources {
		n := &Node{Resource: r}
		var parent *Node
		for _, in := range r.Inputs {
			if p, ok := nodes[in.Name]; ok && parent == nil {
				parent = p
				continue
			}
			if !slices.Contains(n.AlsoReads, in.Name) {
				n.AlsoReads = append(n.AlsoReads, in.Name)
			}
		}
		if parent != nil {
			parent.Children = append(parent.Children, n)
		} else {
			roots = append(roots, n)
		}
		nodes[r.Name] = n
	}
	return roots
}

// ShownConditions are the conditions of a resource that the tree shows beside it: Ready,
// Healthy (when it has one) and its rule conditions such as Complete.
func ShownConditions(r v1alpha1.ResourceStatus) []metav1.Condition {
	var conds []metav1.Condition
	for _, t := range []string{v1alpha1.ConditionReady, v1alpha1.ConditionHealthy} {
		if c := findCondition(r.Conditions, t); c != nil {
			conds = append(conds, *c)
		}
	}
	return append(conds, resourceRuleConditions(r)...)
}

// previewWidth is how much of an output's preview a tree line shows.
const previewWidth = 60

// PrintTree prints the owner's resources as a tree along their inputs: each with its
// object, Ready, Healthy and rule conditions (such as Complete), its template, the reason
// of anything not Ready, and its outputs (a preview, the short digest and when it last
// changed).
func PrintTree(w io.Writer, o Owner, opts Options) error {
	var b strings.Builder
	if err := o.summary().write(&b, opts.Color); err != nil {
		return err
	}
	roots := Tree(o)
	if len(roots) == 0 {
		line := plain("no resources")
		if c := o.BlueprintCondition(); c != nil && c.Status != metav1.ConditionTrue {
			line = join(plain("no resources:"), plain(c.Type), statusText(c.Status), plain(reasonMessage(c)))
		}
		b.WriteString("└─ " + line.render(opts.Color) + "\n")
	}
	for i, n := range roots {
		writeNode(&b, o, n, "", i == len(roots)-1, opts)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeNode(b *strings.Builder, o Owner, n *Node, prefix string, last bool, opts Options) {
	branch, indent := "├─ ", "│  "
	if last {
		branch, indent = "└─ ", "   "
	}
	r := n.Resource
	line := plain(r.Name)
	if obj := ObjectOf(r); obj != "" {
		line = plain(r.Name + "  " + obj)
	}
	for _, c := range ShownConditions(r) {
		line = append(line, plain("  "+c.Type+"=")...)
		line = append(line, statusText(c.Status)...)
	}
	b.WriteString(prefix + branch + line.render(opts.Color) + "\n")

	detail := prefix + indent + "│  "
	if len(n.Children) == 0 {
		detail = prefix + indent + "   "
	}
	var details []string
	if tpl := TemplateOf(r); tpl != "" {
		s := "template " + tpl
		if r.ObservedGeneration != o.Generation && r.ObservedGeneration != 0 {
			s += fmt.Sprintf(", stamped at generation %d", r.ObservedGeneration)
		}
		details = append(details, s)
	}
	if len(n.AlsoReads) > 0 {
		details = append(details, "also reads "+strings.Join(n.AlsoReads, ", "))
	}
	if c := deciding(r); c != nil && status(readyOf(r)) != metav1.ConditionTrue {
		details = append(details, fmt.Sprintf("%s %s %s", c.Type, c.Status, reasonMessage(c)))
	}
	width := 0
	for _, out := range r.Outputs {
		width = max(width, len(out.Name))
	}
	for _, out := range r.Outputs {
		details = append(details, fmt.Sprintf("%-*s  %s  (%s, changed %s ago)", width, out.Name, preview(out.Preview), ShortDigest(out.Digest), opts.Age(out.LastTransitionTime.Time)))
	}
	for _, d := range details {
		// Details hold tenants' text (messages, output previews): escaped as spans are.
		b.WriteString(strings.TrimRight(detail+Escape(d), " ") + "\n")
	}
	for i, c := range n.Children {
		writeNode(b, o, c, prefix+indent, i == len(n.Children)-1, opts)
	}
}

// preview is the first line of an output's YAML preview, cut to previewWidth, with the
// number of lines when there are more.
func preview(p string) string {
	p = strings.TrimRight(p, "\n")
	lines := strings.Split(p, "\n")
	first := lines[0]
	if utf8.RuneCountInString(first) > previewWidth {
		first = string([]rune(first)[:previewWidth-1]) + "…"
	}
	if len(lines) > 1 {
		first += fmt.Sprintf(" … (%d lines)", len(lines))
	}
	return first
}

// ShortDigest is a digest cut to its algorithm and 12 hex digits.
func ShortDigest(d string) string {
	algo, hex, ok := strings.Cut(d, ":")
	if !ok || len(hex) <= 12 {
		return d
	}
	return algo + ":" + hex[:12]
}
