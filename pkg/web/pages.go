package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/view"
)

// The paths of the owner and blueprint pages: /owners/KIND/NAMESPACE/NAME and
// /blueprints/KIND/NAME, with the kind in lower case.
const (
	ownerPath     = "owners"
	blueprintPath = "blueprints"
)

// ownerKinds and blueprintKinds are the kinds of the table of kinds the pages show.
var ownerKinds, blueprintKinds = func() (owners, blueprints []string) {
	for _, k := range v1alpha1.OwnerKinds {
		owners, blueprints = append(owners, k.Kind), append(blueprints, k.Blueprint.Kind)
	}
	return owners, blueprints
}()

func ownerURL(kind, namespace, name string) string {
	return "/" + ownerPath + "/" + strings.ToLower(kind) + "/" + url.PathEscape(namespace) + "/" + url.PathEscape(name)
}

func blueprintURL(kind, name string) string {
	return "/" + blueprintPath + "/" + strings.ToLower(kind) + "/" + url.PathEscape(name)
}

// kindNamed is the kind among kinds whose lower-case name is name, or "".
func kindNamed(name string, kinds []string) string {
	for _, k := range kinds {
		if strings.ToLower(k) == name {
			return k
		}
	}
	return ""
}

// ownerKindOf is the kind of owner a blueprint kind realizes, "" for no blueprint kind.
func ownerKindOf(blueprintKind string) string {
	if i := slices.Index(blueprintKinds, blueprintKind); i >= 0 {
		return ownerKinds[i]
	}
	return ""
}

// banners say which of kinds are not shown in full: still loading, or failing.
func (s *Server) banners(kinds ...string) []string {
	var out []string
	for _, k := range kinds {
		switch st := s.store.KindState(k); {
		case st.Err != "":
			out = append(out, k+"s: "+st.Err)
		case !st.Synced:
			out = append(out, "Loading "+k+"s…")
		}
	}
	return out
}

// row is an owner in the list.
type row struct {
	// ID is Kind/namespace/name, the row's data-owner attribute.
	ID                         string
	Kind, Namespace, Name, URL string
	Blueprint, BlueprintURL    string
	Generation                 int64
	Ready, Available, Complete []view.Span
	Resources, Rollout, Reason string
	Age                        string
}

func (s *Server) row(o view.Owner, opts view.Options) row {
	r := row{
		ID: o.Kind + "/" + o.Namespace + "/" + o.Name, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name,
		URL: ownerURL(o.Kind, o.Namespace, o.Name), Generation: o.Generation,
		Ready: o.AtGeneration(o.Condition(v1alpha1.ConditionReady)), Available: o.AtGeneration(o.Condition(v1alpha1.ConditionAvailable)),
		Complete:  view.ConditionStatus(o.Condition(v1alpha1.ConditionComplete)),
		Resources: view.ResourceCount(o), Rollout: view.RolloutState(o.Status.Rollout), Reason: o.Reason(), Age: opts.Age(o.Created),
	}
	if o.Blueprint != nil {
		r.Blueprint, r.BlueprintURL = o.Blueprint.Name, blueprintURL(o.Blueprint.Kind, o.Blueprint.Name)
	}
	return r
}

// filters are the list's filters, from the query: ns, kind, state and page.
type filters struct {
	Namespace string
	// Kind is the owner kind shown, "" for both.
	Kind  string
	State State
	Page  int
	// Namespaces and Kinds are the choices.
	Namespaces []string
	Kinds      []string
}

func readFilters(r *http.Request) filters {
	q := r.URL.Query()
	f := filters{Namespace: q.Get("ns"), Kind: kindNamed(q.Get("kind"), ownerKinds), State: State(q.Get("state")), Kinds: ownerKinds}
	if !f.State.Valid() {
		f.State = StateAll
	}
	f.Page, _ = strconv.Atoi(q.Get("page"))
	f.Page = max(f.Page, 1)
	return f
}

// keeps reports whether an owner passes the namespace and kind filters.
func (f filters) keeps(o view.Owner) bool {
	return (f.Namespace == "" || o.Namespace == f.Namespace) && (f.Kind == "" || o.Kind == f.Kind)
}

// url is the list with these filters, in state and on page.
func (f filters) url(state State, page int) string {
	q := url.Values{}
	if f.Namespace != "" {
		q.Set("ns", f.Namespace)
	}
	if f.Kind != "" {
		q.Set("kind", strings.ToLower(f.Kind))
	}
	if state != StateAll {
		q.Set("state", string(state))
	}
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	if len(q) == 0 {
		return "/"
	}
	return "/?" + q.Encode()
}

