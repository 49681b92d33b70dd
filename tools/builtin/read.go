package builtin

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
)

// ReadAction is the read tool's action.
type ReadAction string

const (
	ReadExec ReadAction = "exec"
	ReadFile ReadAction = "file"
	ReadFind ReadAction = "find"
	ReadTail ReadAction = "tail"
	ReadLogs ReadAction = "logs"
)

func (ReadAction) EnumValues() []string { return []string{"exec", "file", "find", "tail", "logs"} }

// Line counts of the read tool.
const (
	defaultFileLines = 200
	defaultTailLines = 100
	defaultLogLines  = 200
	maxLines         = 5000
)

// ReadArgs are the read tool's arguments (SPEC T2).
type ReadArgs struct {
	Action  ReadAction `json:"action" jsonschema:"exec: run command (it must be provably read-only and exit by itself). file: print the first lines of path. find: list files under the directory path, at most 3 levels deep, whose name matches the glob in command. tail: print the last lines of path. logs: recent logs of target: its systemd journal (command optionally names a unit), or for a docker container or k8s pod its container logs."`
	Target  string     `json:"target" jsonschema:"the resource to read from: its inventory name, alias or ID"`
	Command string     `json:"command,omitempty" jsonschema:"exec: the shell command to run. find: a file name glob such as *.conf (default: every file). logs: a systemd unit such as nginx.service, or the container of a k8s pod. Not used by file and tail."`
	Path    string     `json:"path,omitempty" jsonschema:"absolute path: the file for file and tail, the directory for find"`
	Lines   int        `json:"lines,omitempty" jsonschema:"how many lines: file (first lines, default 200), tail (last lines, default 100), logs (most recent, default 200); at most 5000"`
	Since   string     `json:"since,omitempty" jsonschema:"logs only: how far back to look, a number and a unit s, m, h or d, e.g. 15m or 2h"`
}

// sincePattern is a relative time for logs.
var sincePattern = regexp.MustCompile(`^([1-9][0-9]{0,5})([smhd])$`)

func (a *ReadArgs) Validate() error {
	if err := checkTarget("target", a.Target); err != nil {
		return err
	}
	if a.Lines < 0 || a.Lines > maxLines {
		return tools.FieldErrorf("lines", "must be between 1 and %d, got %d", maxLines, a.Lines)
	}
	if a.Since != "" && !sincePattern.MatchString(a.Since) {
		return tools.FieldErrorf("since", "want a number and a unit s, m, h or d, e.g. 15m; got %q", a.Since)
	}
	act := string(a.Action)
	switch a.Action {
	case ReadExec:
		if a.Command == "" {
			return tools.FieldErrorf("command", "required for action exec")
		}
		if err := tools.CheckText("command", a.Command, false); err != nil {
			return err
		}
		if err := tools.NotUsed("path", act, a.Path != ""); err != nil {
			return err
		}
		if err := tools.NotUsed("lines", act, a.Lines != 0); err != nil {
			return err
		}
		return tools.NotUsed("since", act, a.Since != "")
	case ReadFile, ReadTail, ReadFind:
		if a.Path == "" {
			return tools.FieldErrorf("path", "required for action %s", act)
		}
		if err := checkPath("path", a.Path); err != nil {
			return err
		}
		if err := tools.NotUsed("since", act, a.Since != ""); err != nil {
			return err
		}
		if a.Action == ReadFind {
			if err := tools.NotUsed("lines", act, a.Lines != 0); err != nil {
				return err
			}
			if err := tools.CheckText("command", a.Command, true); err != nil {
				return err
			}
			if strings.Contains(a.Command, "/") {
				return tools.FieldErrorf("command", "for find, a file name glob without '/'; put the directory in path")
			}
			return nil
		}
		return tools.NotUsed("command", act, a.Command != "")
	case ReadLogs:
		if err := tools.NotUsed("path", act, a.Path != ""); err != nil {
			return err
		}
		if a.Command != "" && !unitPattern.MatchString(a.Command) {
			return tools.FieldErrorf("command", "for logs, a unit or container name such as nginx.service, got %q", a.Command)
		}
	}
	return nil
}

