package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/surveyor-dev/surveyor/pkg/web"
)

func (a *app) webCommand() *cobra.Command {
	var address string
	var allowedHosts []string
	var allNamespaces bool
	cmd := &cobra.Command{
		Use:   "web",
		Short: "Serve a live web page of every owner, its supply chain and its blueprint's rollout",
		Long: `web serves, on 127.0.0.1:8080 by default, a page listing the Workloads and
Deliverables you can list, with counts by state (Ready, not Ready, unhealthy, complete,
rolling out) and filters by namespace, kind and state; a page per owner with its resources
as a tree along their inputs, each with its conditions, object and outputs, and why it is
not Ready as 'kubectl carto why' says it; a page per supply chain or delivery with its
rollout; and the Runnables, each with its conditions, outputs and runs (/runnables). The
pages follow the cluster live (one watch per kind, server-sent events).

It reads with your kubeconfig and needs only get, list and watch on workloads,
deliverables, clustersupplychains, clusterdeliveries and runnables (carto.run). It watches
every namespace; with -n only that one's owners and Runnables.`,
		Example: `  kubectl carto web
  kubectl carto web -n team-a --address 127.0.0.1:9000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hosts, err := listenHosts(address)
			if err != nil {
				return fmt.Errorf("--address %q: %w", address, err)
			}
			opts := web.Options{AllowedHosts: append(hosts, allowedHosts...)}
			c, err := a.cluster()
			if err != nil {
				return err
			}
			namespace := ""
			if a.flags.Namespace != nil && *a.flags.Namespace != "" && !allNamespaces {
				namespace = c.namespace
			}
			return a.serveWeb(cmd.Context(), c, namespace, address, opts)
		},
	}
	cmd.Flags().StringVar(&address, "address", "127.0.0.1:8080", "the address to serve on; any other than a loopback one shows the cluster's status to whoever can reach it. "+
		"Requests must name a loopback host or the address served on (every address of this machine for 0.0.0.0 or [::]) in their Host header, or one of --allowed-hosts; others get 421")
	cmd.Flags().StringSliceVar(&allowedHosts, "allowed-hosts", nil, "more host names (or addresses) requests may name in their Host header, e.g. the DNS name of this machine when --address is not a loopback one; "+
		"the Host check stays on for every address, against DNS rebinding")
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "watch every namespace (the default unless -n is given)")
	return cmd
}

// serveWeb serves the web view on address until ctx ends.
func (a *app) serveWeb(ctx context.Context, c *cluster, namespace, address string, opts web.Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	store := web.NewStore()
	srv, err := web.NewServer(ctx, store, opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", address)
	if err != nil {
		return err
	}
	watched := make(chan error, 1)
	go func() { watched <- web.Watch(ctx, c.rest, namespace, store) }()
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(a.out, "Serving the web view on http://%s/ (Ctrl-C stops)\n", ln.Addr())
	select {
	case err = <-served:
	case <-ctx.Done():
		shutdown, stop := context.WithTimeout(context.Background(), 5*time.Second)
		defer stop()
		err = hs.Shutdown(shutdown)
	}
	cancel()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	// Watch returns the context's error once cancelled; any other is why it stopped early.
	if werr := <-watched; werr != nil && !errors.Is(werr, context.Canceled) {
		err = errors.Join(err, fmt.Errorf("watching the cluster: %w", werr))
	}
	return err
}

// listenHosts are the hosts a request to address may name in its Host header besides the
// loopback ones: the address's own IP, or for a wildcard address (0.0.0.0, [::], or none)
// every address of this machine's interfaces. Names other than localhost are never
// allowed by default: a name is what DNS rebinding uses, and only the user knows which
// names are theirs (--allowed-hosts).
func listenHosts(address string) ([]string, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	ip := net.ParseIP(host)
	switch {
	case host == "localhost" || (ip != nil && ip.IsLoopback()):
		return nil, nil
	case ip == nil && host != "":
		// A name to listen on: requests name it.
		return []string{host}, nil
	case ip != nil && !ip.IsUnspecified():
		return []string{ip.String()}, nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			out = append(out, n.IP.String())
		}
	}
	return out, nil
}
