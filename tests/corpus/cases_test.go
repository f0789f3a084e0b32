package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/template"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// caseLabel is the label every corpus supply chain selects on, with the case's ID as
// its value, so that no case's supply chain can select another case's Workload.
const caseLabel = "corpus.surveyor.dev/case"

// corpusCase is one file of cases/: objects with a single mistake and the conditions
// the mistake must produce.
type corpusCase struct {
	// ID is the file name without its NN- prefix and extension; it is the caseLabel
	// value and the prefix of the case's object names.
	ID   string
	File string
	// Description says what the mistake is.
	Description string
	Objects     []*unstructured.Unstructured
	Expect      []expectation
}

// caseFile is the YAML form of a case.
type caseFile struct {
	Description string           `json:"description"`
	Objects     []map[string]any `json:"objects"`
	Expect      []expectation    `json:"expect"`
}

// expectation is one thing a case asserts about one object.
//   - rejected: the API server refused to create the object; message/messageContains
//     match its error, which names the field.
//   - condition: a condition of the object (an owner condition, a template's or supply
//     chain's Ready), or with resource, of status.resources[resource].
//   - path: a value of the object, read with jsonpath, equals `equals`.
//   - absent: the object does not exist (nothing was stamped).
type expectation struct {
	// Object is Kind/name; namespaced kinds are looked up in Namespace, by default the
	// corpus namespace.
	Object    string `json:"object"`
	Namespace string `json:"namespace,omitempty"`

	Rejected bool `json:"rejected,omitempty"`
	Absent   bool `json:"absent,omitempty"`

	Resource  string `json:"resource,omitempty"`
	Condition string `json:"condition,omitempty"`
	Status    string `json:"status,omitempty"`
	Reason    string `json:"reason,omitempty"`

	Message         *string  `json:"message,omitempty"`
	MessageContains []string `json:"messageContains,omitempty"`
	// MessageMatches is a regular expression the whole message must match, for messages
	// with a part that legitimately varies (which of two limits stopped an evaluation).
	MessageMatches string `json:"messageMatches,omitempty"`

	Path   string `json:"path,omitempty"`
	Equals any    `json:"equals,omitempty"`
}

// templateData is what case files may use between <% and %>.
type templateData struct {
	Namespace string
}

var caseFuncs = template.FuncMap{
	// repeat repeats s n times, e.g. to build a 64 KiB expression or a 1 MiB value.
	"repeat": func(n int, s string) string { return strings.Repeat(s, n) },
	// name pads prefix with "x" to exactly n characters: names at a length limit.
	"name": func(n int, prefix string) string { return prefix + strings.Repeat("x", n-len(prefix)) },
	// quote is the JSON (and YAML double-quoted) form of s.
	"quote": func(s string) string { b, _ := json.Marshal(s); return string(b) },
}

var casePrefix = regexp.MustCompile(`^[0-9]+-`)

// loadCases reads every *.yaml file of dir, expanding <% ... %> with data.
func loadCases(dir string, data templateData) ([]*corpusCase, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var cases []*corpusCase
	for _, f := range files {
		c, err := loadCase(f, data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		cases = append(cases, c)
	}
	return cases, nil
}

func loadCase(path string, data templateData) (*corpusCase, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	tpl, err := template.New(filepath.Base(path)).Delims("<%", "%>").Funcs(caseFuncs).Option("missingkey=error").Parse(string(raw))
	if err != nil {
		return nil, err
	}
	var expanded bytes.Buffer
	if err := tpl.Execute(&expanded, data); err != nil {
		return nil, err
	}
	var cf caseFile
	if err := yaml.UnmarshalStrict(expanded.Bytes(), &cf); err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	c := &corpusCase{ID: casePrefix.ReplaceAllString(base, ""), File: filepath.Base(path), Description: cf.Description, Expect: cf.Expect}
	if c.Description == "" || len(cf.Objects) == 0 || len(cf.Expect) == 0 {
		return nil, errors.New("a case needs a description, objects and expectations")
	}
	for _, o := range cf.Objects {
		c.Objects = append(c.Objects, &unstructured.Unstructured{Object: o})
	}
	for _, e := range c.Expect {
		if _, _, err := splitObject(e.Object); err != nil {
			return nil, err
		}
		kinds := 0
		for _, set := range []bool{e.Rejected, e.Absent, e.Condition != "", e.Path != ""} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			return nil, fmt.Errorf("expectation on %s must be exactly one of rejected, absent, condition or path", e.Object)
		}
	}
	return c, nil
}

