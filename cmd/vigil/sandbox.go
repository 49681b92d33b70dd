package main

import (
	"github.com/spf13/cobra"

	"github.com/vigilops/vigil/tools/sandbox"
)

// newSandboxExecCmd is `vigil sandbox-exec`: run a command confined as a
// read on this machine would be, to see what the read sandbox allows.
// Package sandbox does the work.
func newSandboxExecCmd() *cobra.Command {
	return &cobra.Command{
		Use:   sandbox.Subcommand + " [--connect PORT,...] [--datagrams] [--best-effort] [--shell PATH] [-v] --tmp DIR -- 'COMMAND'",
		Short: "Run a command in the read sandbox (Landlock, no capabilities), as vigil runs reads here",
		Long: "Runs COMMAND with the shell, confined as vigil confines a read on this machine: it may read every file, " +
			"write only /dev/null and DIR, signal nothing outside, change no IPC object, connect over TCP only to the --connect ports " +
			"and send no UDP unless --datagrams.",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Main executes the shell; it returns only on failure.
			return exitError{code: sandbox.Main(args, cmd.ErrOrStderr())}
		},
	}
}
