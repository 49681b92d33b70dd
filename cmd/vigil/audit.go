package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/policy/redact"
)

// newAuditCmd is `vigil audit`: check and read an audit file (SPEC P8, R4).
func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Verify and read vigil's audit file",
		Long: "vigil writes every decision (allow, block, approval requested, approved, denied,\n" +
			"expired, executed, settled) to an audit file as chained JSON lines, sealed with the\n" +
			"audit key (audit.key_file or VIGIL_AUDIT_KEY), and keeps the chain's head beside it\n" +
			"(<file>.head). These commands check that chain and show its records. Without --file\n" +
			"they read audit.file, and the keys, from --config and the VIGIL_AUDIT_* variables.",
	}
	cmd.AddCommand(newAuditVerifyCmd(), newAuditTailCmd())
	return cmd
}

// auditTarget is the audit file and keys a command works on.
type auditTarget struct {
	file     string
	config   string
	keyFiles []string
}

func (a *auditTarget) flags(cmd *cobra.Command, keys bool) {
	cmd.Flags().StringVar(&a.file, "file", "", "audit file (default: audit.file from --config)")
	cmd.Flags().StringVar(&a.config, "config", "", "configuration to read audit.file and the audit keys from")
	if keys {
		cmd.Flags().StringArrayVar(&a.keyFiles, "key-file", nil,
			"a key the log was sealed with, besides the configured ones (repeat for several)")
	}
}

// resolve returns the audit file and the keyring (nil: no key known).
func (a *auditTarget) resolve() (string, *audit.Keyring, []string, error) {
	c, err := config.LoadAudit(a.config)
	if err != nil {
		return "", nil, nil, err
	}
	path := a.file
	if path == "" {
		path = c.File
	}
	if path == "" {
		return "", nil, nil, errors.New("no audit file: give --file, or --config with audit.file set (or VIGIL_AUDIT_FILE)")
	}
	c.PreviousKeyFiles = append(c.PreviousKeyFiles, a.keyFiles...)
	keys, warns, err := c.Keyring()
	if err != nil {
		return "", nil, nil, fmt.Errorf("config: %w", err)
	}
	return path, keys, warns, nil
}

func newAuditVerifyCmd() *cobra.Command {
	var target auditTarget
	cmd := &cobra.Command{
		Use:   "verify [--file PATH | --config PATH] [--key-file PATH...]",
		Short: "Check that no record was edited, deleted, reordered or cut off",
		Long: "verify recomputes every record's MAC (or hash) with the audit keys, follows the\n" +
			"chain from the first record and checks the log reaches its head, the last record\n" +
			"vigil wrote. It exits 0 when the chain is intact and 1 naming the first bad record\n" +
			"(or, for records cut off the end, the last record known to exist) otherwise. It\n" +
			"needs every key the log was sealed with: the current one and, after a rotation,\n" +
			"the previous ones (audit.previous_key_files or --key-file). A chain sealed without\n" +
			"a key verifies, but only shows accidents: anyone who can write the file can\n" +
			"rewrite it; verify says so.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, keys, warns, err := target.resolve()
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "FAIL: %v\n", err)
				return exitError{code: 1}
			}
			for _, w := range warns {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
			}
			rep, err := audit.CheckFile(path, keys)
			if err != nil {
				var ce *audit.ChainError
				var he *audit.HeadError
				switch {
				case errors.As(err, &ce):
					fmt.Fprintf(cmd.ErrOrStderr(), "FAIL: %s: %v\n", path, ce)
				case errors.As(err, &he):
					fmt.Fprintf(cmd.ErrOrStderr(), "FAIL: %s: %v (record %d is the last known to exist)\n", path, he, he.LastKnown)
				default:
					fmt.Fprintf(cmd.ErrOrStderr(), "FAIL: %v\n", err)
				}
				return exitError{code: 1}
			}
			return writeVerifyReport(cmd, path, rep)
		},
	}
	target.flags(cmd, true)
	return cmd
}

// writeVerifyReport says what an intact chain proves.
func writeVerifyReport(cmd *cobra.Command, path string, rep audit.Report) error {
	out := cmd.OutOrStdout()
	if !rep.Keyed() {
		fmt.Fprintf(out, "ok: %d records, chain intact, head at record %d\n", rep.Records, rep.Head.Seq)
		_, err := fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s is UNKEYED: its records are only hashed, so anyone who can write "+
			"the file can rewrite it and its head undetected; set audit.key_file or VIGIL_AUDIT_KEY (README \"Audit key rotation\")\n", path)
		return err
	}
	fmt.Fprintf(out, "ok: %d records, chain intact and sealed (keys %s), head at record %d\n",
		rep.Records, strings.Join(rep.KeyIDs, " then "), rep.Head.Seq)
	if rep.Unkeyed > 0 {
		fmt.Fprintf(out, "note: the first %d records were written before the chain had a key: they are only hashed, "+
			"and vouched for by the sealed records after them\n", rep.Unkeyed)
	}
	if rep.AfterHead > 0 {
		fmt.Fprintf(out, "note: %d records after the head (vigil stopped between writing a record and its head)\n", rep.AfterHead)
	}
	return nil
}

func newAuditTailCmd() *cobra.Command {
	var (
		target auditTarget
		n      int
	)
	cmd := &cobra.Command{
		Use:   "tail [--file PATH | --config PATH] [-n 20]",
		Short: "Show the most recent audit records",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n < 1 {
				return fmt.Errorf("-n must be at least 1, got %d", n)
			}
			path, _, _, err := target.resolve()
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "FAIL: %v\n", err)
				return exitError{code: 1}
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
	target.flags(cmd, false)
	cmd.Flags().IntVarP(&n, "lines", "n", 20, "how many records to show")
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