// TuneSchema bounds lines and gives since its pattern in the schema.
func (*ReadArgs) TuneSchema(s *jsonschema.Schema) {
	if p := s.Properties["lines"]; p != nil {
		p.Minimum, p.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(maxLines))
	}
	if p := s.Properties["since"]; p != nil {
		p.Pattern = sincePattern.String()
	}
}

// ReadTool is the `read` tool: observation only, kind read for every action.
// It does not judge the commands it is given; policy classifies
// Proposal.Command before Execute runs it. For every action but exec it
// builds the command itself, with every value from the model shell-quoted.
type ReadTool struct {
	inv  *inventory.Inventory
	x    transport.Executor
	spec tools.Spec
}

var _ tools.ToolOf[ReadArgs] = (*ReadTool)(nil)

// NewReadTool returns the read tool over inv, running commands with x.
func NewReadTool(inv *inventory.Inventory, x transport.Executor) tools.Tool {
	return tools.Typed[ReadArgs](&ReadTool{inv: inv, x: x, spec: readToolSpec()})
}

func (t *ReadTool) Spec() tools.Spec { return t.spec }

// readToolSpec describes the tool; its schema is derived once, when the tool
// is built.
func readToolSpec() tools.Spec {
	return tools.Spec{
		Name: "read",
		Description: "Read from a resource without changing it: run a read-only command, read a file's first or last lines, " +
			"find files, or read recent logs. Commands that may change anything, or that would not exit by themselves " +
			"(follow modes, pagers, interactive shells), are refused; use control for changes. A command that talks over " +
			"the network must be static text sent to a server vigil knows (the target itself, the inventory's hosts, " +
			"the datasources, declared destinations). To read on an inventory host, a container or a pod, set target to " +
			"it instead of running ssh, docker exec or kubectl exec: the command then runs in that host's sandbox.",
		Kinds: policy.ActionKinds{Actions: map[string]policy.Kind{
			string(ReadExec): policy.KindRead, string(ReadFile): policy.KindRead, string(ReadFind): policy.KindRead,
			string(ReadTail): policy.KindRead, string(ReadLogs): policy.KindRead,
		}},
	}
}

// plan is what a call will do: run command on resource runOn.
type plan struct {
	runOn   inventory.Resource
	command string
	summary string
}

func (t *ReadTool) Plan(a ReadArgs) (tools.Proposal, *policy.Block) {
	p := tools.Proposal{
		Action: policy.Action{Tool: "read", Name: string(a.Action), Target: a.Target},
	}
	pl, b := t.plan(a)
	if b != nil {
		return p, b
	}
	p.Command, p.Summary, p.Dialect = pl.command, pl.summary, pl.runOn.ShellOrDefault()
	return p, nil
}

func (t *ReadTool) plan(a ReadArgs) (plan, *policy.Block) {
	res, b := t.inv.ResolveTarget("target", a.Target)
	if b != nil {
		return plan{}, b
	}
	pl := plan{runOn: res}
	lines := func(def int) string {
		if a.Lines > 0 {
			return strconv.Itoa(a.Lines)
		}
		return strconv.Itoa(def)
	}
	switch a.Action {
	case ReadExec:
		pl.command = a.Command
		pl.summary = fmt.Sprintf("run on %s: %s", res.Name, a.Command)
	case ReadFile:
		pl.command = "head -n " + lines(defaultFileLines) + " " + transport.ShellQuote(a.Path)
		pl.summary = fmt.Sprintf("read the first %s lines of %s on %s", lines(defaultFileLines), a.Path, res.Name)
	case ReadTail:
		pl.command = "tail -n " + lines(defaultTailLines) + " " + transport.ShellQuote(a.Path)
		pl.summary = fmt.Sprintf("read the last %s lines of %s on %s", lines(defaultTailLines), a.Path, res.Name)
	case ReadFind:
		pl.command = "find " + transport.ShellQuote(a.Path) + " -maxdepth 3"
		pl.summary = fmt.Sprintf("list files under %s on %s", a.Path, res.Name)
		if a.Command != "" {
			pl.command += " -name " + transport.ShellQuote(a.Command)
			pl.summary = fmt.Sprintf("find files named %s under %s on %s", a.Command, a.Path, res.Name)
		}
	case ReadLogs:
		return t.planLogs(a, res, lines(defaultLogLines))
	}
	return pl, nil
}

