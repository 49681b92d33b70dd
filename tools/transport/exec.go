package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/sandbox"
)

// Router is the Executor for inventory resources: it finds the first resource
// up the parent chain with a transport of its own, wraps the command once for
// every nested hop on the way (pct exec, qm guest exec, docker exec, kubectl
// exec) and runs it there, locally or over SSH. Limits apply to the whole run.
//
// It confines commands as policy says (RunSpec.Confine): with Landlock
// through the sandbox launcher locally, with bwrap on SSH targets that have
// it (probed once per target and remembered). A command that runs inside a
// container, VM or pod on the machine is out of the sandbox's reach: the
// container runtime starts it, not the sandboxed process.
type Router struct {
	inv    *inventory.Inventory
	limits Limits
	local  *LocalTransport
	// dialTimeout bounds SSH connection set-up.
	dialTimeout time.Duration
	// landlockABI is this kernel's Landlock ABI, read once; 0 when the
	// local sandbox is off.
	landlockABI int
	bwrap       bwrapCache
}

// RouterOptions configures a Router. Zero values mean the defaults.
type RouterOptions struct {
	Limits
	// LocalEnv replaces the local transport's default environment.
	LocalEnv []string
	// SSHDialTimeout bounds connecting to an SSH host; 0 means 10 s.
	SSHDialTimeout time.Duration
	// NoLocalSandbox treats this machine as one without Landlock: reads
	// here run unconfined, or are refused where policy requires a sandbox.
	NoLocalSandbox bool
}

var _ Executor = (*Router)(nil)

// NewRouter returns an Executor over inv.
func NewRouter(inv *inventory.Inventory, opts RouterOptions) *Router {
	r := &Router{
		inv:         inv,
		limits:      opts.Limits,
		local:       &LocalTransport{Limits: opts.Limits, Env: opts.LocalEnv},
		dialTimeout: opts.SSHDialTimeout,
	}
	if !opts.NoLocalSandbox {
		r.landlockABI = sandbox.ABI()
	}
	return r
}

// LocalSandbox says what confines reads on this machine: the Landlock ABI,
// or 0 and why none.
func (r *Router) LocalSandbox() (abi int, why string) {
	if r.landlockABI == 0 {
		return 0, "this kernel offers no Landlock (or the local sandbox is turned off)"
	}
	return r.landlockABI, ""
}

// Run runs spec.Command on res, confined as spec says.
func (r *Router) Run(ctx context.Context, res inventory.Resource, spec RunSpec, stdin io.Reader) (ExecResult, error) {
	shell := spec.Shell
	if shell == "" {
		shell = res.ShellOrDefault()
	}
	route, err := FindRoute(r.inv, res, spec.Command, shell, stdin != nil)
	if err != nil {
		return ExecResult{ExitCode: -1}, err
	}
	var remote *SSHTransport
	switch {
	case route.Via.Reach.Local:
	case route.Via.Reach.SSH != nil:
		remote = &SSHTransport{Limits: r.limits, Config: *route.Via.Reach.SSH, DialTimeout: r.dialTimeout}
		if err := remote.actAs(route.Via.Name, spec.Actor); err != nil {
			return ExecResult{ExitCode: -1}, err
		}
	default:
		return ExecResult{ExitCode: -1}, fmt.Errorf("%w: %s has no transport", ErrNoRoute, route.Via.Name)
	}

	job := Job{Command: route.Command, Shell: route.Shell, Network: spec.Network, Ports: spec.Ports, Datagrams: spec.Datagrams, Write: spec.Write}
	why := spec.Why
	switch spec.Confine {
	case policy.ConfineNone:
		if why == "" {
			why = "policy runs it unconfined"
		}
	default:
		missing, err := r.sandboxFor(ctx, route, remote, spec.Confine == policy.ConfineRequired)
		if err != nil {
			return ExecResult{ExitCode: -1}, err
		}
		switch {
		case missing == "":
			job.Confined = true
			job.BestEffort = spec.Confine != policy.ConfineRequired
		case spec.Confine == policy.ConfineRequired:
			return ExecResult{ExitCode: -1, Sandbox: unconfined(shell, "%s", missing)},
				fmt.Errorf("%w on %s: %s", ErrNoSandbox, route.Via.Name, missing)
		default:
			why = missing
		}
	}

	var out ExecResult
	if remote != nil {
		out, err = remote.Run(ctx, job, stdin)
	} else {
		out, err = r.local.Run(ctx, job, stdin)
	}
	out.Sandbox.Shell = shell
	if remote != nil && remote.actedAs != "" {
		out.ActedAs = remote.actedAs
	}
	if !out.Sandbox.Confined() && out.Sandbox.Detail == "" {
		out.Sandbox = unconfined(shell, "%s", why)
	}
	if err == nil && route.guestAgent {
		out = unwrapGuestExec(out)
	}
	return out, err
}

