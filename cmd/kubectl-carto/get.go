package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/manifest"
	"github.com/surveyor-dev/surveyor/pkg/view"
)

// owners are the kinds get, tree, why and wait read.
var owners = []*kind{workloads, deliverables}

// gettable are the kinds get reads: the owners and Runnables.
var gettable = []*kind{workloads, deliverables, runnables}

func (a *app) getCommand() *cobra.Command {
	var allNamespaces, watch bool
	var output string
	cmd := &cobra.Command{
		Use:   "get [workloads|deliverables|runnables] | get OWNER...",
		Short: "List owners or Runnables, or show one: its conditions at their generations and its resources or runs",
		Long: `Without a name, get lists the Workloads (or Deliverables) of the namespace, a row
each: its supply chain, generation, Ready (with the generation it speaks about when that
is not the current one), Available (with the last good generation), its resources that
are Ready, its rollout and completion, and the reason it is not Ready.

With OWNER (NAME, workload/NAME or deliverable/NAME) it shows that owner: Ready at the
current generation beside Available at the last good one, its rollout, every condition
with its generation, and one row per resource.

With runnable/NAME it shows that Runnable: Ready, every condition with its generation,
its outputs, and its runs, newest first, with their Succeeded condition. get runnables
lists them, a row each with the newest run.`,
		Example: `  kubectl carto get -A
  kubectl carto get deliverables
  kubectl carto get hello-web
  kubectl carto get deliverable/hello-delivered -o yaml
  kubectl carto get runnable/tests`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "" && output != "yaml" && output != "json" {
				return fmt.Errorf("--output must be yaml or json, not %q", output)
			}
			list := len(args) == 0
			k := workloads
			if len(args) == 1 && !strings.Contains(args[0], "/") {
				if named := kindNamed(args[0], gettable); named != nil {
					list, k = true, named
				}
			}
			if list && k == runnables {
				return a.listRunnables(cmd.Context(), allNamespaces, output, watch)
			}
			if list {
				return a.list(cmd.Context(), k, allNamespaces, output, watch)
			}
			if allNamespaces {
				return errors.New("--all-namespaces lists owners: name none")
			}
			if watch && len(args) > 1 {
				return errors.New("--watch follows one owner: name only one")
			}
			c, err := a.cluster()
			if err != nil {
				return err
			}
			for i, arg := range args {
				r, err := parseRef(arg, workloads, gettable...)
				if err != nil {
					return err
				}
				obj, err := c.get(cmd.Context(), r.kind, c.namespace, r.name)
				if err != nil {
					return err
				}
				if i > 0 && output == "" {
					fmt.Fprintln(a.out)
				}
				if watch {
					return a.follow(cmd.Context(), c, r)
				}
				if err := a.show(obj, r.kind, output); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "list the owners of every namespace")
	cmd.Flags().StringVarP(&output, "output", "o", "", "print the objects themselves: yaml or json")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "after printing, print again whenever it changes (Ctrl-C stops)")
	return cmd
}

// listed reads the objects of kind k in the namespace, or in all of them, with the cluster
// and the namespace read ("" for all).
func (a *app) listed(ctx context.Context, k *kind, allNamespaces bool) (*cluster, string, []v1alpha1.Object, error) {
	c, err := a.cluster()
	if err != nil {
		return nil, "", nil, err
	}
	ns := c.namespace
	if allNamespaces {
		ns = ""
	}
	objs, err := c.list(ctx, k, ns)
	return c, ns, objs, err
}

// list prints the owners of kind k in the namespace, or in all of them.
func (a *app) list(ctx context.Context, k *kind, allNamespaces bool, output string, watch bool) error {
	c, ns, objs, err := a.listed(ctx, k, allNamespaces)
	if err != nil {
		return err
	}
	if output != "" {
		return a.printObjects(objs, k, output)
	}
	opts, err := a.options()
	if err != nil {
		return err
	}
	rows := make([]view.Owner, len(objs))
	printed := map[string]string{} // namespace/name -> resourceVersion
	for i, o := range objs {
		rows[i] = view.OwnerOf(o.(v1alpha1.Owner))
		printed[o.GetNamespace()+"/"+o.GetName()] = o.GetResourceVersion()
	}
	if len(rows) == 0 && !watch {
		fmt.Fprintf(a.errOut, "No %s found %s.\n", k.Resource, where(ns, allNamespaces))
		return nil
	}
	p := &view.ListPrinter{Kind: k.Kind, Options: view.ListOptions{Options: opts, AllNamespaces: allNamespaces}}
	if err := p.Print(a.out, rows); err != nil || !watch {
		return err
	}
	err = c.watch(ctx, k, ns, "", func(o v1alpha1.Object, deleted bool) (bool, error) {
		key := o.GetNamespace() + "/" + o.GetName()
		if deleted || printed[key] == o.GetResourceVersion() {
			return false, nil
		}
		printed[key] = o.GetResourceVersion()
		p.Options.Now = a.now()
		return false, p.Print(a.out, []view.Owner{view.OwnerOf(o.(v1alpha1.Owner))})
	})
	return ignoreCanceled(err)
}

