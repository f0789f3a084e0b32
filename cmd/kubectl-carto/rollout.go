package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/view"
)

func (a *app) rolloutCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Follow the progressive rollout of a blueprint change",
	}
	var watch bool
	status := &cobra.Command{
		Use:   "status BLUEPRINT",
		Short: "Show a blueprint's rollout: its revisions, groups, owners per state and failed owners",
		Long: `rollout status shows where the rollout of a ClusterSupplyChain (NAME or
clustersupplychain/NAME) or ClusterDelivery (clusterdelivery/NAME) stands: its strategy,
the target and stable revisions, the group being admitted, RolloutProgressing and
RolloutDegraded, the owners in each state per group, and the owners that failed.

With --watch it prints again on every change until the rollout is complete (exit 0) or
degraded (exit 1).`,
		Example: `  kubectl carto rollout status web-from-source
  kubectl carto rollout status clusterdelivery/deliver-source -w`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := parseRef(args[0], supplyChains, supplyChains, deliveries)
			if err != nil {
				return err
			}
			c, err := a.cluster()
			if err != nil {
				return err
			}
			obj, err := c.get(cmd.Context(), r.kind, "", r.name)
			if err != nil {
				return err
			}
			if !watch {
				return a.printRollout(obj)
			}
			return a.followRollout(cmd.Context(), c, r)
		},
	}
	status.Flags().BoolVarP(&watch, "watch", "w", false, "print again on every change until the rollout is complete or degraded")
	cmd.AddCommand(status)
	return cmd
}

func (a *app) printRollout(obj v1alpha1.Object) error {
	opts, err := a.options()
	if err != nil {
		return err
	}
	bp, _ := view.BlueprintOf(obj)
	return view.PrintRollout(a.out, bp, opts)
}

// followRollout prints the rollout on every change until it is complete or degraded.
func (a *app) followRollout(ctx context.Context, c *cluster, r ref) error {
	last := ""
	var degraded *metav1.Condition
	err := c.watch(ctx, r.kind, "", r.name, func(o v1alpha1.Object, deleted bool) (bool, error) {
		if deleted {
			return true, fmt.Errorf("%s %s was deleted", r.kind.Kind, r.name)
		}
		if o.GetResourceVersion() == last {
			return false, nil
		}
		if last != "" {
			fmt.Fprintln(a.out)
		}
		last = o.GetResourceVersion()
		if err := a.printRollout(o); err != nil {
			return true, err
		}
		bp, _ := view.BlueprintOf(o)
		if bp.Strategy == nil {
			return true, nil
		}
		if c := meta.FindStatusCondition(bp.Status.Conditions, v1alpha1.ConditionRolloutDegraded); c != nil && c.Status == metav1.ConditionTrue {
			degraded = c
			return true, nil
		}
		return bp.Status.Rollout != nil && bp.Status.Rollout.Complete, nil
	})
	if err != nil {
		return ignoreCanceled(err)
	}
	if degraded != nil {
		return &exitError{code: 1, err: fmt.Errorf("the rollout of %s %s is degraded: %s: %s", r.kind.Kind, r.name, degraded.Reason, degraded.Message)}
	}
	return nil
}
