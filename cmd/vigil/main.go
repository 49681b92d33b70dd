// Command vigil is a chat-ops bot for Slack and Matrix that investigates
// infrastructure with tools and changes nothing without an approval.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// exitError carries a process exit status through cobra without printing
// anything more: the command has already said what went wrong.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "vigil:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	root := newRootCmd()
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "vigil",
		Short:         "Chat-ops bot that investigates infrastructure and changes nothing without approval",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newVersionCmd(),
		newExplainCmd(),
		newChatCmd(),
		newRunCmd(),
		newAuditCmd(),
		newSandboxExecCmd(),
		newEvalCmd(),
		newCheckConfigCmd(),
	)
	setVersionFlag(root)
	return root
}
