package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/policy/command"
)

func newExplainCmd() *cobra.Command {
	var (
		fromStdin bool
		dialect   string
		readURLs  []string
		dests     []string
		forbidden []string
	)
	cmd := &cobra.Command{
		Use:   "explain-command [--stdin | '<command>']",
		Short: "Print the policy decision for a shell command as one JSON line",
		Long: `explain-command classifies a shell command the way the read tool would and
prints {"command","dialect","intent","risk","reasons","bounded","category",
"suggested_rewrite","network"} as one JSON line, with "destinations" (the
host and port of every server a network read connects to) when there are
any. Each reason names the word, option, destination, function or shell
feature that decided. With --stdin it reads one command per line and prints
one JSON line per input line, in order.

Without flags only this host's loopback is a known destination, as with an
empty configuration. --dialect sh reads the command as a POSIX sh (dash)
would; --http-read-url adds a policy.http_read_urls prefix;
--read-destination adds a policy.read_destinations entry (host[:port], or
SERVICE=host[:port] such as kubernetes=kube-api:6443 for kubectl's cluster);
--forbidden-destination names vigil's own store (host:port), which no read
may reach. All three repeat.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			d := command.Dialect(dialect)
			if d != command.DialectBash && d != command.DialectPOSIX {
				return fmt.Errorf("explain-command: --dialect %q: want bash or sh", dialect)
			}
			var opts command.Options
			for _, s := range readURLs {
				u, err := command.ParseURLPrefix(s)
				if err != nil {
					return fmt.Errorf("explain-command: --http-read-url: %w", err)
				}
				opts.HTTPReadURLs = append(opts.HTTPReadURLs, u)
			}
			for _, s := range dests {
				service, d, err := config.ParseReadDestination(s)
				if err != nil {
					return fmt.Errorf("explain-command: --read-destination: %w", err)
				}
				if service == "" {
					opts.Destinations = append(opts.Destinations, d)
					continue
				}
				if opts.Services == nil {
					opts.Services = map[string][]command.Destination{}
				}
				opts.Services[service] = append(opts.Services[service], d)
			}
			for _, s := range forbidden {
				d, err := command.ParseDestination(s)
				if err != nil || d.Port == 0 {
					return fmt.Errorf("explain-command: --forbidden-destination %q: want host:port (%v)", s, err)
				}
				opts.Forbidden = append(opts.Forbidden, d)
			}
			classify := func(c string) command.Verdict { return opts.Classify(c, d) }
			out := cmd.OutOrStdout()
			if fromStdin {
				if len(args) != 0 {
					return fmt.Errorf("explain-command: give either --stdin or one command, not both")
				}
				return explainLines(cmd.InOrStdin(), out, classify)
			}
			if len(args) != 1 {
				return fmt.Errorf("explain-command: want exactly one command argument (quote it), got %d", len(args))
			}
			return writeVerdict(out, classify(args[0]))
		},
	}
	cmd.Flags().BoolVar(&fromStdin, "stdin", false, "read one command per line from standard input")
	cmd.Flags().StringVar(&dialect, "dialect", string(command.DialectBash), "shell dialect the command runs in: bash or sh")
	cmd.Flags().StringArrayVar(&readURLs, "http-read-url", nil, "URL prefix declared read-only, as in policy.http_read_urls (repeatable)")
	cmd.Flags().StringArrayVar(&dests, "read-destination", nil, "destination reads may reach, as in policy.read_destinations: host[:port] or SERVICE=host[:port] (repeatable)")
	cmd.Flags().StringArrayVar(&forbidden, "forbidden-destination", nil, "vigil's own store, host:port, which no read may reach (repeatable)")
	return cmd
}

func explainLines(in io.Reader, out io.Writer, classify func(string) command.Verdict) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	w := bufio.NewWriter(out)
	for sc.Scan() {
		if err := writeVerdict(w, classify(sc.Text())); err != nil {
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
