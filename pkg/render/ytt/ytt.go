package ytt

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"carvel.dev/ytt/pkg/orderedmap"
	"carvel.dev/ytt/pkg/template"
	"carvel.dev/ytt/pkg/template/core"
	"carvel.dev/ytt/pkg/yamlmeta"
	"carvel.dev/ytt/pkg/yamltemplate"
	"carvel.dev/ytt/pkg/yttlibrary"
	yttoverlay "carvel.dev/ytt/pkg/yttlibrary/overlay"
	uierrs "github.com/cppforlife/go-cli-ui/errors"
	"github.com/k14s/starlark-go/starlark"
	"github.com/k14s/starlark-go/starlarkstruct"
)

// Limits of one evaluation (DESIGN §11): past either it fails with an *Error naming it.
const (
	// Timeout is how long one evaluation may take, Cartographer's own limit.
	Timeout = 4 * time.Second
	// MemoryLimit is how much memory one evaluation may take on top of what its process
	// holds before it starts; enforced by the worker processes (internal/yttworker).
	MemoryLimit = 256 << 20
)

// FileName is the name ytt gives the template in its messages, as for the binary's `-f -`.
const FileName = "stdin.yml"

// Error is why ytt could not evaluate a template: Text is what the ytt binary would print on
// stderr ("ytt: Error: ...", with the file and line), or the limit the evaluation exceeded.
type Error struct {
	Text string
	// Limit is set when the evaluation exceeded a limit rather than failed on its own.
	Limit bool
}

// Error implements error.
func (e *Error) Error() string { return e.Text }

// TimeoutError is the *Error of an evaluation that took longer than limit.
func TimeoutError(limit time.Duration) *Error {
	return &Error{Text: fmt.Sprintf("ytt: evaluation exceeded the time limit of %s", limit), Limit: true}
}

// MemoryError is the *Error of an evaluation that took more memory than limit bytes.
func MemoryError(limit int64) *Error {
	return &Error{Text: fmt.Sprintf("ytt: evaluation exceeded the memory limit of %d MiB", limit>>20), Limit: true}
}

// yttError is the *Error of err as the binary prints it, made deterministic.
func yttError(err error) *Error {
	return &Error{Text: Deterministic(fmt.Sprintf("ytt: Error: %s\n", uierrs.NewMultiLineError(err)))}
}

var (
	// generated is a name in the code ytt generates from a template, which its messages may
	// quote; the number counts the templates the process has compiled.
	generated = regexp.MustCompile(`__ytt_tpl[0-9]+_`)
	// backtrace is how ytt opens the Go stack it adds to the message of a builtin that
	// panicked (a value it cannot convert, say), which ends with a line holding ")".
	backtrace = regexp.MustCompile(` \(backtrace: goroutine [0-9]+ \[running\]:$`)
)