// count is the number of owners in a state, a link to them.
type count struct {
	Label string
	N     int
	URL   string
	On    bool
}

type listData struct {
	Counts  []count
	Banners []string
	Rows    []row
	// From and To number the rows shown among Total.
	From, To, Total int
	Prev, Next      string
}

// listRelevant: the list shows the owners of its kinds and namespace, and the state of
// their watches.
func listRelevant(r *http.Request) func(Key) bool {
	f := readFilters(r)
	return func(k Key) bool {
		return (f.Kind == "" || k.Kind == f.Kind) && slices.Contains(ownerKinds, k.Kind) &&
			(k.Name == "" || f.Namespace == "" || k.Namespace == f.Namespace)
	}
}

// list is the page of every owner: the counts of each state, a link each, and a page of
// the owners in the chosen state.
func (s *Server) list(r *http.Request) rendering {
	f := readFilters(r)
	opts := view.Options{Now: s.opts.Now()}
	owners := s.store.Owners(f.keeps)
	d := listData{Banners: s.banners(ownerKinds...)}
	var shown []view.Owner
	for _, st := range States {
		n := 0
		for _, o := range owners {
			if st.Has(o) {
				n++
				if st == f.State {
					shown = append(shown, o)
				}
			}
		}
		d.Counts = append(d.Counts, count{Label: st.Label(), N: n, URL: f.url(st, 1), On: st == f.State})
	}
	d.Total = len(shown)
	pages := max(1, (d.Total+s.opts.PageSize-1)/s.opts.PageSize)
	f.Page = min(f.Page, pages)
	d.From = (f.Page - 1) * s.opts.PageSize
	d.To = min(d.From+s.opts.PageSize, d.Total)
	for _, o := range shown[d.From:d.To] {
		d.Rows = append(d.Rows, s.row(o, opts))
	}
	if d.To > d.From {
		d.From++
	}
	if f.Page > 1 {
		d.Prev = f.url(f.State, f.Page-1)
	}
	if f.Page < pages {
		d.Next = f.url(f.State, f.Page+1)
	}
	f.Namespaces = s.store.Namespaces()
	return rendering{title: "Owners", main: "list", data: d, filters: &f}
}

// node is a resource in the tree of an owner page.
type node struct {
	Name, Object, Template, AlsoReads string
	// Stamped says at which generation the resource was stamped, when that is not the
	// owner's current one.
	Stamped    string
	Conditions []metav1.Condition
	// Why is the resource's problem as `kubectl carto why` prints it, when it is not Ready.
	Why      string
	Outputs  []output
	Children []*node
}

type output struct {
	Name, Preview, Digest, Short, Changed string
}

type ownerData struct {
	Found                   bool
	Kind, Namespace, Name   string
	Summary                 []view.Field
	Blueprint, BlueprintURL string
	Banners                 []string
	// Why are the owner's problems as `kubectl carto why` prints them.
	Why        []string
	Tree       []*node
	Conditions []metav1.Condition
	Age        func(metav1.Time) string
}

func ownerKey(r *http.Request) Key {
	return Key{Kind: kindNamed(r.PathValue("kind"), ownerKinds), Namespace: r.PathValue("ns"), Name: r.PathValue("name")}
}

// owner is the page of one owner: its summary, its problems, its resources as a tree
// along their inputs, and its conditions.
func (s *Server) owner(r *http.Request) rendering {
	k := ownerKey(r)
	d := ownerData{Kind: k.Kind, Namespace: k.Namespace, Name: k.Name}
	if k.Kind == "" {
		return rendering{status: http.StatusNotFound, title: "Not found", main: "owner", data: d}
	}
	d.Banners = s.banners(k.Kind)
	o, ok := s.store.Owner(k)
	title := k.Kind + " " + k.Namespace + "/" + k.Name
	if !ok {
		return rendering{status: http.StatusNotFound, title: title, main: "owner", data: d}
	}
	opts := view.Options{Now: s.opts.Now()}
	d.Found, d.Summary, d.Conditions = true, o.Summary(), o.Status.Conditions
	d.Age = func(t metav1.Time) string { return opts.Age(t.Time) }
	if o.Blueprint != nil {
		d.Blueprint, d.BlueprintURL = o.Blueprint.Kind+" "+o.Blueprint.Name, blueprintURL(o.Blueprint.Kind, o.Blueprint.Name)
	}
	whyOf := map[string]string{}
	for _, p := range view.Problems(o) {
		line := p.Line(o)
		d.Why = append(d.Why, line)
		if p.Resource != "" {
			whyOf[p.Resource] = line
		}
	}
	var build func([]*view.Node) []*node
	build = func(ns []*view.Node) []*node {
		var out []*node
		for _, n := range ns {
			res := n.Resource
			nd := &node{Name: res.Name, Object: view.ObjectOf(res), Template: view.TemplateOf(res), Conditions: view.ShownConditions(res),
				AlsoReads: strings.Join(n.AlsoReads, ", "), Why: whyOf[res.Name], Children: build(n.Children)}
			if res.ObservedGeneration != 0 && res.ObservedGeneration != o.Generation {
				nd.Stamped = fmt.Sprintf("stamped at generation %d", res.ObservedGeneration)
			}
			for _, out := range res.Outputs {
				nd.Outputs = append(nd.Outputs, output{Name: out.Name, Preview: out.Preview, Digest: out.Digest,
					Short: view.ShortDigest(out.Digest), Changed: opts.Age(out.LastTransitionTime.Time)})
			}
			out = append(out, nd)
		}
		return out
	}
	d.Tree = build(view.Tree(o))
	return rendering{title: title, main: "owner", data: d}
}

