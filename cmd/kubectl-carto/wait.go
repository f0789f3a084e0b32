package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/view"
)

func (a *app) waitCommand() *cobra.Command {
	var goal string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait OWNER --for=ready|available|complete [--timeout=D]",
		Short: "Wait until an owner is Ready, Available or Complete; fail fast when it cannot be",
		Long: `wait watches a Workload (NAME or workload/NAME) or Deliverable (deliverable/NAME)
until it meets the goal, and knows which generation each condition speaks about:

  ready      Ready is True at the owner's current generation; an older generation's
             Ready never counts.
  available  Available is True: the last good generation is serving, even while a
             newer generation is rolling out (Available keeps the generation it was
             last True at).
  complete   Complete is True and the controller has observed the current generation.

It exits 0 when the goal is met; 1 at once when Ready is False at the current generation
(printing why), since only a change can fix that; 2 when the timeout passes first. The
timeout bounds the whole wait, the first request included: a cluster that does not
answer is a timeout, not a hang.`,
		Example: `  kubectl carto wait hello-web --for=ready --timeout=2m
  kubectl carto wait deliverable/hello-delivered --for=available`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g := view.Goal(strings.ToLower(goal))
			if !slices.Contains(view.Goals, g) {
				return fmt.Errorf("--for must be ready, available or complete, not %q", goal)
			}
			r, err := parseRef(args[0], workloads, owners...)
			if err != nil {
				return err
			}
			c, err := a.cluster()
			if err != nil {
				return err
			}
			return a.wait(cmd.Context(), c, r, g, timeout)
		},
	}
	cmd.Flags().StringVar(&goal, "for", "ready", "ready, available or complete")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait; 0 waits forever")
	return cmd
}

// wait watches the owner until it meets goal (exit 0), fails (exit 1, printing why) or
// the timeout passes (exit 2).
func (a *app) wait(ctx context.Context, c *cluster, r ref, goal view.Goal, timeout time.Duration) error {
	// The deadline is set before the first request: every request (the get, the watch's
	// list and watch) carries ctx, so an API server that accepts the connection and never
	// answers ends in the timeout's exit 2, not a hang.
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	timedOut := func(state string) error {
		return &exitError{code: 2, err: fmt.Errorf("timed out after %s waiting for %s to be %s: %s", timeout, r.name, goal, state)}
	}
	// The owner must exist: a typo should not wait for the timeout.
	if _, err := c.get(ctx, r.kind, c.namespace, r.name); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return timedOut("the cluster did not answer")
		}
		return err
	}
	var last view.Owner
	var outcome view.Outcome
	err := c.watch(ctx, r.kind, c.namespace, r.name, func(o v1alpha1.Object, deleted bool) (bool, error) {
		if deleted {
			return true, fmt.Errorf("%s %s/%s was deleted", strings.ToLower(r.kind.Kind), c.namespace, r.name)
		}
		last = view.OwnerOf(o.(v1alpha1.Owner))
		outcome = view.Check(last, goal)
		return outcome != view.Waiting, nil
	})
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		state := "the owner was never read"
		if last.Name != "" {
			state = view.State(last, goal)
		}
		return timedOut(state)
	case err != nil:
		return err
	case outcome == view.Failed:
		opts, err := a.options()
		if err != nil {
			return err
		}
		if err := view.PrintWhy(a.out, last, opts); err != nil {
			return err
		}
		return &exitError{code: 1, err: fmt.Errorf("%s cannot become %s: Ready is False at generation %d", last.Ref(), goal, last.Generation)}
	}
	_, err = fmt.Fprintln(a.out, view.State(last, goal))
	return err
}