// Deterministic is a ytt message as it reads whatever the process did before, so that a
// status does not change from one evaluation to the next: the names of generated code get
// the number the binary gives them (2: it compiles one template for -f -), and a Go stack
// ytt adds to a builtin's panic (goroutine numbers, addresses, paths of this build) is left
// out, its "reason:" block with it.
func Deterministic(msg string) string {
	msg = generated.ReplaceAllLiteralString(msg, "__ytt_tpl2_")
	if !strings.Contains(msg, " (backtrace: goroutine ") {
		return msg
	}
	lines := strings.Split(msg, "\n")
	out := make([]string, 0, len(lines))
	stack := false  // within a backtrace's "reason:" block
	opened := false // a backtrace was opened and its block not yet met
	for _, line := range lines {
		switch {
		case stack:
			stack = strings.TrimSpace(line) != ")"
			continue
		case backtrace.MatchString(line):
			line, opened = backtrace.ReplaceAllLiteralString(line, ""), true
		case opened && strings.TrimSpace(line) == "reason:":
			opened, stack = false, true
			if n := len(out); n > 0 && strings.TrimSpace(out[n-1]) == "" {
				out = out[:n-1]
			}
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// Eval evaluates source with values, one data value per top-level key, and returns the
// output as the ytt binary prints it: every non-empty document, as YAML. A template ytt
// rejects is an *Error. Eval has no bound in time or memory (see the package doc).
func Eval(source string, values map[string]any) ([]byte, error) {
	flags, err := DataValues(values)
	if err != nil {
		return nil, err
	}
	return EvalFlags(source, flags)
}

// EvalFlags is Eval with the data values given as DataValues makes them. The template is
// compiled on its first evaluation and kept for the next ones (see compiled).
func EvalFlags(source string, flags []string) ([]byte, error) {
	return compiled.get(source).eval(flags)
}

// DataValues are Cartographer's --data-value-yaml flags for values: key=<compact JSON>, which
// YAML reads back with its types. Sorted, so an evaluation does not depend on map order.
func DataValues(values map[string]any) ([]string, error) {
	flags := make([]string, 0, len(values))
	for k, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("unable to marshal template context: %w", err)
		}
		flags = append(flags, k+"="+string(b))
	}
	slices.Sort(flags)
	return flags, nil
}

// Template is a ytt template read and compiled once (DESIGN §11: once per template
// generation; a new generation is a new source), then evaluated with any data values.
//
// It does for its one file what the ytt binary does for `-f -`: parse the YAML, compile its
// annotations to starlark, run that with the @ytt modules and the data values, then apply
// the documents annotated @overlay/match to the others. What a single template cannot use
// it rejects: another file to load (there is none), a private library, and data values or
// schema documents (the context is the data values).
type Template struct {
	source []byte
	err    error  // why it cannot be evaluated, whatever the values
	plain  []byte // the output of a template without ytt annotations (no tpl)

	// mu is held during an evaluation: a CompiledTemplate keeps the state of the one in
	// progress. (A worker evaluates one at a time; in the CLI, an evaluation abandoned at
	// its deadline keeps its template until the process ends.)
	mu  sync.Mutex
	tpl *template.CompiledTemplate
}

// Compile reads and compiles source. Its errors are reported by Eval, in ytt's words.
func Compile(source string) (t *Template) {
	t = &Template{source: []byte(source)}
	defer func() {
		// The library is not written to be fed arbitrary input in a long-lived process.
		if r := recover(); r != nil {
			t.err = &Error{Text: fmt.Sprintf("ytt: Error: %v\n", r)}
		}
	}()
	docs, err := yamlmeta.NewDocumentSetFromBytes(t.source, yamlmeta.DocSetOpts{AssociatedName: FileName})
	if err != nil {
		t.err = yttError(fmt.Errorf("Unmarshaling YAML template '%s': %s", FileName, err))
		return t
	}
	for _, doc := range docs.Items {
		for _, comment := range doc.GetComments() {
			ann, err := yamltemplate.NewTemplateAnnotationFromYAMLComment(comment, doc.GetPosition(), template.MetaOpts{IgnoreUnknown: true})
			if err == nil && (ann.Name == "data/values" || ann.Name == "data/values-schema") {
				t.err = &Error{Text: fmt.Sprintf("ytt: Error: %s: a template may not hold a @%s document: its data values are the templating context\n", doc.Position.AsCompactString(), ann.Name)}
				return t
			}
		}
	}
	if !yamltemplate.HasTemplating(docs) {
		docs.OverrideMapKeys()
		if docs, err = applyOverlays(docs); err != nil {
			t.err = yttError(err)
			return t
		}
		t.plain, t.err = output(docs)
		return t
	}
	t.tpl, err = yamltemplate.NewTemplate(FileName, yamltemplate.TemplateOpts{}).Compile(docs)
	if err != nil {
		t.err = yttError(fmt.Errorf("Compiling YAML template '%s': %s", FileName, err))
	}
	return t
}

// Eval evaluates the template with values (see the package's Eval).
func (t *Template) Eval(values map[string]any) ([]byte, error) {
	flags, err := DataValues(values)
	if err != nil {
		return nil, err
	}
	return t.eval(flags)
}

func (t *Template) eval(flags []string) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, &Error{Text: fmt.Sprintf("ytt: Error: %v\n", r)}
		}
	}()
	values, err := valuesOf(flags) // read first: ytt reports bad values before the template
	switch {
	case err != nil:
		return nil, yttError(err)
	case t.err != nil || t.tpl == nil:
		return t.plain, t.err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	l := &loader{tpl: t.tpl, source: t.source}
	data := core.NewGoValueWithOpts(values, core.GoValueOpts{MapIsStruct: true}).AsStarlarkValue()
	l.api = yttlibrary.NewAPI(t.tpl.TplReplaceNode, yttlibrary.NewDataModule(data, l), libraryModule, QuietUI{})
	_, result, err := t.tpl.Eval(&starlark.Thread{Name: "template=" + FileName, Load: l.Load}, l)
	if err != nil {
		return nil, yttError(err)
	}
	docs, err := applyOverlays(result.(*yamlmeta.DocumentSet))
	if err != nil {
		return nil, yttError(err)
	}
	return output(docs)
}

