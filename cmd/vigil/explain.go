package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vigilops/vigil/policy/command"
)

func newExplainCmd() *cobra.Command {
	var fromStdin bool
	cmd := &cobra.Command{
		Use:   "explain-command [--stdin | '<command>']",
		Short: "Print the policy decision for a shell command as one JSON line",
		Long: `explain-command classifies a shell command the way the read tool would and
prints {"command","intent","risk","reasons","bounded","category","suggested_rewrite"}
as one JSON line. With --stdin it reads one command per line and prints one JSON
line per input line, in order.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if fromStdin {
				if len(args) != 0 {
					return fmt.Errorf("explain-command: give either --stdin or one command, not both")
				}
				return explainLines(cmd.InOrStdin(), out)
			}
			if len(args) != 1 {
				return fmt.Errorf("explain-command: want exactly one command argument (quote it), got %d", len(args))
			}
			return writeVerdict(out, command.Classify(args[0]))
		},
	}
	cmd.Flags().BoolVar(&fromStdin, "stdin", false, "read one command per line from standard input")
	return cmd
}

func explainLines(in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	w := bufio.NewWriter(out)
	for sc.Scan() {
		if err := writeVerdict(w, command.Classify(sc.Text())); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("explain-command: read stdin: %w", err)
	}
	return w.Flush()
}

func writeVerdict(w io.Writer, v command.Verdict) error {
	if v.Reasons == nil {
		v.Reasons = []string{}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("explain-command: encode: %w", err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}
