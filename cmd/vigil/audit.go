package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/policy/redact"
)

// newAuditCmd is `vigil audit`: check and read an audit file (SPEC P8).
func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Verify and read vigil's audit file",
		Long: "vigil writes every decision (allow, block, approval requested, approved, denied,\n" +
			"expired, executed, settled) to an audit file as hash-chained JSON lines. These\n" +
			"commands check that chain and show its records.",
	}
	cmd.AddCommand(newAuditVerifyCmd(), newAuditTailCmd())
	return cmd
}

func newAuditVerifyCmd() *cobra.Command {
	var path string
	cmd := &cobra.Command{
		Use:   "verify --file PATH",
		Short: "Check that no record was edited, deleted or reordered",
		Long: "verify recomputes every record's hash and follows the chain from the first\n" +
			"record. It exits 0 when the chain is intact and 1 naming the first bad record\n" +
			"otherwise. Records cut off the end of the file cannot be told from a file that\n" +
			"ends there: compare the last hash with one kept elsewhere to catch that.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := audit.VerifyFile(path)
			if err != nil {
				var ce *audit.ChainError
				if errors.As(err, &ce) {
					fmt.Fprintf(cmd.ErrOrStderr(), "FAIL: %s: %v\n", path, ce)
				} else {
					fmt.Fprintf(cmd.ErrOrStderr(), "FAIL: %v\n", err)
				}
				return exitError{code: 1}
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "ok: %d records, chain intact\n", n)
			return err
		},
	}
	cmd.Flags().StringVar(&path, "file", "", "audit file to verify (required)")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

func newAuditTailCmd() *cobra.Command {
	var (
		path string
		n    int
	)
	cmd := &cobra.Command{
		Use:   "tail --file PATH [-n 20]",
		Short: "Show the most recent audit records",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n < 1 {
				return fmt.Errorf("-n must be at least 1, got %d", n)
			}
			recs, err := audit.ReadFile(path)
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "FAIL: %v\n", err)
				return exitError{code: 1}
			}
			if len(recs) > n {
				recs = recs[len(recs)-n:]
			}
			return writeAuditTable(cmd, recs)
		},
	}
	cmd.Flags().StringVar(&path, "file", "", "audit file to read (required)")
	cmd.Flags().IntVarP(&n, "lines", "n", 20, "how many records to show")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// writeAuditTable prints records one per row. Free text is redacted again
// and kept to one line: the file may predate a redaction rule, and a
// terminal is one more place a secret should not appear.
func writeAuditTable(cmd *cobra.Command, recs []audit.Record) error {
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tTIME\tACTOR\tACTION\tTOOL\tTARGET\tCOMMAND\tOUTCOME\tAPPROVAL")
	for _, r := range recs {
		outcome := r.Outcome
		if r.Reason != "" {
			outcome += " (" + r.Reason + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			r.Seq, r.Time.UTC().Format(time.RFC3339), cell(r.Actor, 24), cell(string(r.Action), 20),
			cell(r.Tool, 16), cell(r.Target, 24), cell(r.Command, 60), cell(outcome, 40), cell(r.ApprovalID, 16))
	}
	return tw.Flush()
}

// cell makes s fit one table cell: redacted, one line, at most max runes,
// "-" when empty.
func cell(s string, max int) string {
	s = redact.String(s)
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "-"
	}
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