// ownerRelevant: an owner page shows the owner and the state of its kind's watch.
func ownerRelevant(r *http.Request) func(Key) bool {
	want := ownerKey(r)
	return func(k Key) bool { return k == want || k == Key{Kind: want.Kind} }
}

// group is a group of a rollout, with its counts.
type group struct {
	Name   string
	Counts v1alpha1.RolloutCounts
}

type blueprintData struct {
	Found      bool
	Kind, Name string
	Summary    []view.Field
	Banners    []string
	Groups     []group
	// Failed are the owners the rollout failed, as rows when the store has them.
	Failed []row
	// Owners are the first owners the blueprint realizes; More is how many others.
	Owners []row
	More   int
}

func blueprintKey(r *http.Request) Key {
	return Key{Kind: kindNamed(r.PathValue("kind"), blueprintKinds), Name: r.PathValue("name")}
}

// blueprint is the page of a supply chain or delivery: its rollout (strategy, revisions,
// conditions, counts per group, failed owners) and the owners it realizes.
func (s *Server) blueprint(r *http.Request) rendering {
	k := blueprintKey(r)
	d := blueprintData{Kind: k.Kind, Name: k.Name}
	if k.Kind == "" {
		return rendering{status: http.StatusNotFound, title: "Not found", main: "blueprint", data: d}
	}
	ownerKind := ownerKindOf(k.Kind)
	d.Banners = s.banners(k.Kind, ownerKind)
	bp, ok := s.store.Blueprint(k)
	title := k.Kind + " " + k.Name
	if !ok {
		return rendering{status: http.StatusNotFound, title: title, main: "blueprint", data: d}
	}
	opts := view.Options{Now: s.opts.Now()}
	d.Found, d.Summary = true, bp.Summary(opts)
	if ro := bp.Status.Rollout; ro != nil {
		for _, g := range ro.Groups {
			name := g.Name
			if name == "" {
				name = "(no group)"
			}
			d.Groups = append(d.Groups, group{name, g.Counts})
		}
		d.Groups = append(d.Groups, group{"all", ro.Counts})
		for _, f := range ro.FailedOwners {
			ns, name, _ := strings.Cut(f, "/")
			if o, ok := s.store.Owner(Key{ownerKind, ns, name}); ok {
				d.Failed = append(d.Failed, s.row(o, opts))
			} else {
				d.Failed = append(d.Failed, row{ID: ownerKind + "/" + f, Kind: ownerKind, Namespace: ns, Name: name, URL: ownerURL(ownerKind, ns, name)})
			}
		}
	}
	owners := s.store.Owners(func(o view.Owner) bool {
		return o.Kind == ownerKind && o.Blueprint != nil && o.Blueprint.Name == k.Name
	})
	for i, o := range owners {
		if i == s.opts.PageSize {
			d.More = len(owners) - i
			break
		}
		d.Owners = append(d.Owners, s.row(o, opts))
	}
	return rendering{title: title, main: "blueprint", data: d}
}

// blueprintRelevant: a blueprint page shows the blueprint, the owners of its kind (some
// are its own), and the state of both watches.
func blueprintRelevant(r *http.Request) func(Key) bool {
	want := blueprintKey(r)
	ownerKind := ownerKindOf(want.Kind)
	return func(k Key) bool { return k == want || k.Kind == ownerKind || k == Key{Kind: want.Kind} }
}
