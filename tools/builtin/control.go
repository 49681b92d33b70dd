package builtin

import (
	"context"
	"fmt"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
)

// ControlAction is the control tool's action.
type ControlAction string

const (
	ControlGuest   ControlAction = "guest"
	ControlService ControlAction = "service"
	ControlCommand ControlAction = "command"
)

func (ControlAction) EnumValues() []string { return []string{"guest", "service", "command"} }

// Operation is what control does to a guest or service.
type Operation string

const (
	OpStart    Operation = "start"
	OpStop     Operation = "stop"
	OpRestart  Operation = "restart"
	OpShutdown Operation = "shutdown"
	OpReboot   Operation = "reboot"
)

func (Operation) EnumValues() []string {
	return []string{"start", "stop", "restart", "shutdown", "reboot"}
}

// ControlArgs are the control tool's arguments (SPEC T2).
type ControlArgs struct {
	Action    ControlAction `json:"action" jsonschema:"guest: start, stop, shutdown, reboot or restart an LXC, VM or docker container (run on its host). service: start, stop or restart a systemd service on target. command: run a shell command on target."`
	Target    string        `json:"target" jsonschema:"the resource to act on: its inventory name, alias or ID (for guest, the LXC, VM or container itself, not its host)"`
	Operation Operation     `json:"operation,omitempty" jsonschema:"guest and service: what to do. Services take start, stop and restart; guests all five (restart reboots an LXC or VM; shutdown stops a container)."`
	Service   string        `json:"service,omitempty" jsonschema:"service: the systemd unit, e.g. nginx or nginx.service (not needed when target is itself a service)"`
	Command   string        `json:"command,omitempty" jsonschema:"command: the shell command to run"`
}

func (a *ControlArgs) Validate() error {
	if err := checkTarget("target", a.Target); err != nil {
		return err
	}
	act := string(a.Action)
	switch a.Action {
	case ControlGuest:
		if a.Operation == "" {
			return tools.FieldErrorf("operation", "required for action guest")
		}
		if err := tools.NotUsed("service", act, a.Service != ""); err != nil {
			return err
		}
		return tools.NotUsed("command", act, a.Command != "")
	case ControlService:
		switch a.Operation {
		case "":
			return tools.FieldErrorf("operation", "required for action service")
		case OpStart, OpStop, OpRestart:
		default:
			return tools.FieldErrorf("operation", "a service can be started, stopped or restarted, not %s", a.Operation)
		}
		if a.Service != "" && !unitPattern.MatchString(a.Service) {
			return tools.FieldErrorf("service", "want a systemd unit name such as nginx.service, got %q", a.Service)
		}
		return tools.NotUsed("command", act, a.Command != "")
	case ControlCommand:
		if a.Command == "" {
			return tools.FieldErrorf("command", "required for action command")
		}
		if err := tools.CheckText("command", a.Command, false); err != nil {
			return err
		}
		if err := tools.NotUsed("operation", act, a.Operation != ""); err != nil {
			return err
		}
		return tools.NotUsed("service", act, a.Service != "")
	}
	return nil
}

// ControlTool is the `control` tool: every call is a write. It builds guest
// and service commands itself, quoting every value from the model.
type ControlTool struct {
	inv  *inventory.Inventory
	x    transport.Executor
	spec tools.Spec
}

var _ tools.ToolOf[ControlArgs] = (*ControlTool)(nil)

// NewControlTool returns the control tool over inv, running commands with x.
func NewControlTool(inv *inventory.Inventory, x transport.Executor) tools.Tool {
	return tools.Typed[ControlArgs](&ControlTool{inv: inv, x: x, spec: controlToolSpec()})
}

func (t *ControlTool) Spec() tools.Spec { return t.spec }

// controlToolSpec describes the tool; its schema is derived once, when the tool
// is built.
func controlToolSpec() tools.Spec {
	return tools.Spec{
		Name: "control",
		Description: "Change something on a resource: start, stop or reboot a guest (LXC, VM, docker container), " +
			"start, stop or restart a systemd service, or run a command that changes state. Every call is a write: " +
			"it may need approval and must be verified with a read afterwards. Use read for anything that only looks.",
		Kinds: policy.ActionKinds{Every: policy.KindWrite},
	}
}

