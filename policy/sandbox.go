package policy

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/vigilops/vigil/policy/command"
)

// SandboxMode is policy.read_sandbox: whether the commands that run without
// approval must run confined by the OS (Landlock on vigil's machine, bwrap
// on SSH targets).
type SandboxMode string

const (
	// SandboxBestEffort confines reads where the target offers a sandbox
	// and runs them unconfined, saying so in the trace, where it does not.
	// It is the default; the zero value means it too.
	SandboxBestEffort SandboxMode = "best_effort"
	// SandboxRequired refuses reads where no sandbox is available.
	SandboxRequired SandboxMode = "required"
	// SandboxOff runs every read unconfined: for debugging only.
	SandboxOff SandboxMode = "off"
)

// ParseSandboxMode checks a policy.read_sandbox value; "" is best_effort.
func ParseSandboxMode(s string) (SandboxMode, error) {
	switch m := SandboxMode(s); m {
	case "":
		return SandboxBestEffort, nil
	case SandboxBestEffort, SandboxRequired, SandboxOff:
		return m, nil
	}
	return "", fmt.Errorf("%q is not a sandbox mode; use best_effort (the default), required or off", s)
}

// Confine is what policy demands of the OS sandbox for one call.
type Confine string

const (
	// ConfineBestEffort: run confined where the target offers a sandbox,
	// unconfined where it does not. The zero value means it too, so a
	// call that never met the gate is not run unconfined by omission.
	ConfineBestEffort Confine = "best_effort"
	// ConfineRequired: run confined or not at all.
	ConfineRequired Confine = "required"
	// ConfineNone: run unconfined (writes, and reads when the sandbox is
	// off). Execution.Why says why.
	ConfineNone Confine = "none"
)

// Execution is how policy lets an authorised call execute: the shell its
// command was classified for and must run with, and the confinement it
// must run under. The agent copies it from the Decision onto the call;
// executors do as it says and decide nothing themselves.
type Execution struct {
	// Shell is the dialect the command was classified in; "" when the call
	// carries no classified command (the executor then uses the target's).
	Shell command.Dialect `json:"shell,omitempty"`
	// Confine is the sandbox requirement; "" means best effort.
	Confine Confine `json:"confine,omitempty"`
	// Network lets a confined command reach the network, for reads the
	// classifier found talk over it (command.Verdict.Network): TCP to
	// Ports only, datagrams only with Datagrams. Without it the command
	// gets no network at all (bwrap: an empty network namespace).
	Network bool `json:"network,omitempty"`
	// Ports are the TCP ports of the destinations the read was proven to
	// connect to (command.Verdict.Destinations), sorted: a confined read
	// may connect to these ports and no others, and to none when there
	// are none, even with Network. The kernel (Landlock) sees ports, not
	// hosts.
	Ports []int `json:"ports,omitempty"`
	// Datagrams lets a confined network read send UDP (and ICMP echo),
	// which it needs to ask a DNS server (a destination on port 53) or to
	// resolve a destination's host name. The kernel cannot restrict where
	// datagrams go, so they may go to any host and port.
	Datagrams bool `json:"datagrams,omitempty"`
	// Declared is the policy.read_only_commands pattern that allowed a
	// command the classifier could not prove read-only. Such a command
	// runs only inside the sandbox (Confine is required).
	Declared string `json:"declared,omitempty"`
	// Why says why a command runs unconfined when Confine is none.
	Why string `json:"why,omitempty"`
	// Write marks a change (policy sets it for writes only): it runs in
	// the plain environment. Every other call runs in the read
	// environment, which asks servers that can enforce it for a read-only
	// session (PGOPTIONS), so a call that never met the gate is not let
	// write by omission.
	Write bool `json:"write,omitempty"`
}

// ReadOnlyCommand is one policy.read_only_commands entry: a command the
// operator declares read-only, named by its command word and leading verb
// words ("mytool status", "kafka-topics --describe"). It is trusted only
// inside the read sandbox.
type ReadOnlyCommand struct {
	// Words are the command name and the verb words that must follow it,
	// exactly and in order; any arguments may come after them.
	Words []string
	// Network lets the command connect over TCP (a client of a server).
	Network bool
	// Hosts are the servers a network command connects to (host[:port];
	// no port: any port of the host). They are destinations vigil knows
	// for every read (command.Options.Destinations), and where the
	// sandbox lets this command connect.
	Hosts []command.Destination
}

// Pattern is the entry as written.
func (c ReadOnlyCommand) Pattern() string { return strings.Join(c.Words, " ") }

// declaredWord is what a word of a pattern may hold: no quoting, globbing
// or expansion, so that it means the same to every shell.
var declaredWord = regexp.MustCompile(`^[A-Za-z0-9_./:@%+,=-]+$`)

