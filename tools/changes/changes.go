// Package changes is the `changes` tool: "what changed" around a target in
// a window (the last 6 hours by default), as one merged timeline, newest
// first, deduplicated and capped. It reads Kubernetes (rollouts and their
// revisions, warning events, container restarts) for a cluster object, the
// host's journal (unit starts, stops, failures, OOM kills, boots and
// shutdowns) and package history (dpkg or rpm) for an inventory machine,
// and the git log of the configured configuration repositories for every
// target. It is the tool that connects a symptom to its cause.
package changes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
)

// Args are the changes tool's arguments (names fixed by the tool contract).
type Args struct {
	Target string `json:"target" jsonschema:"what to look around: an inventory resource (host, node, VM, container, service) or a Kubernetes object (its @name, namespace.name, or ID such as k8s_deployment:prod:shop/checkout)"`
	Since  string `json:"since,omitempty" jsonschema:"how far back: a number and a unit m, h or d, e.g. 2h (default 6h, at most 7d)"`
}

// Defaults and bounds of the window.
const (
	DefaultWindow = 6 * time.Hour
	MaxWindow     = 7 * 24 * time.Hour
	// MaxEvents is how many events a timeline shows.
	MaxEvents = 100
)

var sincePattern = regexp.MustCompile(`^([1-9][0-9]{0,3})(m|h|d)$`)