// checkIsolation makes sure no case can touch another: cluster-scoped objects and
// Workloads have unique names carrying the case's ID, every supply chain selects on
// caseLabel=<ID> (or selects nothing at all), and every labelled Workload carries it.
func checkIsolation(cases []*corpusCase) error {
	seen := map[string]string{}
	var errs []error
	for _, c := range cases {
		for _, o := range c.Objects {
			key := o.GetKind() + "/" + o.GetName()
			if other, dup := seen[key]; dup {
				errs = append(errs, fmt.Errorf("%s: %s is also in %s", c.File, key, other))
			}
			seen[key] = c.File
			kind := o.GetKind()
			_, namespaced := namespacedKinds[kind]
			switch {
			case kind == "Workload":
				if !strings.HasPrefix(o.GetName(), c.ID) {
					errs = append(errs, fmt.Errorf("%s: workload %s must be named after the case", c.File, o.GetName()))
				}
				if l := o.GetLabels(); len(l) > 0 && l[caseLabel] != c.ID {
					errs = append(errs, fmt.Errorf("%s: workload %s must carry %s=%s", c.File, o.GetName(), caseLabel, c.ID))
				}
			case !namespaced:
				if !strings.HasPrefix(o.GetName(), "corpus-"+c.ID) {
					errs = append(errs, fmt.Errorf("%s: %s must be named corpus-%s...", c.File, key, c.ID))
				}
			}
			if kind == "ClusterSupplyChain" {
				sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector")
				exprs, _, _ := unstructured.NestedSlice(o.Object, "spec", "selectorMatchExpressions")
				fields, _, _ := unstructured.NestedSlice(o.Object, "spec", "selectorMatchFields")
				if sel[caseLabel] != c.ID && (len(sel) > 0 || len(exprs) > 0 || len(fields) > 0) {
					errs = append(errs, fmt.Errorf("%s: supply chain %s must select %s=%s", c.File, o.GetName(), caseLabel, c.ID))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// namespacedKinds are the namespaced kinds a case may hold or expect, by API version.
var namespacedKinds = map[string]string{
	"Workload": "carto.run/v1alpha1", "ConfigMap": "v1", "Secret": "v1", "Service": "v1", "ServiceAccount": "v1",
}

// clusterKinds are the cluster-scoped kinds a case may hold or expect.
var clusterKinds = map[string]string{
	"ClusterTemplate": "carto.run/v1alpha1", "ClusterSourceTemplate": "carto.run/v1alpha1",
	"ClusterImageTemplate": "carto.run/v1alpha1", "ClusterConfigTemplate": "carto.run/v1alpha1",
	"ClusterSupplyChain": "carto.run/v1alpha1", "Namespace": "v1",
}

func splitObject(ref string) (kind, name string, err error) {
	kind, name, ok := strings.Cut(ref, "/")
	if !ok || name == "" {
		return "", "", fmt.Errorf("object %q must be Kind/name", ref)
	}
	if namespacedKinds[kind] == "" && clusterKinds[kind] == "" {
		return "", "", fmt.Errorf("object %q: unknown kind %s", ref, kind)
	}
	return kind, name, nil
}

// observation is what one poll saw: the Workloads of the corpus namespace, and every
// other object an expectation asked for.
type observation struct {
	workloads []unstructured.Unstructured
	objects   map[string]*unstructured.Unstructured // namespace/Kind/name; nil when not found
}

func observe(t *testing.T) *observation {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("carto.run/v1alpha1")
	list.SetKind("WorkloadList")
	if err := admin.List(ctx, list, client.InNamespace(namespace)); err != nil {
		t.Logf("listing workloads: %v", err)
	}
	return &observation{workloads: list.Items, objects: map[string]*unstructured.Unstructured{}}
}

// get returns the object an expectation names, reading it once per observation.
func (o *observation) get(e expectation) (*unstructured.Unstructured, error) {
	kind, name, err := splitObject(e.Object)
	if err != nil {
		return nil, err
	}
	ns := ""
	apiVersion := clusterKinds[kind]
	if v, ok := namespacedKinds[kind]; ok {
		apiVersion, ns = v, namespace
		if e.Namespace != "" {
			ns = e.Namespace
		}
	}
	key := ns + "/" + kind + "/" + name
	if u, ok := o.objects[key]; ok {
		return u, nil
	}
	if kind == "Workload" && ns == namespace {
		for i := range o.workloads {
			if o.workloads[i].GetName() == name {
				o.objects[key] = &o.workloads[i]
				return &o.workloads[i], nil
			}
		}
		o.objects[key] = nil
		return nil, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
	err = admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
	switch {
	case apierrors.IsNotFound(err):
		u = nil
	case err != nil:
		return nil, err
	}
	o.objects[key] = u
	return u, nil
}

// unmet returns a line for every expectation of the case that does not hold.
func (c *corpusCase) unmet(obs *observation, rejections map[string]string) []string {
	var out []string
	for _, e := range c.Expect {
		if msg := e.check(obs, rejections); msg != "" {
			out = append(out, e.describe()+": "+msg)
		}
	}
	// An object the case does not expect to be rejected must have been created.
	for _, o := range c.Objects {
		key := o.GetKind() + "/" + o.GetName()
		if err, refused := rejections[key]; refused && !slices.ContainsFunc(c.Expect, func(e expectation) bool { return e.Rejected && e.Object == key }) {
			out = append(out, fmt.Sprintf("%s was rejected unexpectedly: %s", key, err))
		}
	}
	return out
}

func (e expectation) describe() string {
	switch {
	case e.Rejected:
		return e.Object + " rejected"
	case e.Absent:
		return e.Object + " absent"
	case e.Path != "":
		return e.Object + " " + e.Path
	case e.Resource != "":
		return fmt.Sprintf("%s resources[%s].%s", e.Object, e.Resource, e.Condition)
	}
	return e.Object + " " + e.Condition
}

// check returns why the expectation does not hold, or "".
func (e expectation) check(obs *observation, rejections map[string]string) string {
	refusal, refused := rejections[e.Object]
	if e.Rejected {
		if !refused {
			return "was accepted, want a rejection"
		}
		return e.checkMessage(refusal)
	}
	if refused {
		return "was rejected: " + refusal
	}
	u, err := obs.get(e)
	switch {
	case err != nil:
		return err.Error()
	case e.Absent && u != nil:
		return "exists, want none"
	case e.Absent:
		return ""
	case u == nil:
		return "not found"
	}
	if e.Path != "" {
		return checkPath(u, e.Path, e.Equals)
	}
	if observed, found, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); !found || observed != u.GetGeneration() {
		return fmt.Sprintf("status.observedGeneration %d is not the generation %d yet", observed, u.GetGeneration())
	}
	cond := condition(u.Object, e.Resource, e.Condition)
	if cond == nil {
		return fmt.Sprintf("condition not found; conditions: %s", conditionsOf(u.Object, e.Resource))
	}
	var diffs []string
	if e.Status != "" && cond["status"] != e.Status {
		diffs = append(diffs, fmt.Sprintf("status %v, want %s", cond["status"], e.Status))
	}
	if e.Reason != "" && cond["reason"] != e.Reason {
		diffs = append(diffs, fmt.Sprintf("reason %v, want %s", cond["reason"], e.Reason))
	}
	msg, _ := cond["message"].(string)
	if m := e.checkMessage(msg); m != "" {
		diffs = append(diffs, m)
	}
	if len(diffs) > 0 {
		diffs = append(diffs, fmt.Sprintf("observed %v %v %q", cond["status"], cond["reason"], cut(msg, 2000)))
	}
	return strings.Join(diffs, "; ")
}

func (e expectation) checkMessage(got string) string {
	var diffs []string
	if e.Message != nil && got != *e.Message {
		diffs = append(diffs, fmt.Sprintf("message\n      got: %q\n     want: %q", got, *e.Message))
	}
	for _, sub := range e.MessageContains {
		if !strings.Contains(got, sub) {
			diffs = append(diffs, fmt.Sprintf("message %q does not contain %q", cut(got, 2000), sub))
		}
	}
	if e.MessageMatches != "" {
		re, err := regexp.Compile("^(?:" + e.MessageMatches + ")$")
		switch {
		case err != nil:
			diffs = append(diffs, err.Error())
		case !re.MatchString(got):
			diffs = append(diffs, fmt.Sprintf("message %q does not match %q", cut(got, 2000), e.MessageMatches))
		}
	}
	return strings.Join(diffs, "; ")
}

// condition finds a condition of the object, or of status.resources[resource].
func condition(obj map[string]any, resource, condType string) map[string]any {
	for _, c := range conditionList(obj, resource) {
		if m, ok := c.(map[string]any); ok && m["type"] == condType {
			return m
		}
	}
	return nil
}

func conditionList(obj map[string]any, resource string) []any {
	if resource == "" {
		conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
		return conds
	}
	resources, _, _ := unstructured.NestedSlice(obj, "status", "resources")
	for _, r := range resources {
		if m, ok := r.(map[string]any); ok && m["name"] == resource {
			conds, _, _ := unstructured.NestedSlice(m, "conditions")
			return conds
		}
	}
	return nil
}

func conditionsOf(obj map[string]any, resource string) string {
	var parts []string
	for _, c := range conditionList(obj, resource) {
		if m, ok := c.(map[string]any); ok {
			parts = append(parts, fmt.Sprintf("%v=%v %v %q", m["type"], m["status"], m["reason"], cut(fmt.Sprint(m["message"]), 300)))
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// checkPath compares the value at a jsonpath with want, both as JSON.
func checkPath(u *unstructured.Unstructured, path string, want any) string {
	jp := jsonpath.New("expect")
	if err := jp.Parse("{" + path + "}"); err != nil {
		return err.Error()
	}
	results, err := jp.FindResults(u.Object)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return fmt.Sprintf("no value at %s (%v)", path, err)
	}
	got := results[0][0].Interface()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	var gv, wv any
	_ = json.Unmarshal(g, &gv)
	_ = json.Unmarshal(w, &wv)
	if !reflect.DeepEqual(gv, wv) {
		return fmt.Sprintf("value %s, want %s", cut(string(g), 500), cut(string(w), 500))
	}
	return ""
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