// ParseReadOnlyCommand checks one policy.read_only_commands pattern and
// the hosts it connects to (host[:port], only for a network command).
func ParseReadOnlyCommand(pattern string, network bool, hosts ...string) (ReadOnlyCommand, error) {
	words := strings.Fields(pattern)
	if len(words) == 0 {
		return ReadOnlyCommand{}, errors.New("is empty; give a command and its read-only verb")
	}
	for _, w := range words {
		if !declaredWord.MatchString(w) {
			return ReadOnlyCommand{}, fmt.Errorf("%q: word %q may hold only letters, digits and . _ / : @ %% + , = -, no quotes, globs or shell syntax", pattern, w)
		}
	}
	if strings.Contains(words[0], "=") || strings.HasPrefix(words[0], "-") {
		return ReadOnlyCommand{}, fmt.Errorf("%q: must start with a command name", pattern)
	}
	if len(hosts) > 0 && !network {
		return ReadOnlyCommand{}, fmt.Errorf("%q: hosts are given but network is false; set network: true for a client of those hosts", pattern)
	}
	var dests []command.Destination
	for _, h := range hosts {
		d, err := command.ParseDestination(h)
		if err != nil {
			return ReadOnlyCommand{}, fmt.Errorf("%q: host %w", pattern, err)
		}
		dests = append(dests, d)
	}
	return ReadOnlyCommand{Words: words, Network: network, Hosts: dests}, nil
}

// declared reports whether cmd, read in dialect d, is a pipeline in which
// every part is either a declared read-only command (literal words, output
// only to /dev/null or the other stream) or proven read-only and bounded by
// the classifier, with at least one declared part. It returns the first
// declared pattern, whether any part needs the network and the
// destinations the classifier proved for the parts it read.
func (g *Gate) declared(cmd string, d command.Dialect) (pattern string, network bool, dests []command.Destination, ok bool) {
	if len(g.rules.ReadOnlyCommands) == 0 {
		return "", false, nil, false
	}
	lang := syntax.LangBash
	if d == command.DialectPOSIX {
		lang = syntax.LangPOSIX
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) != 1 || len(f.Last) != 0 {
		return "", false, nil, false
	}
	var stages []*syntax.Stmt
	if !pipelineStages(f.Stmts[0], &stages) {
		return "", false, nil, false
	}
	printer := syntax.NewPrinter()
	for _, st := range stages {
		if c, matched := g.matchDeclared(st); matched {
			if pattern == "" {
				pattern = c.Pattern()
			}
			network = network || c.Network
			continue
		}
		var b strings.Builder
		if err := printer.Print(&b, st); err != nil {
			return "", false, nil, false
		}
		v := g.rules.Command.Classify(b.String(), d)
		if !v.ReadOnly() || !v.Bounded {
			return "", false, nil, false
		}
		network = network || v.Network
		dests = append(dests, v.Destinations...)
	}
	return pattern, network, dests, pattern != ""
}

// pipelineStages flattens a plain pipeline (a | b | c, nothing run in the
// background, negated or coprocessed) into its stages.
func pipelineStages(st *syntax.Stmt, out *[]*syntax.Stmt) bool {
	if st.Background || st.Coprocess || st.Negated || st.Cmd == nil {
		return false
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		*out = append(*out, st)
		return true
	case *syntax.BinaryCmd:
		if c.Op != syntax.Pipe || len(st.Redirs) != 0 {
			return false
		}
		return pipelineStages(c.X, out) && pipelineStages(c.Y, out)
	}
	return false
}

// matchDeclared reports whether st is a declared command: no assignments,
// every word a literal, the leading words those of a pattern, and output
// redirected at most to /dev/null or the other stream.
func (g *Gate) matchDeclared(st *syntax.Stmt) (ReadOnlyCommand, bool) {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) != 0 || len(call.Args) == 0 {
		return ReadOnlyCommand{}, false
	}
	words := make([]string, len(call.Args))
	for i, w := range call.Args {
		s, ok := literalWord(w)
		if !ok {
			return ReadOnlyCommand{}, false
		}
		words[i] = s
	}
	for _, r := range st.Redirs {
		if !harmlessRedirect(r) {
			return ReadOnlyCommand{}, false
		}
	}
	for _, c := range g.rules.ReadOnlyCommands {
		if len(words) >= len(c.Words) && equalWords(words[:len(c.Words)], c.Words) {
			return c, true
		}
	}
	return ReadOnlyCommand{}, false
}

func equalWords(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// literalWord is w's value when it has no expansion of any kind: plain
// text, single quotes, or double quotes around plain text. Escapes are
// refused rather than interpreted.
func literalWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "\\*?[{~") {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.Contains(l.Value, "\\") {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// harmlessRedirect is >/dev/null, >>/dev/null, 2>/dev/null, 2>&1 or 1>&2.
func harmlessRedirect(r *syntax.Redirect) bool {
	fd := "1"
	if r.N != nil {
		fd = r.N.Value
	}
	if fd != "1" && fd != "2" || r.Hdoc != nil || r.Word == nil {
		return false
	}
	target, ok := literalWord(r.Word)
	if !ok {
		return false
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut:
		return target == "/dev/null"
	case syntax.DplOut:
		return target == "1" || target == "2"
	}
	return false
}