func parseSince(s string) (time.Duration, bool) {
	m := sincePattern.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	n, _ := strconv.Atoi(m[1])
	return time.Duration(n) * map[string]time.Duration{"m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]], true
}

// Validate checks what the types cannot.
func (a *Args) Validate() error {
	if err := tools.CheckText("target", a.Target, true); err != nil {
		return err
	}
	if len(a.Target) > 256 {
		return tools.FieldErrorf("target", "longer than 256 characters")
	}
	if a.Since != "" {
		d, ok := parseSince(a.Since)
		if !ok {
			return tools.FieldErrorf("since", "want a number and a unit m, h or d, e.g. 2h; got %q", a.Since)
		}
		if d > MaxWindow {
			return tools.FieldErrorf("since", "%s is longer than the 7d the timeline covers", a.Since)
		}
	}
	return nil
}

// TuneSchema adds the constraints struct tags cannot carry.
func (*Args) TuneSchema(s *jsonschema.Schema) {
	if p := s.Properties["since"]; p != nil {
		p.Pattern = sincePattern.String()
	}
}

func (a Args) window() time.Duration {
	if d, ok := parseSince(a.Since); ok {
		return d
	}
	return DefaultWindow
}

// Kube is what the tool needs of the Kubernetes side: finding an object by
// the names people use, and its recent changes.
type Kube interface {
	Resolve(target string) (policy.Resource, bool)
	// Timeline reads as the person whose call it is when actor is set
	// (policy identity mapping), as vigil when it is nil.
	Timeline(ctx context.Context, id policy.ResourceID, start time.Time, actor *policy.Actor) ([]Event, error)
}

// Config wires the tool.
type Config struct {
	Inventory *inventory.Inventory
	Executor  transport.Executor
	// Kube is nil when no cluster is configured.
	Kube     Kube
	GitRepos []Repo
	Now      func() time.Time
}

// Tool is the changes tool.
type Tool struct {
	cfg  Config
	spec tools.Spec
}

var _ tools.ToolOf[Args] = (*Tool)(nil)

// New returns the changes tool.
func New(c Config) tools.Tool {
	if c.Now == nil {
		c.Now = time.Now
	}
	desc := "What changed around a target in a window (default the last 6h): one timeline, newest first, merged from " +
		"Kubernetes (rollouts and revisions, warning events, restarts) for a cluster object, the journal (unit starts, stops, " +
		"failures, OOM kills, reboots) and package installs and upgrades for a machine"
	if len(c.GitRepos) > 0 {
		names := make([]string, len(c.GitRepos))
		for i, r := range c.GitRepos {
			names[i] = r.Name
		}
		desc += ", and commits to the configuration repositories " + strings.Join(names, ", ")
	}
	desc += ". Use it early: it connects a symptom to the change that caused it."
	return tools.Typed[Args](&Tool{cfg: c, spec: tools.Spec{Name: "changes", Description: desc,
		Kinds: policy.ActionKinds{Every: policy.KindRead}}})
}

// Spec implements tools.Tool.
func (t *Tool) Spec() tools.Spec { return t.spec }

// plan is what a call reads.
type plan struct {
	resource policy.Resource
	// host is the machine the host script runs on, with its command; zero
	// for a Kubernetes object.
	host    *inventory.Resource
	command string
	kube    bool
}

func (t *Tool) plan(a Args) (plan, *policy.Block) {
	inv := t.cfg.Inventory
	if inv != nil {
		if res, ok := inv.Lookup(a.Target); ok {
			runOn, unit := res, ""
			switch res.Kind {
			case inventory.KindService:
				unit = res.UID
			case inventory.KindDockerContainer, inventory.KindK8sPod:
				// A container has no journal or packages of its own to
				// speak of: its host's are what changed around it.
				if p, ok := inv.Get(res.Parent); ok {
					runOn = p
				}
			}
			if unit != "" && !unitName.MatchString(unit) {
				return plan{}, tools.InvalidInput("target", fmt.Sprintf("service %s has a unit name vigil will not pass to journalctl: %q", res.Name, unit))
			}
			return plan{resource: res.ToPolicy(), host: &runOn, command: hostScript(a.window(), unit)}, nil
		}
	}
	if t.cfg.Kube != nil {
		if r, ok := t.cfg.Kube.Resolve(a.Target); ok {
			return plan{resource: r, kube: true}, nil
		}
	}
	b := &policy.Block{
		Code:         policy.CodeNotFound,
		Message:      fmt.Sprintf("target %q is neither an inventory resource nor a known Kubernetes object", a.Target),
		RecoveryHint: "use query (action=search) for machines, or kube list for cluster objects, then use the name it shows",
		Details:      map[string]any{"field": "target", "target": a.Target},
	}
	if inv != nil {
		if s := inv.Suggest(a.Target); len(s) > 0 {
			b.Message += "; did you mean " + strings.Join(s, ", ") + "?"
			b.Details["suggestions"] = s
		}
	}
	return plan{}, b
}

var unitName = regexp.MustCompile(`^[A-Za-z0-9@._:-]{1,255}$`)

// Plan implements tools.ToolOf.
func (t *Tool) Plan(a Args) (tools.Proposal, *policy.Block) {
	p := tools.Proposal{Action: policy.Action{Tool: "changes", Target: a.Target}}
	pl, b := t.plan(a)
	if b != nil {
		return p, b
	}
	p.Summary = fmt.Sprintf("what changed around %s in the last %s", pl.resource.Name, cmp.Or(a.Since, "6h"))
	if pl.host != nil {
		p.Command, p.Dialect = pl.command, pl.host.Shell
	}
	return p, nil
}

// vigilHost is the machine vigil runs on, where the configuration
// repositories are.
var vigilHost = inventory.Resource{ID: "host:vigil", Name: "vigil", Kind: inventory.KindHost, Reach: inventory.Reach{Local: true}, Shell: command.DialectBash}

// Run implements tools.ToolOf.
func (t *Tool) Run(ctx context.Context, a Args, p tools.Proposal) tools.Result {
	pl, b := t.plan(a)
	if b != nil {
		return tools.Result{Envelope: tools.Blocked(b)}
	}
	if pl.command != p.Command {
		return tools.BadProposal("changes", p, "command differs from the one the arguments produce")
	}
	now := t.cfg.Now()
	start := now.Add(-a.window())
	var sources [][]Event
	var statuses []SourceStatus
	res := tools.Result{Resolved: []policy.Resource{pl.resource}}

	if pl.host != nil {
		out, err := t.cfg.Executor.Run(ctx, *pl.host, transport.RunSpec{Command: pl.command, Execution: p.Execution, Actor: p.Actor}, nil)
		res.ActedAs = out.ActedAs
		if out.Sandbox.Mechanism != "" {
			sb := out.Sandbox
			res.Sandbox = &sb
		}
		if err != nil {
			note := err.Error()
			if errors.Is(err, transport.ErrNoSandbox) {
				note = "not run: the read sandbox is required and " + pl.host.Name + " offers none"
			}
			statuses = append(statuses, SourceStatus{Source: "host " + pl.host.Name, Status: "failed", Note: note})
		} else {
			hr := parseHost(out.Stdout)
			sources = append(sources, hr.events)
			statuses = append(statuses, hr.statuses...)
			if out.Truncated {
				statuses = append(statuses, SourceStatus{Source: "host " + pl.host.Name, Status: "partial",
					Note: "the output was cut at the output cap; the oldest journal entries are missing"})
			}
		}
	}
	if pl.kube {
		evs, err := t.cfg.Kube.Timeline(ctx, pl.resource.ID, start, p.Actor)
		if err == nil && p.Actor != nil {
			res.ActedAs = p.Actor.Kube.String()
		}
		st := SourceStatus{Source: "kubernetes", Status: "ok", Events: len(evs)}
		if err != nil {
			st.Status, st.Note = "failed", err.Error()
		}
		sources = append(sources, evs)
		statuses = append(statuses, st)
	}
	for _, r := range t.cfg.GitRepos {
		spec := transport.RunSpec{Command: gitCommand(r, a.window()), Execution: p.Execution}
		spec.Shell = command.DialectBash
		out, err := t.cfg.Executor.Run(ctx, vigilHost, spec, nil)
		st := SourceStatus{Source: "git:" + r.Name, Status: "ok"}
		switch {
		case err != nil:
			st.Status, st.Note = "failed", err.Error()
		case out.ExitCode != 0:
			st.Status, st.Note = "failed", fmt.Sprintf("git exited %d: %s", out.ExitCode, clip(out.Stderr, 200))
		default:
			evs, bad := parseGit(r.Name, out.Stdout)
			st.Events = len(evs)
			if bad > 0 {
				st.Status, st.Note = "partial", fmt.Sprintf("%d lines could not be read", bad)
			}
			sources = append(sources, evs)
		}
		statuses = append(statuses, st)
	}

	events, omitted := Merge(start, now, MaxEvents, sources...)
	failed := 0
	for _, s := range statuses {
		if s.Status == "failed" {
			failed++
		}
	}
	data := map[string]any{
		"target": a.Target, "resource_id": string(pl.resource.ID), "start": start.UTC(), "end": now.UTC(),
		"ordered_by": "newest first", "total": len(events) + omitted, "shown": len(events), "omitted": omitted,
		"sources": statuses, "events": events,
	}
	if omitted > 0 {
		data["note"] = fmt.Sprintf("%d older events not shown; ask for a shorter window to see them", omitted)
	}
	if len(events) == 0 {
		data["note"] = "nothing changed in this window that the sources record"
	}
	res.Output = render(events, statuses)
	if failed > 0 && failed == len(statuses) {
		e := tools.FailedWith(policy.CodeExecutionFailed, "no source of changes could be read for "+a.Target,
			"read the sources' notes; the target may be unreachable", map[string]any{"sources": statuses})
		res.Envelope = e
		return res
	}
	res.Envelope = tools.CapData(tools.OK(data), 0)
	return res
}

// render is the timeline as the trace shows it.
func render(evs []Event, sts []SourceStatus) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%s  %-10s %-22s %s", e.At.Format("2006-01-02 15:04:05"), e.Source, e.Kind, e.Subject)
		if e.Detail != "" {
			b.WriteString(": " + e.Detail)
		}
		if e.Count > 1 {
			fmt.Fprintf(&b, " (×%d until %s)", e.Count, e.Until.Format("15:04:05"))
		}
		b.WriteByte('\n')
	}
	for _, s := range sts {
		if s.Status != "ok" {
			b.WriteString("[" + s.String() + "]\n")
		}
	}
	if b.Len() == 0 {
		return "no changes in the window\n"
	}
	return b.String()
}