// planLogs reads a container's logs on its host, and a journal anywhere else.
func (t *ReadTool) planLogs(a ReadArgs, res inventory.Resource, n string) (plan, *policy.Block) {
	pl := plan{runOn: res}
	switch res.Kind {
	case inventory.KindDockerContainer, inventory.KindK8sPod:
		parent, ok := t.inv.Get(res.Parent)
		if !ok {
			return plan{}, tools.InvalidInput("target", fmt.Sprintf("%s %s has no host in the inventory to read its logs from", res.Kind, res.Name))
		}
		pl.runOn = parent
		if res.Kind == inventory.KindDockerContainer {
			if a.Command != "" {
				return plan{}, tools.InvalidInput("command", fmt.Sprintf("field %q: not used for a docker container's logs; leave it out", "command"))
			}
			pl.command = "docker logs --tail " + n
			if a.Since != "" {
				pl.command += " --since " + sinceDuration(a.Since)
			}
			pl.command += " " + transport.ShellQuote(res.UID) + " 2>&1"
		} else {
			pl.command = "kubectl logs " + transport.ShellQuote(res.UID) + " -n " + transport.ShellQuote(res.Namespace) + " --tail=" + n
			if a.Since != "" {
				pl.command += " --since=" + sinceDuration(a.Since)
			}
			if a.Command != "" {
				pl.command += " -c " + transport.ShellQuote(a.Command)
			}
		}
		pl.summary = fmt.Sprintf("read the last %s log lines of %s %s on %s", n, res.Kind, res.Name, parent.Name)
		return pl, nil
	case inventory.KindService:
		if a.Command != "" {
			return plan{}, tools.InvalidInput("command", fmt.Sprintf("field %q: target %s is already a service; leave it out", "command", res.Name))
		}
		// A service's commands run on its host; the route takes care of it.
		pl.command = journalCommand(n, res.UID, a.Since)
		pl.summary = fmt.Sprintf("read the last %s journal lines of service %s", n, res.Name)
		return pl, nil
	default:
		pl.command = journalCommand(n, a.Command, a.Since)
		pl.summary = fmt.Sprintf("read the last %s journal lines on %s", n, res.Name)
		if a.Command != "" {
			pl.summary = fmt.Sprintf("read the last %s journal lines of %s on %s", n, a.Command, res.Name)
		}
		return pl, nil
	}
}

func journalCommand(n, unit, since string) string {
	cmd := "journalctl --no-pager -n " + n
	if unit != "" {
		cmd += " -u " + transport.ShellQuote(unit)
	}
	if since != "" {
		// journalctl reads "-2h" as two hours before now.
		cmd += " --since " + transport.ShellQuote("-"+since)
	}
	return cmd
}

// sinceDuration converts a validated since value to a duration docker and
// kubectl accept: they know s, m and h but not d.
func sinceDuration(since string) string {
	m := sincePattern.FindStringSubmatch(since)
	if m == nil || m[2] != "d" {
		return since
	}
	n, _ := strconv.Atoi(m[1])
	return strconv.Itoa(n*24) + "h"
}

func (t *ReadTool) Run(ctx context.Context, a ReadArgs, p tools.Proposal) tools.Result {
	pl, b := t.plan(a)
	if b != nil {
		return tools.Result{Envelope: tools.Blocked(b)}
	}
	if pl.command != p.Command {
		return tools.BadProposal("read", p, "command differs from the one the arguments produce")
	}
	return runCommand(ctx, t.x, pl.runOn, a.Target, specOf(p, pl.command), nil)
}