// sandboxFor says why route cannot run confined ("" when it can), finding
// bwrap on an SSH target first. required refuses a partial Landlock.
func (r *Router) sandboxFor(ctx context.Context, route Route, remote *SSHTransport, required bool) (string, error) {
	if route.outOfReach != "" {
		return route.outOfReach, nil
	}
	if remote == nil {
		abi, why := r.LocalSandbox()
		if abi > 0 && abi < sandbox.MinABI && required {
			why = fmt.Sprintf("this kernel's Landlock ABI %d cannot scope signals and abstract sockets (the sandbox needs %d)", abi, sandbox.MinABI)
		}
		return why, nil
	}
	path, why, err := r.bwrap.find(ctx, remote)
	if err != nil {
		return "", err
	}
	remote.Bwrap = path
	return why, nil
}

// bwrapCache remembers, per SSH login, whether bwrap works there, so each
// target is probed once. A probe that could not reach the target is not
// remembered.
type bwrapCache struct {
	mu sync.Mutex
	m  map[string]*bwrapEntry
}

type bwrapEntry struct {
	done      chan struct{}
	path, why string
	err       error
}

func (c *bwrapCache) find(ctx context.Context, t *SSHTransport) (path, why string, err error) {
	key := t.Config.User + "@" + t.addr()
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*bwrapEntry{}
	}
	e, ok := c.m[key]
	if !ok {
		e = &bwrapEntry{done: make(chan struct{})}
		c.m[key] = e
		c.mu.Unlock()
		e.path, e.why, e.err = t.ProbeBwrap(ctx)
		if e.err != nil {
			c.mu.Lock()
			delete(c.m, key)
			c.mu.Unlock()
		}
		close(e.done)
		return e.path, e.why, e.err
	}
	c.mu.Unlock()
	select {
	case <-e.done:
		return e.path, e.why, e.err
	case <-ctx.Done():
		return "", "", ctx.Err()
	}
}

// Route is how a command reaches a resource.
type Route struct {
	// Via is the resource whose own transport runs Command.
	Via inventory.Resource
	// Command is the command as Via runs it: the original wrapped once per
	// nested hop.
	Command string
	// Shell is the shell Via runs Command with: the shell the command was
	// classified for when it runs on Via itself, else Via's own shell for
	// vigil's wrapper.
	Shell command.Dialect
	// Hops are the resources passed through, from the target up to Via.
	Hops []policy.ResourceID
	// guestAgent marks a route whose outermost wrapper is qm guest exec,
	// whose output is a JSON report rather than the command's own streams.
	guestAgent bool
	// outOfReach says why a sandbox on Via cannot confine the command: it
	// runs inside a container, VM or pod that Via's runtime starts it in.
	outOfReach string
}

// FindRoute computes how cmd, a command for shell, reaches res in inv. stdin says
// whether the command reads standard input, which docker and kubectl must
// be told (-i).
func FindRoute(inv *inventory.Inventory, res inventory.Resource, cmd string, shell command.Dialect, stdin bool) (Route, error) {
	rt := Route{Command: cmd, Shell: shell}
	cur := res
	for range inv.Len() + 1 {
		rt.Hops = append(rt.Hops, cur.ID)
		if cur.Reach.Direct() {
			rt.Via = cur
			return rt, nil
		}
		wrapped, err := wrapForParent(cur, rt.Command, rt.Shell, stdin)
		if err != nil {
			return Route{}, err
		}
		rt.Command = wrapped
		rt.guestAgent = cur.Kind == inventory.KindVM
		if cur.Parent == "" {
			return Route{}, fmt.Errorf("%w: %s has no transport and no parent", ErrNoRoute, cur.Name)
		}
		p, ok := inv.Get(cur.Parent)
		if !ok {
			return Route{}, fmt.Errorf("%w: parent %s of %s is not in the inventory", ErrNoRoute, cur.Parent, cur.Name)
		}
		if cur.Kind != inventory.KindService {
			// vigil's wrapper runs in the parent's own shell.
			rt.Shell = p.ShellOrDefault()
			if rt.outOfReach == "" {
				rt.outOfReach = fmt.Sprintf("it runs inside %s %s, which %s's runtime starts it in, out of reach of a sandbox on %s",
					cur.Kind, cur.Name, p.Name, p.Name)
			}
		}
		cur = p
	}
	return Route{}, fmt.Errorf("%w: parent chain of %s does not end", ErrNoRoute, res.Name)
}

// wrapForParent turns a command for r into the command r's parent runs to
// execute it inside r. The inner command is passed as one quoted word to
// `bash --norc -c` or `sh -c` (shell, the dialect it was classified in), so
// nothing in it is interpreted by the parent's shell.
func wrapForParent(r inventory.Resource, cmd string, shell command.Dialect, stdin bool) (string, error) {
	inner := shellInvocation(shell, cmd)
	switch r.Kind {
	case inventory.KindLXC:
		return "pct exec " + ShellQuote(r.UID) + " -- " + inner, nil
	case inventory.KindVM:
		pass := ""
		if stdin {
			pass = " --pass-stdin 1"
		}
		return "qm guest exec " + ShellQuote(r.UID) + pass + " -- " + inner, nil
	case inventory.KindDockerContainer:
		flag := ""
		if stdin {
			flag = "-i "
		}
		return "docker exec " + flag + ShellQuote(r.UID) + " " + inner, nil
	case inventory.KindK8sPod:
		flag := ""
		if stdin {
			flag = "-i "
		}
		return "kubectl exec " + flag + ShellQuote(r.UID) + " -n " + ShellQuote(r.Namespace) + " -- " + inner, nil
	case inventory.KindService:
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
