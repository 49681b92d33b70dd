package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/vigilops/vigil/policy"
)

// Router is the Executor for inventory resources: it finds the first resource
// up the parent chain with a transport of its own, wraps the command once for
// every nested hop on the way (pct exec, qm guest exec, docker exec, kubectl
// exec) and runs it there, locally or over SSH. Limits apply to the whole run.
type Router struct {
	inv    *Inventory
	limits Limits
	local  *LocalTransport
	// dialTimeout bounds SSH connection set-up.
	dialTimeout time.Duration
}

// RouterOptions configures a Router. Zero values mean the defaults.
type RouterOptions struct {
	Limits
	// LocalEnv replaces the local transport's default environment.
	LocalEnv []string
	// SSHDialTimeout bounds connecting to an SSH host; 0 means 10 s.
	SSHDialTimeout time.Duration
}

var _ Executor = (*Router)(nil)

// NewRouter returns an Executor over inv.
func NewRouter(inv *Inventory, opts RouterOptions) *Router {
	return &Router{
		inv:         inv,
		limits:      opts.Limits,
		local:       &LocalTransport{Limits: opts.Limits, Env: opts.LocalEnv},
		dialTimeout: opts.SSHDialTimeout,
	}
}

// Run runs cmd on res.
func (r *Router) Run(ctx context.Context, res Resource, cmd string, stdin io.Reader) (ExecResult, error) {
	route, err := r.inv.Route(res, cmd, stdin != nil)
	if err != nil {
		return ExecResult{ExitCode: -1}, err
	}
	var out ExecResult
	switch {
	case route.Via.Reach.Local:
		out, err = r.local.Run(ctx, route.Command, stdin)
	case route.Via.Reach.SSH != nil:
		t := &SSHTransport{Limits: r.limits, Config: *route.Via.Reach.SSH, DialTimeout: r.dialTimeout}
		out, err = t.Run(ctx, route.Command, stdin)
	default:
		return ExecResult{ExitCode: -1}, fmt.Errorf("%w: %s has no transport", ErrNoRoute, route.Via.Name)
	}
	if err == nil && route.guestAgent {
		out = unwrapGuestExec(out)
	}
	return out, err
}

// Route is how a command reaches a resource.
type Route struct {
	// Via is the resource whose own transport runs Command.
	Via Resource
	// Command is the command as Via runs it: the original wrapped once per
	// nested hop.
	Command string
	// Hops are the resources passed through, from the target up to Via.
	Hops []policy.ResourceID
	// guestAgent marks a route whose outermost wrapper is qm guest exec,
	// whose output is a JSON report rather than the command's own streams.
	guestAgent bool
}

// Route computes how cmd reaches res. stdin says whether the command reads
// standard input, which docker and kubectl must be told (-i).
func (inv *Inventory) Route(res Resource, cmd string, stdin bool) (Route, error) {
	rt := Route{Command: cmd}
	cur := res
	for range len(inv.list) + 1 {
		rt.Hops = append(rt.Hops, cur.ID)
		if cur.Reach.Direct() {
			rt.Via = cur
			return rt, nil
		}
		wrapped, err := wrapForParent(cur, rt.Command, stdin)
		if err != nil {
			return Route{}, err
		}
		rt.Command = wrapped
		rt.guestAgent = cur.Kind == KindVM
		if cur.Parent == "" {
			return Route{}, fmt.Errorf("%w: %s has no transport and no parent", ErrNoRoute, cur.Name)
		}
		p, ok := inv.Get(cur.Parent)
		if !ok {
			return Route{}, fmt.Errorf("%w: parent %s of %s is not in the inventory", ErrNoRoute, cur.Parent, cur.Name)
		}
		cur = p
	}
	return Route{}, fmt.Errorf("%w: parent chain of %s does not end", ErrNoRoute, res.Name)
}

// wrapForParent turns a command for r into the command r's parent runs to
// execute it inside r. The inner command is passed as one quoted word to
// `sh -c`, so nothing in it is interpreted by the parent's shell.
func wrapForParent(r Resource, cmd string, stdin bool) (string, error) {
	inner := "sh -c " + shellQuote(cmd)
	switch r.Kind {
	case KindLXC:
		return "pct exec " + shellQuote(r.UID) + " -- " + inner, nil
	case KindVM:
		pass := ""
		if stdin {
			pass = " --pass-stdin 1"
		}
		return "qm guest exec " + shellQuote(r.UID) + pass + " -- " + inner, nil
	case KindDockerContainer:
		flag := ""
		if stdin {
			flag = "-i "
		}
		return "docker exec " + flag + shellQuote(r.UID) + " " + inner, nil
	case KindK8sPod:
		flag := ""
		if stdin {
			flag = "-i "
		}
		return "kubectl exec " + flag + shellQuote(r.UID) + " -n " + shellQuote(r.Namespace) + " -- " + inner, nil
	case KindService:
		// A service is a unit on its parent: its commands run there.
		return cmd, nil
	default:
		return "", fmt.Errorf("%w: a %s (%s) is not reached through its parent; give it a reach", ErrNoRoute, r.Kind, r.Name)
	}
}

// guestExecReport is what `qm guest exec` prints.
type guestExecReport struct {
	ExitCode *int   `json:"exitcode"`
	Exited   int    `json:"exited"`
	OutData  string `json:"out-data"`
	ErrData  string `json:"err-data"`
}

// unwrapGuestExec replaces qm guest exec's JSON report by the streams and exit
// code of the command it ran. Output that is not such a report (truncated, or
// an error from qm itself) is left as it is.
func unwrapGuestExec(r ExecResult) ExecResult {
	if r.Truncated || r.ExitCode != 0 {
		return r
	}
	var rep guestExecReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || rep.ExitCode == nil {
		return r
	}
	r.Stdout, r.Stderr, r.ExitCode = rep.OutData, rep.ErrData, *rep.ExitCode
	r.StdoutBytes = int64(len(rep.OutData))
	return r
}