// applyOverlays applies each document annotated @overlay/match, in order, to the others,
// and drops empty documents, as ytt does after evaluating its files.
func applyOverlays(docs *yamlmeta.DocumentSet) (*yamlmeta.DocumentSet, error) {
	var overlays []*yamlmeta.Document
	result := &yamlmeta.DocumentSet{}
	for _, doc := range docs.Items {
		switch {
		case template.NewAnnotations(doc).Has(yttoverlay.AnnotationMatch):
			overlays = append(overlays, doc)
		case !doc.IsEmpty():
			result.Items = append(result.Items, doc)
		}
	}
	if len(result.Items) == 0 {
		return result, nil // ytt applies overlays to the files that have documents left
	}
	left := []*yamlmeta.DocumentSet{result}
	for _, overlay := range overlays {
		op := yttoverlay.Op{
			Left:   left,
			Right:  &yamlmeta.DocumentSet{Items: []*yamlmeta.Document{overlay}},
			Thread: &starlark.Thread{Name: "overlay-post-processing"},
		}
		applied, err := op.Apply()
		if err != nil {
			return nil, fmt.Errorf("Overlaying (in following order: %s): %s", FileName, err)
		}
		left = applied.([]*yamlmeta.DocumentSet)
	}
	return left[0], nil
}

func output(docs *yamlmeta.DocumentSet) ([]byte, error) {
	out, err := docs.AsBytes()
	if err != nil {
		return nil, yttError(fmt.Errorf("Marshaling template result: %s", err))
	}
	return out, nil
}

// valuesOf reads --data-value-yaml flags (key=<JSON>) into the data values ytt would make of
// them: maps in key order, whole numbers as integers. A value with a character YAML does not
// allow (which JSON leaves as it is: DEL, C1 controls) is read by ytt's own parser, which
// rejects it as the binary does.
func valuesOf(flags []string) (*orderedmap.Map, error) {
	values := orderedmap.NewMap()
	for _, flag := range flags {
		key, value, ok := strings.Cut(flag, "=")
		if !ok {
			return nil, fmt.Errorf("Extracting data value from KV: Expected format key=value")
		}
		if strings.IndexFunc(value, notYAMLPrintable) >= 0 {
			docs, err := yamlmeta.NewParser(yamlmeta.ParserOpts{}).ParseBytes([]byte(value), "")
			if err != nil {
				return nil, fmt.Errorf("Extracting data value from KV: Deserializing value for key '%s': Deserializing YAML value: %s", key, err)
			}
			values.Set(key, docs.Items[0].AsInterface())
			continue
		}
		d := json.NewDecoder(strings.NewReader(value))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("Extracting data value from KV: Deserializing value for key '%s': %s", key, err)
		}
		values.Set(key, yamlValue(v))
	}
	return values, nil
}

// notYAMLPrintable is a character YAML does not allow in a document that JSON does not escape.
func notYAMLPrintable(r rune) bool {
	return r == 0x7f || (r >= 0x80 && r < 0xa0 && r != 0x85) || r >= 0xfeff && r <= 0xffff && (r == 0xfeff || r >= 0xfffe)
}

// yamlValue is v, decoded from JSON, as YAML reads the same text.
func yamlValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // json.Marshal's order, which the flags were written in
		m := orderedmap.NewMap()
		for _, k := range keys {
			m.Set(k, yamlValue(v[k]))
		}
		return m
	case []any:
		for i := range v {
			v[i] = yamlValue(v[i])
		}
		return v
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(string(v), 10, 64); err == nil {
			return u
		}
		f, _ := v.Float64()
		return f
	}
	return v
}

// loader serves one evaluation's load() and data.list/data.read: the @ytt modules, and the
// one file there is.
type loader struct {
	tpl    *template.CompiledTemplate
	api    yttlibrary.API
	source []byte
}

// FindCompiledTemplate implements template.CompiledTemplateLoader (for error messages).
func (l *loader) FindCompiledTemplate(string) *template.CompiledTemplate { return l.tpl }

