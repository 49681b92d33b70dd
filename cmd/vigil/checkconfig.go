package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigilops/vigil/adapters/matrix"
	"github.com/vigilops/vigil/internal/app"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/policy"
)

func newCheckConfigCmd() *cobra.Command {
	var cfgPath string
	cmd := &cobra.Command{
		Use:   "check-config",
		Short: "Check a configuration, look its channel and people names up, and print each channel's effective policy",
		Long: "check-config loads the configuration as vigil run would and reports every problem at once. " +
			"Where the configuration holds credentials (slack.bot_token; matrix.homeserver and matrix.access_token) " +
			"it looks up the names of channels, rooms and people on those platforms, and says when it could not. " +
			"Then it prints each channel's control level and who may ask, request changes and approve them.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return checkConfig(cmd.Context(), cfgPath, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&cfgPath, "config", "", "path to the YAML configuration (default: embedded defaults)")
	return cmd
}

// checkConfig validates the configuration at path, resolves names with
// the credentials it holds, and prints the effective channel policies.
func checkConfig(ctx context.Context, path string, out io.Writer) error {
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	w := &errWriter{w: out}
	where := path
	if where == "" {
		where = "built-in defaults and VIGIL_ variables"
	}
	w.printf("configuration %s: valid\n", where)
	for _, warn := range cfg.Warnings() {
		w.printf("warning: %s\n", warn)
	}

	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	dirs, skipped := app.Directories(cfg)
	res, err := cfg.ResolveNames(ctx, dirs)
	if err != nil {
		return err
	}
	names := map[string]string{} // ID -> name, to show both
	for _, r := range res.Resolved {
		w.printf("resolved on %s: %s = %s (%s)\n", r.Platform, r.Name, r.ID, r.Key)
		names[r.ID] = r.Name
	}
	for _, p := range slices.Sorted(maps.Keys(res.Unresolved)) {
		w.printf("NOT resolved on %s (%s): %s; vigil run refuses names it cannot look up on an enabled platform\n",
			p, skipped[p], strings.Join(res.Unresolved[p], ", "))
	}
	if len(res.Resolved) == 0 && len(res.Unresolved) == 0 {
		w.printf("names: none to look up (every channel and person is given by ID)\n")
	}

	policies, err := cfg.ChannelPolicies()
	if err != nil {
		return err
	}
	w.printf("\nchannel policies (roles are cumulative: approvers may request, requesters may ask):\n")
	hasDefault := false
	for _, cp := range policies {
		title := cp.Match
		if _, id, ok := strings.Cut(cp.Match, ":"); ok && names[id] != "" {
			title += " (" + names[id] + ")"
		}
		if cp.Match == policy.DefaultChannel {
			hasDefault = true
			title += " (every channel without its own entry)"
		}
		w.printf("\n%s\n", title)
		w.printf("  level:    %s\n", cp.Level)
		platformApprovers := ""
		if strings.HasPrefix(cp.Match, "matrix:") || cp.Match == policy.DefaultChannel && cfg.Matrix.Enabled {
			level := cfg.Matrix.ApproverPowerLevel
			if level == 0 {
				level = matrix.DefaultApproverPowerLevel
			}
			platformApprovers = fmt.Sprintf("Matrix room members with power level %d or more", level)
		}
		w.printf("  ask:      %s\n", holders(cp, policy.RoleViewer, platformApprovers, names))
		if cp.Level.AllowsWrites() {
			w.printf("  request:  %s\n", holders(cp, policy.RoleOperator, platformApprovers, names))
		} else {
			w.printf("  request:  nobody (read_only: vigil changes nothing here)\n")
		}
		switch {
		case cp.Level == policy.LevelReadOnly:
			w.printf("  approve:  nobody (read_only)\n")
		case cp.Level == policy.LevelAutonomous:
			w.printf("  approve:  not needed (autonomous: a requester's changes run without approval)\n")
		default:
			self := "never the requester of the change"
			if cp.SelfApproval() {
				self = "self-approval allowed"
			}
			w.printf("  approve:  %s (%s)\n", holders(cp, policy.RoleApprover, platformApprovers, names), self)
		}
		w.printf("  scope:    %s\n", scopeLine(cp.Scope))
	}
	if !hasDefault {
		w.printf("\nany other channel: read_only (no default entry); anyone there may ask, nobody may request changes\n")
	}
	return w.err
}

// holders says who holds role r in cp: the configured entries (with the
// names they were resolved from) and the platform's own approvers.
func holders(cp policy.ChannelPolicy, r policy.Role, platformApprovers string, names map[string]string) string {
	if cp.Match == policy.ConsoleChannel {
		return "the person at vigil's terminal"
	}
	var lists [][]string
	switch r {
	case policy.RoleViewer:
		if len(cp.Viewers) == 0 {
			return "everyone in the channel"
		}
		lists = [][]string{cp.Viewers, cp.Operators, cp.Approvers}
	case policy.RoleOperator:
		lists = [][]string{cp.Operators, cp.Approvers}
	default:
		lists = [][]string{cp.Approvers}
	}
	var out []string
	for _, l := range lists {
		for _, e := range l {
			s := e
			if g, ok := strings.CutPrefix(e, policy.UserGroupPrefix); ok {
				s = "user group " + g
			}
			if n := names[e]; n != "" {
				s += " (" + n + ")"
			}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	if platformApprovers != "" {
		out = append(out, platformApprovers)
	}
	if len(out) == 0 {
		return "nobody"
	}
	return strings.Join(out, ", ")
}

// errWriter keeps the first write error, so a report is written without
// checking each line.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// scopeLine says what a channel may touch, kind by kind.
func scopeLine(sc *policy.Scope) string {
	if sc == nil {
		return "everything (no scope key)"
	}
	var parts []string
	for _, k := range policy.ScopeKinds() {
		l := sc.List(k)
		if len(l) == 0 {
			parts = append(parts, fmt.Sprintf("no %s", k))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s", k, strings.Join(l, ", ")))
	}
	return strings.Join(parts, "; ")
}
