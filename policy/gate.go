package policy

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/vigilops/vigil/policy/command"
)

// Decision is policy's answer to one proposed tool call. Exactly one of
// Allow, NeedsApproval or Block is meaningful: Block non-nil means refused.
type Decision struct {
	Allow         bool
	NeedsApproval bool
	Block         *Block
	// Verdict is the classifier's decision for calls that carry a shell
	// command; nil otherwise.
	Verdict *command.Verdict
	// Execution is how an allowed call must run (shell, sandbox, network).
	// The agent hands it to the tool with the call.
	Execution Execution
	// Risk and Reasons assess a write that may run or wait for approval:
	// the classifier's verdict, or the file it writes, raised to high when
	// it touches a system path (SystemPath). The approval card shows them
	// as decided here. Empty for reads and refusals.
	Risk    command.Risk
	Reasons []string
}

// Rules are the operator's settings that shape policy decisions (the
// `policy.*` configuration). The zero value is the strictest classifier,
// no operator-declared commands, and the default best-effort read sandbox.
type Rules struct {
	// Command configures the shell-command classifier.
	Command command.Options
	// ReadSandbox is policy.read_sandbox; "" means best effort.
	ReadSandbox SandboxMode
	// ReadOnlyCommands are policy.read_only_commands: commands allowed
	// without approval only inside the read sandbox.
	ReadOnlyCommands []ReadOnlyCommand
}

// Gate decides proposed tool calls under one set of Rules. It holds no
// per-session state and is safe for concurrent use.
type Gate struct {
	rules  Rules
	scopes ScopeResolver
	dests  *DestinationMap
}

// NewGate builds the gate for rules.
func NewGate(r Rules) *Gate { return &Gate{rules: r} }

// WithScopes has the gate place targets with r for channel scopes
// (scope.go); without it a scoped run can only name Kubernetes objects
// by ID and what its session resolved.
func (g *Gate) WithScopes(r ScopeResolver) *Gate {
	g.scopes = r
	return g
}

// WithDestinations has the gate place a shell command's destinations
// with m for channel scopes (scopedest.go); without it a scoped channel's
// shell command may reach only the machine it runs on.
func (g *Gate) WithDestinations(m *DestinationMap) *Gate {
	g.dests = m
	return g
}

// Authorize is the one choke point every tool call passes before it runs
// (the channel's scope, the role gate for writes, gate 1, resolution, routing, command intent,
// exit-boundedness and the channel's control level), in that order: the
// first refusal wins. who is the person (or system) the run acts for.
//
// It reads the session but changes nothing; the agent reports outcomes
// through the FSM and resolved context after the call.
func (g *Gate) Authorize(s *SessionState, a Action, level ControlLevel, who Requester, now time.Time) Decision {
	if b := g.scopeBlock(s, a, who.Scope); b != nil {
		return Decision{Block: b}
	}
	if a.Kind != KindResolve && a.Kind != KindRead {
		if b := who.changeBlock(); b != nil {
			return Decision{Block: b}
		}
	}
	if b := s.FSM.CanExecute(a.Kind); b != nil {
		return Decision{Block: b}
	}
	switch a.Kind {
	case KindResolve:
		// Resolve tools run only vigil's own fixed commands (discover's
		// probes, health checks): confined where possible, never refused
		// for want of a sandbox.
		e := g.readExecution(false, nil)
		if e.Confine == ConfineRequired {
			e.Confine = ConfineBestEffort
		}
		return Decision{Allow: true, Execution: e}
	case KindRead:
		return g.authorizeRead(s, a, who.Scope, now)
	default:
		return g.authorizeWrite(s, a, level, who, now)
	}
}

// scopedReadTools ask about a resource rather than act inside it, so a
// parent node's metrics stay readable while a child is in focus.
var scopedReadTools = map[string]bool{"metrics": true, "alerts": true}

