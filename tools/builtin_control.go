package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/vigilops/vigil/policy"
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
			return fieldErrorf("operation", "required for action guest")
		}
		if err := notUsed("service", act, a.Service != ""); err != nil {
			return err
		}
		return notUsed("command", act, a.Command != "")
	case ControlService:
		switch a.Operation {
		case "":
			return fieldErrorf("operation", "required for action service")
		case OpStart, OpStop, OpRestart:
		default:
			return fieldErrorf("operation", "a service can be started, stopped or restarted, not %s", a.Operation)
		}
		if a.Service != "" && !unitPattern.MatchString(a.Service) {
			return fieldErrorf("service", "want a systemd unit name such as nginx.service, got %q", a.Service)
		}
		return notUsed("command", act, a.Command != "")
	case ControlCommand:
		if a.Command == "" {
			return fieldErrorf("command", "required for action command")
		}
		if err := checkText("command", a.Command, false); err != nil {
			return err
		}
		if err := notUsed("operation", act, a.Operation != ""); err != nil {
			return err
		}
		return notUsed("service", act, a.Service != "")
	}
	return nil
}

// ControlTool is the `control` tool: every call is a write. It builds guest
// and service commands itself, quoting every value from the model.
type ControlTool struct {
	inv  *Inventory
	x    Executor
	spec Spec
}

var _ Tool = (*ControlTool)(nil)

// NewControlTool returns the control tool over inv, running commands with x.
func NewControlTool(inv *Inventory, x Executor) *ControlTool {
	return &ControlTool{inv: inv, x: x, spec: controlToolSpec()}
}

func (t *ControlTool) Spec() Spec { return t.spec }

// controlToolSpec describes the tool; its schema is derived once, when the tool
// is built.
func controlToolSpec() Spec {
	return Spec{
		Name: "control",
		Description: "Change something on a resource: start, stop or reboot a guest (LXC, VM, docker container), " +
			"start, stop or restart a systemd service, or run a command that changes state. Every call is a write: " +
			"it may need approval and must be verified with a read afterwards. Use read for anything that only looks.",
		Parameters: mustSchema[ControlArgs](),
		Kinds:      policy.ActionKinds{Every: policy.KindWrite},
	}
}

func (t *ControlTool) Propose(raw json.RawMessage) (Proposal, *policy.Block) {
	a, b := DecodeArgs[ControlArgs](raw)
	if b != nil {
		return Proposal{Action: policy.Action{Tool: "control"}}, b
	}
	p := Proposal{
		Action: policy.Action{Tool: "control", Name: string(a.Action), Target: a.Target},
		Args:   a,
	}
	pl, b := t.plan(a)
	if b != nil {
		return p, b
	}
	p.Command, p.Summary, p.Dialect = pl.command, pl.summary, pl.runOn.shell()
	return p, nil
}

func (t *ControlTool) plan(a ControlArgs) (plan, *policy.Block) {
	res, b := t.inv.resolveTarget("target", a.Target)
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
		if res.Kind == KindService {
			if unit != "" && unit != res.UID {
				return plan{}, invalidInput("service", fmt.Sprintf("field %q: target %s is the service %s; leave service out or target its host", "service", res.Name, res.UID))
			}
			unit = res.UID
		}
		if unit == "" {
			return plan{}, invalidInput("service", fmt.Sprintf("field %q: required for action service (the systemd unit on %s)", "service", res.Name))
		}
		pl.command = "systemctl " + string(a.Operation) + " " + shellQuote(unit)
		pl.summary = fmt.Sprintf("%s service %s on %s", a.Operation, unit, res.Name)
	case ControlGuest:
		return t.planGuest(a, res)
	}
	return pl, nil
}

// guestVerbs maps an operation to the verb each guest manager uses.
var guestVerbs = map[ResourceKind]map[Operation]string{
	KindLXC:             {OpStart: "start", OpStop: "stop", OpShutdown: "shutdown", OpReboot: "reboot", OpRestart: "reboot"},
	KindVM:              {OpStart: "start", OpStop: "stop", OpShutdown: "shutdown", OpReboot: "reboot", OpRestart: "reboot"},
	KindDockerContainer: {OpStart: "start", OpStop: "stop", OpShutdown: "stop", OpReboot: "restart", OpRestart: "restart"},
}

// planGuest runs the guest manager on the guest's host: pct for an LXC, qm
// for a VM, docker for a container.
func (t *ControlTool) planGuest(a ControlArgs, res Resource) (plan, *policy.Block) {
	verbs, ok := guestVerbs[res.Kind]
	if !ok {
		hint := "use action=command with the command to run"
		if res.Kind == KindService {
			hint = "use action=service"
		}
		return plan{}, invalidInput("target", fmt.Sprintf("field %q: %s is a %s; guest control applies to lxc, vm and docker_container (%s)", "target", res.Name, res.Kind, hint))
	}
	host, ok := t.inv.Get(res.Parent)
	if !ok {
		return plan{}, invalidInput("target", fmt.Sprintf("field %q: %s %s has no host in the inventory to run its manager on", "target", res.Kind, res.Name))
	}
	verb := verbs[a.Operation]
	pl := plan{runOn: host}
	switch res.Kind {
	case KindLXC:
		pl.command = "pct " + verb + " " + shellQuote(res.UID)
	case KindVM:
		pl.command = "qm " + verb + " " + shellQuote(res.UID)
	case KindDockerContainer:
		pl.command = "docker " + verb + " " + shellQuote(res.UID)
	}
	pl.summary = fmt.Sprintf("%s %s %s (%s) on %s", verb, res.Kind, res.Name, res.UID, host.Name)
	return pl, nil
}

func (t *ControlTool) Execute(ctx context.Context, p Proposal) Result {
	a, ok := argsOf[ControlArgs](p)
	if !ok {
		return badProposal("control", p, fmt.Sprintf("arguments of type %T", p.Args))
	}
	pl, b := t.plan(a)
	if b != nil {
		return Result{Envelope: Blocked(b)}
	}
	if pl.command != p.Command {
		return badProposal("control", p, "command differs from the one the arguments produce")
	}
	return runCommand(ctx, t.x, pl.runOn, a.Target, specOf(p, pl.command), nil)
}
