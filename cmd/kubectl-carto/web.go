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
	var allNamespaces bool
	cmd := &cobra.Command{
		Use:   "web",
		Short: "Serve a live web page of every owner, its supply chain and its blueprint's rollout",
		Long: `web serves, on 127.0.0.1:8080 by default, a page listing the Workloads and
Deliverables you can list, with counts by state (Ready, not Ready, unhealthy, complete,
rolling out) and filters by namespace, kind and state; a page per owner with its resources
as a tree along their inputs, each with its conditions, object and outputs, and why it is
not Ready as 'kubectl carto why' says it; and a page per supply chain or delivery with its
rollout. The pages follow the cluster live (one watch per kind, server-sent events).

It reads with your kubeconfig and needs only get, list and watch on workloads,
deliverables, clustersupplychains and clusterdeliveries (carto.run). It watches every
namespace; with -n only that one's owners.`,
		Example: `  kubectl carto web
  kubectl carto web -n team-a --address 127.0.0.1:9000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return fmt.Errorf("--address %q: %w", address, err)
			}
			ip := net.ParseIP(host)
			opts := web.Options{AnyHost: host != "localhost" && (ip == nil || !ip.IsLoopback())}
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
	cmd.Flags().StringVar(&address, "address", "127.0.0.1:8080", "the address to serve on; any other than a loopback one shows the cluster's status to whoever can reach it")
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
	<-watched
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