func (g *Gate) authorizeRead(s *SessionState, a Action, sc *Scope, now time.Time) Decision {
	if a.Target != "" {
		check := s.Context.CheckRead
		if scopedReadTools[a.Tool] {
			check = s.Context.CheckReadScope
		}
		if b := check(a.Target, now); b != nil {
			return Decision{Block: b}
		}
	}
	if a.Command == "" {
		return Decision{Allow: true, Execution: g.readExecution(false, nil)}
	}
	v := g.classify(a.Command, a.Dialect)
	if !v.ReadOnly() {
		if pattern, network, dests, ok := g.declared(a.Command, v.Dialect); ok {
			if b := g.declaredScope(sc, a.Command, v.Dialect, dests); b != nil {
				return Decision{Verdict: &v, Block: b}
			}
			return g.allowDeclared(a, v, pattern, network, dests)
		}
		return Decision{Verdict: &v, Block: &Block{
			Code:         CodePolicyBlocked,
			Message:      fmt.Sprintf("%s refuses commands it cannot prove read-only: %s", a.Tool, strings.Join(v.Reasons, "; ")),
			RecoveryHint: "use a read-only command, or propose the change with the control tool",
			Details:      map[string]any{"intent": string(v.Intent), "risk": string(v.Risk), "reasons": v.Reasons},
		}}
	}
	if !v.Bounded {
		b := &Block{
			Code:    CodePolicyBlocked,
			Message: fmt.Sprintf("%s only runs commands that exit by themselves; this one does not (%s)", a.Tool, v.Category),
			Details: map[string]any{"category": string(v.Category), "reasons": v.Reasons},
		}
		if v.SuggestedRewrite != "" {
			b.SuggestedRewrite = v.SuggestedRewrite
			b.AutoRecoverable = true
			b.RecoveryHint = "run the bounded form instead: " + v.SuggestedRewrite
		} else {
			b.RecoveryHint = "bound the command (a count, --no-pager, or a timeout wrapper)"
		}
		return Decision{Verdict: &v, Block: b}
	}
	if b := sc.CheckDestinations(g.dests, v.Destinations); b != nil {
		return Decision{Verdict: &v, Block: b}
	}
	e := g.readExecution(v.Network, v.Destinations)
	e.Shell = v.Dialect
	return Decision{Allow: true, Verdict: &v, Execution: e}
}

// readExecution is how a read runs under policy.read_sandbox: confined
// (or not), and for a network read, to the ports of its destinations.
func (g *Gate) readExecution(network bool, dests []command.Destination) Execution {
	var e Execution
	switch g.rules.ReadSandbox {
	case SandboxOff:
		return Execution{Confine: ConfineNone, Why: "policy.read_sandbox is off"}
	case SandboxRequired:
		e.Confine = ConfineRequired
	default:
		e.Confine = ConfineBestEffort
	}
	if network {
		e.Network = true
		e.Ports, e.Datagrams = destinationPorts(dests)
	}
	return e
}

// destinationPorts are the TCP ports of dests, sorted and each once, and
// whether reaching them needs datagrams: a DNS server (port 53) is asked
// over UDP, and a host name must be resolved, which the C library and Go
// do over UDP too. An IP address, localhost and names under .localhost
// (RFC 6761: the resolver answers them itself) need none. A port outside
// 1-65535 allows nothing.
func destinationPorts(dests []command.Destination) (ports []int, datagrams bool) {
	for _, d := range dests {
		if d.Port >= 1 && d.Port <= 65535 && !slices.Contains(ports, d.Port) {
			ports = append(ports, d.Port)
		}
		datagrams = datagrams || d.Port == 53 || needsResolving(d.Host)
	}
	slices.Sort(ports)
	return ports, datagrams
}

// needsResolving reports whether host is a name the resolver must look up.
func needsResolving(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if i := strings.IndexByte(h, '%'); i >= 0 { // fe80::1%eth0
		h = h[:i]
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return false
	}
	return h != "localhost" && !strings.HasSuffix(h, ".localhost")
}

// allowDeclared allows a command that policy.read_only_commands declares
// read-only, on condition that it runs inside the sandbox: the executor
// refuses it where none is available, and it then needs approval as a
// change (the control tool).
func (g *Gate) allowDeclared(a Action, v command.Verdict, pattern string, network bool, dests []command.Destination) Decision {
	if g.rules.ReadSandbox == SandboxOff {
		return Decision{Verdict: &v, Block: &Block{
			Code: CodePolicyBlocked,
			Message: fmt.Sprintf("%s: %q is read-only only by policy.read_only_commands (%s), which holds only inside the read sandbox, "+
				"and policy.read_sandbox is off", a.Tool, a.Command, pattern),
			RecoveryHint: "propose the command with the control tool (action command); it then needs approval like any change",
			Details:      map[string]any{"declared": pattern, "reasons": v.Reasons},
		}}
	}
	e := Execution{Shell: v.Dialect, Confine: ConfineRequired, Network: network, Declared: pattern}
	if network {
		e.Ports, e.Datagrams = destinationPorts(dests)
	}
	return Decision{Allow: true, Verdict: &v, Execution: e}
}