func (t *ControlTool) Plan(a ControlArgs) (tools.Proposal, *policy.Block) {
	p := tools.Proposal{
		Action: policy.Action{Tool: "control", Name: string(a.Action), Target: a.Target},
	}
	pl, b := t.plan(a)
	if b != nil {
		return p, b
	}
	p.Command, p.Summary, p.Dialect = pl.command, pl.summary, pl.runOn.ShellOrDefault()
	return p, nil
}

func (t *ControlTool) plan(a ControlArgs) (plan, *policy.Block) {
	res, b := t.inv.ResolveTarget("target", a.Target)
	if b != nil {
		return plan{}, b
	}
	pl := plan{runOn: res}
	switch a.Action {
	case ControlCommand:
		pl.command = a.Command
		pl.summary = fmt.Sprintf("run on %s: %s", res.Name, a.Command)
	case ControlService:
		unit := a.Service
		if res.Kind == inventory.KindService {
			if unit != "" && unit != res.UID {
				return plan{}, tools.InvalidInput("service", fmt.Sprintf("field %q: target %s is the service %s; leave service out or target its host", "service", res.Name, res.UID))
			}
			unit = res.UID
		}
		if unit == "" {
			return plan{}, tools.InvalidInput("service", fmt.Sprintf("field %q: required for action service (the systemd unit on %s)", "service", res.Name))
		}
		pl.command = "systemctl " + string(a.Operation) + " " + transport.ShellQuote(unit)
		pl.summary = fmt.Sprintf("%s service %s on %s", a.Operation, unit, res.Name)
	case ControlGuest:
		return t.planGuest(a, res)
	}
	return pl, nil
}

// guestVerbs maps an operation to the verb each guest manager uses.
var guestVerbs = map[inventory.ResourceKind]map[Operation]string{
	inventory.KindLXC:             {OpStart: "start", OpStop: "stop", OpShutdown: "shutdown", OpReboot: "reboot", OpRestart: "reboot"},
	inventory.KindVM:              {OpStart: "start", OpStop: "stop", OpShutdown: "shutdown", OpReboot: "reboot", OpRestart: "reboot"},
	inventory.KindDockerContainer: {OpStart: "start", OpStop: "stop", OpShutdown: "stop", OpReboot: "restart", OpRestart: "restart"},
}

// planGuest runs the guest manager on the guest's host: pct for an LXC, qm
// for a VM, docker for a container.
func (t *ControlTool) planGuest(a ControlArgs, res inventory.Resource) (plan, *policy.Block) {
	verbs, ok := guestVerbs[res.Kind]
	if !ok {
		hint := "use action=command with the command to run"
		if res.Kind == inventory.KindService {
			hint = "use action=service"
		}
		return plan{}, tools.InvalidInput("target", fmt.Sprintf("field %q: %s is a %s; guest control applies to lxc, vm and docker_container (%s)", "target", res.Name, res.Kind, hint))
	}
	host, ok := t.inv.Get(res.Parent)
	if !ok {
		return plan{}, tools.InvalidInput("target", fmt.Sprintf("field %q: %s %s has no host in the inventory to run its manager on", "target", res.Kind, res.Name))
	}
	verb := verbs[a.Operation]
	pl := plan{runOn: host}
	switch res.Kind {
	case inventory.KindLXC:
		pl.command = "pct " + verb + " " + transport.ShellQuote(res.UID)
	case inventory.KindVM:
		pl.command = "qm " + verb + " " + transport.ShellQuote(res.UID)
	case inventory.KindDockerContainer:
		pl.command = "docker " + verb + " " + transport.ShellQuote(res.UID)
	}
	pl.summary = fmt.Sprintf("%s %s %s (%s) on %s", verb, res.Kind, res.Name, res.UID, host.Name)
	return pl, nil
}

func (t *ControlTool) Run(ctx context.Context, a ControlArgs, p tools.Proposal) tools.Result {
	pl, b := t.plan(a)
	if b != nil {
		return tools.Result{Envelope: tools.Blocked(b)}
	}
	if pl.command != p.Command {
		return tools.BadProposal("control", p, "command differs from the one the arguments produce")
	}
	return runCommand(ctx, t.x, pl.runOn, a.Target, specOf(p, pl.command), nil)
}
