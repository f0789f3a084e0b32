package main

import "github.com/spf13/cobra"

func (a *app) lintCommand() *cobra.Command {
	return &cobra.Command{Use: "lint", Short: "todo"}
}