func (g *Gate) authorizeWrite(s *SessionState, a Action, level ControlLevel, who Requester, now time.Time) Decision {
	if level != LevelControlled && level != LevelAutonomous {
		// read_only, and anything unrecognised: fail closed.
		return Decision{Block: &Block{
			Code:         CodeActionNotAllowed,
			Message:      "this channel is read-only: no change can run here",
			RecoveryHint: "report what you found and what change you would suggest, without making it",
		}}
	}
	if a.Target != "" {
		if b := s.Context.CheckWrite(a.Target, now); b != nil {
			return Decision{Block: b}
		}
	}
	d := g.assessWrite(a)
	d.Execution = Execution{Confine: ConfineNone, Why: "a change runs unconfined", Write: true}
	if d.Verdict != nil {
		d.Execution.Shell = d.Verdict.Dialect
	}
	if level == LevelAutonomous && !who.System {
		d.Allow = true
	} else {
		// A run no person started never changes anything unapproved.
		d.NeedsApproval = true
	}
	return d
}

// assessWrite weighs a write for the approval card. A file write is judged
// by its path (its Command only describes it); a command by the
// classifier's verdict. Either way, naming a system path makes it high
// risk.
func (g *Gate) assessWrite(a Action) Decision {
	var d Decision
	switch {
	case a.Path != "":
		d.Risk = command.RiskMedium
		if what, ok := SystemPath(a.Path); ok {
			d.Risk = command.RiskHigh
			d.Reasons = []string{fmt.Sprintf("writes %s: %s (a system path)", a.Path, what)}
		} else {
			d.Reasons = []string{"writes " + a.Path}
		}
	case a.Command != "":
		v := g.classify(a.Command, a.Dialect)
		d.Verdict = &v
		d.Risk, d.Reasons = v.Risk, append([]string(nil), v.Reasons...)
		paths, whats := systemPathsIn(a.Command)
		for i, p := range paths {
			d.Risk = command.RiskHigh
			d.Reasons = append(d.Reasons, fmt.Sprintf("names %s: %s (a system path)", p, whats[i]))
		}
	default:
		d.Risk = command.RiskMedium
		d.Reasons = []string{fmt.Sprintf("%s changes state; vigil cannot inspect the effect in advance", actionName(a))}
	}
	return d
}

// actionName is "tool" or "tool.action", as traces show calls.
func actionName(a Action) string {
	if a.Name == "" {
		return a.Tool
	}
	return a.Tool + "." + a.Name
}

// classify runs the command classifier under the gate's rules, in the
// dialect of the shell the target runs commands with (bash when the action
// does not say).
func (g *Gate) classify(cmd string, d command.Dialect) command.Verdict {
	if d == "" {
		d = command.DialectBash
	}
	return g.rules.Command.Classify(cmd, d)
}

// scopeBlock refuses a call that touches something outside the run's
// channel scope: its declared reaches, and what its target names. A
// target the gate cannot place is refused too when there is a scope.
func (g *Gate) scopeBlock(s *SessionState, a Action, sc *Scope) *Block {
	if sc == nil {
		return nil
	}
	if b := sc.Check(a.Target, a.Reaches); b != nil {
		return b
	}
	if a.Kind != KindResolve && a.Kind != KindRead && a.Path == "" && a.Command != "" {
		// A change's command proves no destinations: what its words name
		// must be in scope, and an approval cannot widen it (scopedest.go).
		// A read's destinations are checked once classified.
		if b := sc.CheckCommandWords(g.dests, a.Command); b != nil {
			return b
		}
	}
	if strings.TrimSpace(a.Target) == "" {
		return nil
	}
	reaches, ok := g.targetReaches(s, a.Target)
	if !ok {
		return sc.Unknown(a.Target)
	}
	return sc.Check(a.Target, reaches)
}

// targetReaches places target: by the resolver (inventory names, aliases
// and IDs; Kubernetes objects), by a Kubernetes ID, or through the
// resource the session resolved under that name.
func (g *Gate) targetReaches(s *SessionState, target string) ([]Reach, bool) {
	if g.scopes != nil {
		if r, ok := g.scopes.Reaches(target); ok {
			return r, true
		}
	}
	if r, ok := KubeReach(ResourceID(target)); ok {
		return []Reach{r}, true
	}
	if s == nil || s.Context == nil {
		return nil, false
	}
	res, ok := s.Context.Peek(target)
	if !ok {
		return nil, false
	}
	if r, ok := KubeReach(res.ID); ok {
		return []Reach{r}, true
	}
	if g.scopes != nil {
		for _, n := range []string{string(res.ID), res.Name, res.Node} {
			if n == "" {
				continue
			}
			if r, ok := g.scopes.Reaches(n); ok {
				return r, true
			}
		}
	}
	return nil, false
}