// follow prints one owner whenever it changes, until the user stops it.
func (a *app) follow(ctx context.Context, c *cluster, r ref) error {
	last := ""
	err := c.watch(ctx, r.kind, c.namespace, r.name, func(o v1alpha1.Object, deleted bool) (bool, error) {
		if deleted {
			return true, fmt.Errorf("%s %s/%s was deleted", strings.ToLower(r.kind.Kind), c.namespace, r.name)
		}
		if o.GetResourceVersion() == last {
			return false, nil
		}
		if last != "" {
			fmt.Fprintln(a.out)
		}
		last = o.GetResourceVersion()
		return false, a.show(o, r.kind, "")
	})
	return ignoreCanceled(err)
}

// show prints one object get reads: an owner in full, or a Runnable with its runs, or the
// object itself in output (yaml or json).
func (a *app) show(obj v1alpha1.Object, k *kind, output string) error {
	rn, ok := obj.(*v1alpha1.Runnable)
	if !ok || output != "" {
		return a.printOwner(obj, k, output, view.PrintOwner)
	}
	opts, err := a.options()
	if err != nil {
		return err
	}
	return view.PrintRunnable(a.out, view.RunnableOf(rn), opts)
}

// listRunnables prints the Runnables of the namespace, or of all of them.
func (a *app) listRunnables(ctx context.Context, allNamespaces bool, output string, watch bool) error {
	if watch {
		return errors.New("--watch follows one runnable: name it (runnable/NAME)")
	}
	_, ns, objs, err := a.listed(ctx, runnables, allNamespaces)
	if err != nil {
		return err
	}
	if output != "" {
		return a.printObjects(objs, runnables, output)
	}
	if len(objs) == 0 {
		fmt.Fprintf(a.errOut, "No runnables found %s.\n", where(ns, allNamespaces))
		return nil
	}
	opts, err := a.options()
	if err != nil {
		return err
	}
	rows := make([]view.Runnable, len(objs))
	for i, o := range objs {
		rows[i] = view.RunnableOf(o.(*v1alpha1.Runnable))
	}
	return view.PrintRunnables(a.out, rows, view.ListOptions{Options: opts, AllNamespaces: allNamespaces})
}

// where is "in namespace ns", or "in any namespace".
func where(ns string, allNamespaces bool) string {
	if allNamespaces {
		return "in any namespace"
	}
	return "in namespace " + ns
}

// printOwner prints one owner with print, or as the object itself in output (yaml or
// json).
func (a *app) printOwner(obj v1alpha1.Object, k *kind, output string, print func(io.Writer, view.Owner, view.Options) error) error {
	if output != "" {
		return a.printObjects([]v1alpha1.Object{obj}, k, output)
	}
	opts, err := a.options()
	if err != nil {
		return err
	}
	return print(a.out, view.OwnerOf(obj.(v1alpha1.Owner)), opts)
}

// printObjects prints objects as a YAML stream or as JSON (one object, or a List).
func (a *app) printObjects(objs []v1alpha1.Object, k *kind, output string) error {
	for _, o := range objs {
		o.GetObjectKind().SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(k.Kind))
		o.SetManagedFields(nil)
	}
	if output == "json" {
		var v any = objs[0]
		if len(objs) != 1 {
			v = map[string]any{"apiVersion": "v1", "kind": "List", "items": objs}
		}
		b, err := json.MarshalIndent(v, "", "    ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(a.out, string(escapeJSON(b)))
		return err
	}
	nodes := make([]*kyaml.RNode, len(objs))
	for i, o := range objs {
		n, err := manifest.Node(o)
		if err != nil {
			return err
		}
		nodes[i] = n
	}
	return writeYAML(a.out, nodes...)
}

func (a *app) treeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "tree OWNER",
		Short: "Show an owner's resources as a tree along their inputs, with outputs and completion",
		Long: `tree shows the resources of a Workload (NAME or workload/NAME) or Deliverable
(deliverable/NAME) along the data flow: each resource under the resource it reads first,
with its object, Ready, Healthy and rule conditions such as Complete, its template, why it
is not Ready, and its outputs: a preview, the short digest and when it last changed.`,
		Example: `  kubectl carto tree hello-web`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			obj, r, err := a.getOwner(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.printOwner(obj, r.kind, "", view.PrintTree)
		},
	}
}

func (a *app) whyCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "why OWNER",
		Short: "Say why an owner is not Ready: one line per problem; exit 0 when it is Ready",
		Long: `why prints one line per problem that keeps a Workload or Deliverable from being
Ready at its current generation: the resource and its object (or the owner itself), the
condition that decides it, its reason and message. It exits 0 when the owner is Ready at
its current generation, and 1 when it is not.`,
		Example: `  kubectl carto why hello-web`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			obj, r, err := a.getOwner(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if err := a.printOwner(obj, r.kind, "", view.PrintWhy); err != nil {
				return err
			}
			if !view.OwnerOf(obj.(v1alpha1.Owner)).ReadyNow() {
				return &exitError{code: 1}
			}
			return nil
		},
	}
}

// getOwner reads the owner named by arg in the namespace of the flags.
func (a *app) getOwner(ctx context.Context, arg string) (v1alpha1.Object, ref, error) {
	r, err := parseRef(arg, workloads, owners...)
	if err != nil {
		return nil, r, err
	}
	c, err := a.cluster()
	if err != nil {
		return nil, r, err
	}
	obj, err := c.get(ctx, r.kind, c.namespace, r.name)
	return obj, r, err
}

// ignoreCanceled treats the user stopping a watch (Ctrl-C) as success.
func ignoreCanceled(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