// Load implements starlark's load().
func (l *loader) Load(_ *starlark.Thread, module string) (starlark.StringDict, error) {
	if lib, ok := strings.CutPrefix(module, "@"); ok {
		name, mod, ok := strings.Cut(lib, ":")
		switch {
		case !ok:
			return nil, fmt.Errorf("Expected library path to be in format '@name:path' " +
				"e.g. '@github.com/vmware-tanzu/test:test.star' or '@ytt:base64'")
		case name == "ytt":
			return l.api.FindModule(mod)
		}
		return nil, errNoPrivateLibrary
	}
	if module == FileName {
		return nil, fmt.Errorf("Expected file '%s' to be a library file, but was not "+
			"(hint: library filename must end with '.lib.yml' or '.star'; use data.read(...) for loading non-templated file contents)", module)
	}
	return nil, fileNotFound(module)
}

// FilePaths implements yttlibrary.DataLoader: the one file.
func (l *loader) FilePaths(path string) ([]string, error) {
	if path != "" {
		return nil, fmt.Errorf("Did not find '%s'", path)
	}
	return []string{FileName}, nil
}

// FileData implements yttlibrary.DataLoader.
func (l *loader) FileData(path string) ([]byte, error) {
	if path != FileName {
		return nil, fileNotFound(path)
	}
	return l.source, nil
}

func fileNotFound(path string) error {
	return fmt.Errorf("Expected to find file '%s' (hint: only files included via -f flag are available)", path)
}

// errNoPrivateLibrary is what ytt says of any library a single file asks for.
var errNoPrivateLibrary = fmt.Errorf("Could not find private library (directory '_ytt_lib' missing?)")

// libraryModule is @ytt:library for a single file: there is no library to get.
var libraryModule = starlark.StringDict{
	"library": &starlarkstruct.Module{
		Name: "library",
		Members: starlark.StringDict{
			"get": starlark.NewBuiltin("library.get", core.ErrWrapper(func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
				if args.Len() != 1 {
					return starlark.None, fmt.Errorf("expected exactly one argument")
				}
				return starlark.None, errNoPrivateLibrary
			})),
		},
	},
}

// QuietUI is ytt's UI that drops what ytt would print besides its result: warnings and
// debug output.
type QuietUI struct{}

// Printf drops what ytt prints.
func (QuietUI) Printf(string, ...any) {}

// Debugf drops ytt's debug output.
func (QuietUI) Debugf(string, ...any) {}

// Warnf drops ytt's warnings.
func (QuietUI) Warnf(string, ...any) {}

// DebugWriter is where ytt writes debug output: nowhere.
func (QuietUI) DebugWriter() io.Writer { return io.Discard }

// cache keeps compiled templates by source, within a bound on the sources' total size.
type cache struct {
	mu      sync.Mutex
	entries map[string]*Template
	size    int
}

// compiled is this process's cache of compiled templates: templates of at most
// maxCachedSource bytes, up to maxCacheSize bytes of source in all; when full it starts
// over. A compiled template takes some tens of times its source (docs/ytt.md, "Compiled once"),
// so the bound keeps the cache well within a worker's memory budget.
var compiled = &cache{entries: map[string]*Template{}}

const (
	maxCachedSource = 32 << 10
	maxCacheSize    = 512 << 10
)

func (c *cache) get(source string) *Template {
	c.mu.Lock()
	t, ok := c.entries[source]
	c.mu.Unlock()
	if ok {
		return t
	}
	t = Compile(source)
	if len(source) > maxCachedSource {
		return t
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.size+len(source) > maxCacheSize {
		clear(c.entries)
		c.size = 0
	}
	if _, ok := c.entries[source]; !ok {
		c.entries[source] = t
		c.size += len(source)
	}
	return c.entries[source]
}

// InProcess evaluates templates in this process within Timeout. An evaluation past it is
// abandoned, not stopped: its goroutine runs on until ytt returns. Fit for a process that
// ends soon after (the CLI), not for the controller.
type InProcess struct {
	// Timeout is the time limit; Timeout (the package's) when zero.
	Timeout time.Duration
}

// Eval implements render.YTT.
func (p InProcess) Eval(source string, values map[string]any) ([]byte, error) {
	limit := p.Timeout
	if limit == 0 {
		limit = Timeout
	}
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := Eval(source, values)
		done <- result{out, err}
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.out, r.err
	case <-timer.C:
		return nil, TimeoutError(limit)
	}
}
