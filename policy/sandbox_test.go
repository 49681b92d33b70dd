package policy

import (
	"slices"
	"strings"
	"testing"

	"github.com/vigilops/vigil/policy/command"
)

// readSession has delly resolved, so reads of it pass resolution and only
// the command decides.
// sandboxOperator runs the sandbox tests: an operator, so the role gate
// never decides them.
var sandboxOperator = Requester{User: "alice", Operator: true}

func readSession() *SessionState {
	s := NewSessionState()
	s.Context.Add(delly, t0)
	s.FSM.OnToolSuccess(KindResolve, "query", "")
	return s
}

func readAction(cmd string, d command.Dialect) Action {
	return Action{Tool: "read", Name: "exec", Kind: KindRead, Target: "delly", Command: cmd, Dialect: d}
}

func mustDeclare(t *testing.T, pattern string, network bool) ReadOnlyCommand {
	t.Helper()
	c, err := ParseReadOnlyCommand(pattern, network)
	if err != nil {
		t.Fatalf("ParseReadOnlyCommand(%q): %v", pattern, err)
	}
	return c
}

func TestReadExecutionFollowsSandboxMode(t *testing.T) {
	tests := []struct {
		mode        SandboxMode
		cmd         string
		wantConfine Confine
		wantNet     bool
		wantWhy     string
	}{
		{"", "cat /etc/hostname", ConfineBestEffort, false, ""},
		{SandboxBestEffort, "cat /etc/hostname", ConfineBestEffort, false, ""},
		{SandboxRequired, "cat /etc/hostname", ConfineRequired, false, ""},
		{SandboxOff, "cat /etc/hostname", ConfineNone, false, "policy.read_sandbox is off"},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode)+" "+tt.cmd, func(t *testing.T) {
			g := NewGate(Rules{ReadSandbox: tt.mode})
			d := g.Authorize(readSession(), readAction(tt.cmd, command.DialectBash), LevelControlled, sandboxOperator, t0)
			if !d.Allow {
				t.Fatalf("decision = %+v, want allow", d)
			}
			e := d.Execution
			if e.Confine != tt.wantConfine || e.Network != tt.wantNet || e.Why != tt.wantWhy || e.Shell != command.DialectBash {
				t.Errorf("execution = %+v, want confine %s, network %v, why %q, shell bash", e, tt.wantConfine, tt.wantNet, tt.wantWhy)
			}
			if d.Verdict.Network != tt.wantNet {
				t.Errorf("the classifier says network %v for %q; the test assumes %v", d.Verdict.Network, tt.cmd, tt.wantNet)
			}
		})
	}
}

// TestNetworkReadsMayConnect: a verdict that the read talks over the
// network lets the sandbox allow TCP connect to its destinations' ports
// (and no others), unless the sandbox is off.
func TestNetworkReadsMayConnect(t *testing.T) {
	dests := []command.Destination{{Host: "10.0.0.5", Port: 9090}, {Host: "127.0.0.1", Port: 443}, {Host: "10.0.0.6", Port: 9090}}
	for mode, want := range map[SandboxMode]bool{SandboxBestEffort: true, SandboxRequired: true, SandboxOff: false} {
		e := NewGate(Rules{ReadSandbox: mode}).readExecution(true, dests)
		if e.Network != want {
			t.Errorf("%s: network %v, want %v", mode, e.Network, want)
		}
		if want && (!slices.Equal(e.Ports, []int{443, 9090}) || e.Datagrams) {
			t.Errorf("%s: ports %v, datagrams %v; want [443 9090] and no datagrams (addresses need no resolving)", mode, e.Ports, e.Datagrams)
		}
		if e := NewGate(Rules{ReadSandbox: mode}).readExecution(false, dests); e.Network || e.Ports != nil || e.Datagrams {
			t.Errorf("%s: a read that stays local may connect: %+v", mode, e)
		}
		// Fail closed: a network read without destinations connects nowhere.
		if e := NewGate(Rules{ReadSandbox: mode}).readExecution(true, nil); e.Ports != nil || e.Datagrams {
			t.Errorf("%s: a network read without destinations may connect: %+v", mode, e)
		}
	}
}

func TestDestinationPorts(t *testing.T) {
	tests := []struct {
		dests     []command.Destination
		ports     []int
		datagrams bool
	}{
		{nil, nil, false},
		{[]command.Destination{{Host: "192.0.2.1", Port: 53}}, []int{53}, true},                           // dig @192.0.2.1
		{[]command.Destination{{Host: "db1.example.internal", Port: 5432}}, []int{5432}, true},            // resolve db1 first
		{[]command.Destination{{Host: "localhost", Port: 6443}}, []int{6443}, false},                      // /etc/hosts, no DNS
		{[]command.Destination{{Host: "api.localhost.", Port: 80}}, []int{80}, false},                     // RFC 6761
		{[]command.Destination{{Host: "[2001:db8::1]", Port: 443}}, []int{443}, false},                    // bracketed IPv6
		{[]command.Destination{{Host: "fe80::1%eth0", Port: 22}}, []int{22}, false},                       // zone
		{[]command.Destination{{Host: "10.0.0.1", Port: 0}, {Host: "10.0.0.1", Port: 70000}}, nil, false}, // no valid port: nothing
		{[]command.Destination{{Host: "b", Port: 80}, {Host: "a", Port: 22}, {Host: "c", Port: 80}}, []int{22, 80}, true},
	}
	for _, tt := range tests {
		ports, dg := destinationPorts(tt.dests)
		if !slices.Equal(ports, tt.ports) || dg != tt.datagrams {
			t.Errorf("destinationPorts(%v) = %v, %v; want %v, %v", tt.dests, ports, dg, tt.ports, tt.datagrams)
		}
	}
}

func TestWritesRunUnconfinedInTheirShell(t *testing.T) {
	g := NewGate(Rules{ReadSandbox: SandboxRequired})
	s := readSession()
	a := Action{Tool: "control", Name: "command", Kind: KindWrite, Target: "delly", Command: "touch /x", Dialect: command.DialectPOSIX}
	d := g.Authorize(s, a, LevelControlled, sandboxOperator, t0)
	if !d.NeedsApproval || d.Execution.Confine != ConfineNone || d.Execution.Shell != command.DialectPOSIX || d.Execution.Why == "" || !d.Execution.Write {
		t.Errorf("decision = %+v, want approval, unconfined, sh, with a reason, marked a write", d)
	}
	// Reads are never marked writes: they run in the read environment.
	for _, mode := range []SandboxMode{SandboxOff, SandboxBestEffort, SandboxRequired} {
		r := NewGate(Rules{ReadSandbox: mode}).Authorize(s, Action{Tool: "read", Kind: KindRead, Target: "delly", Command: "uptime"}, LevelControlled, sandboxOperator, t0)
		if !r.Allow || r.Execution.Write {
			t.Errorf("%s: read decision = %+v, want allowed and not a write", mode, r)
		}
	}
	d = g.Authorize(s, a, LevelAutonomous, sandboxOperator, t0)
	if !d.Allow || d.Execution.Confine != ConfineNone {
		t.Errorf("autonomous decision = %+v, want allow, unconfined", d)
	}
}

func TestResolveNeverRequiresTheSandbox(t *testing.T) {
	for mode, want := range map[SandboxMode]Confine{
		SandboxRequired: ConfineBestEffort, SandboxBestEffort: ConfineBestEffort, SandboxOff: ConfineNone,
	} {
		d := NewGate(Rules{ReadSandbox: mode}).Authorize(NewSessionState(), Action{Tool: "discover", Kind: KindResolve}, LevelControlled, sandboxOperator, t0)
		if !d.Allow || d.Execution.Confine != want {
			t.Errorf("%s: decision = %+v, want allow with %s", mode, d, want)
		}
	}
}

// TestGateClassifiesInTheTargetsDialect: the same text is judged in the
// shell that will run it, and the decision names that shell.
func TestGateClassifiesInTheTargetsDialect(t *testing.T) {
	g := NewGate(Rules{})
	for _, d := range []command.Dialect{command.DialectBash, command.DialectPOSIX} {
		dec := g.Authorize(readSession(), readAction("echo $'a'", d), LevelControlled, sandboxOperator, t0)
		if dec.Verdict == nil || dec.Verdict.Dialect != d {
			t.Fatalf("%s: verdict = %+v, want one reached in %s", d, dec.Verdict, d)
		}
		if dec.Allow && dec.Execution.Shell != d {
			t.Errorf("%s: execution shell = %q", d, dec.Execution.Shell)
		}
	}
	// No dialect on the action means bash.
	dec := g.Authorize(readSession(), readAction("uptime", ""), LevelControlled, sandboxOperator, t0)
	if !dec.Allow || dec.Verdict.Dialect != command.DialectBash || dec.Execution.Shell != command.DialectBash {
		t.Errorf("default dialect: %+v", dec)
	}
}

func TestDeclaredCommands(t *testing.T) {
	rules := Rules{ReadOnlyCommands: []ReadOnlyCommand{
		mustDeclare(t, "mytool status", false),
		mustDeclare(t, "kafka-topics --describe", true),
		mustDeclare(t, "touch", false),
	}}
	g := NewGate(rules)
	tests := []struct {
		cmd     string
		allow   bool
		pattern string
		network bool
	}{
		{cmd: "mytool status", allow: true, pattern: "mytool status"},
		{cmd: "mytool status --all 'web 1' \"db\"", allow: true, pattern: "mytool status"},
		{cmd: "mytool status 2>/dev/null", allow: true, pattern: "mytool status"},
		{cmd: "mytool status 2>&1 | grep -c up", allow: true, pattern: "mytool status"},
		{cmd: "kafka-topics --describe --topic x | head -n 5", allow: true, pattern: "kafka-topics --describe", network: true},
		{cmd: "touch /tmp/x", allow: true, pattern: "touch"},
		// The verb words must follow the command, exactly.
		{cmd: "mytool", allow: false},
		{cmd: "mytool restart", allow: false},
		{cmd: "mytool --force status", allow: false},
		{cmd: "/opt/bin/mytool status", allow: false},
		{cmd: "MYTOOL status", allow: false},
		// Expansions, globs, escapes and assignments are not literal words.
		{cmd: "mytool status $(rm -rf /)", allow: false},
		{cmd: "mytool status `id`", allow: false},
		{cmd: "mytool status $HOME", allow: false},
		{cmd: "mytool status *.log", allow: false},
		{cmd: "mytool status {a,b}", allow: false},
		{cmd: "mytool status ~root", allow: false},
		{cmd: "mytool status a\\ b", allow: false},
		{cmd: "mytool status $'x'", allow: false},
		{cmd: "FOO=1 mytool status", allow: false},
		// Output only to /dev/null or the other stream.
		{cmd: "mytool status > /tmp/out", allow: false},
		{cmd: "mytool status >> /etc/passwd", allow: false},
		{cmd: "mytool status 3>/dev/null", allow: false},
		{cmd: "mytool status < /etc/shadow", allow: false},
		{cmd: "mytool status <<< x", allow: false},
		// Every other part of the line must be proven read-only.
		{cmd: "mytool status | sh", allow: false},
		{cmd: "mytool status | tee /tmp/x", allow: false},
		{cmd: "mytool status; rm -rf /tmp/x", allow: false},
		{cmd: "mytool status && reboot", allow: false},
		{cmd: "mytool status &", allow: false},
		{cmd: "! mytool status", allow: false},
		{cmd: "(mytool status)", allow: false},
		{cmd: "mytool status | tail -f /var/log/syslog", allow: false},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			d := g.Authorize(readSession(), readAction(tt.cmd, command.DialectBash), LevelControlled, sandboxOperator, t0)
			if d.Allow != tt.allow {
				t.Fatalf("allow = %v, want %v (decision %+v)", d.Allow, tt.allow, d)
			}
			if !tt.allow {
				if d.Block == nil {
					t.Errorf("refused without a block: %+v", d)
				}
				return
			}
			e := d.Execution
			if e.Confine != ConfineRequired || e.Declared != tt.pattern || e.Network != tt.network {
				t.Errorf("execution = %+v, want required, declared %q, network %v", e, tt.pattern, tt.network)
			}
		})
	}
}

// TestDeclaredCommandsNeedTheSandbox: with the sandbox off, a declared
// command is refused and pointed at the approval path; proven reads are
// unaffected by declarations.
func TestDeclaredCommandsNeedTheSandbox(t *testing.T) {
	g := NewGate(Rules{ReadSandbox: SandboxOff, ReadOnlyCommands: []ReadOnlyCommand{mustDeclare(t, "mytool status", false)}})
	d := g.Authorize(readSession(), readAction("mytool status", command.DialectBash), LevelControlled, sandboxOperator, t0)
	if d.Allow || d.Block == nil || d.Block.Code != CodePolicyBlocked ||
		!strings.Contains(d.Block.Message, "policy.read_sandbox is off") || !strings.Contains(d.Block.RecoveryHint, "control") {
		t.Errorf("decision = %+v, want a block naming the sandbox and the control tool", d)
	}
	d = g.Authorize(readSession(), readAction("uptime", command.DialectBash), LevelControlled, sandboxOperator, t0)
	if !d.Allow || d.Execution.Confine != ConfineNone || d.Execution.Declared != "" {
		t.Errorf("uptime: %+v", d)
	}
}

// TestDeclaredCommandsInPOSIXDialect: in sh, $'x' is a dollar sign and a
// quoted x, both literal, so it is a plain argument there.
func TestDeclaredCommandsInPOSIXDialect(t *testing.T) {
	g := NewGate(Rules{ReadOnlyCommands: []ReadOnlyCommand{mustDeclare(t, "mytool status", false)}})
	d := g.Authorize(readSession(), readAction("mytool status $'x'", command.DialectPOSIX), LevelControlled, sandboxOperator, t0)
	if !d.Allow || d.Execution.Shell != command.DialectPOSIX || d.Execution.Declared != "mytool status" {
		t.Errorf("decision = %+v", d)
	}
}

func TestParseReadOnlyCommand(t *testing.T) {
	good := map[string][]string{
		"mytool status":                {"mytool", "status"},
		"  kafka-topics   --describe ": {"kafka-topics", "--describe"},
		"/opt/x/bin/tool list":         {"/opt/x/bin/tool", "list"},
		"ceph osd tree --format=json":  {"ceph", "osd", "tree", "--format=json"},
	}
	for in, want := range good {
		c, err := ParseReadOnlyCommand(in, true)
		if err != nil || strings.Join(c.Words, "|") != strings.Join(want, "|") || !c.Network {
			t.Errorf("ParseReadOnlyCommand(%q) = %+v, %v; want %v", in, c, err, want)
		}
	}
	for _, in := range []string{"", "   ", "my$tool status", "tool 'x'", "tool *", "tool ;reboot", "-rf tool", "FOO=1 tool", "tool `id`"} {
		if _, err := ParseReadOnlyCommand(in, false); err == nil {
			t.Errorf("ParseReadOnlyCommand(%q) accepted", in)
		}
	}
}

func TestParseSandboxMode(t *testing.T) {
	for in, want := range map[string]SandboxMode{"": SandboxBestEffort, "best_effort": SandboxBestEffort, "required": SandboxRequired, "off": SandboxOff} {
		if got, err := ParseSandboxMode(in); err != nil || got != want {
			t.Errorf("ParseSandboxMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseSandboxMode("strict"); err == nil || !strings.Contains(err.Error(), `"strict"`) || !strings.Contains(err.Error(), "required") {
		t.Errorf("ParseSandboxMode(strict): %v", err)
	}
}

// FuzzDeclared: whatever the command, matching declarations neither panics
// nor allows a command whose first word is not a declared command name.
func FuzzDeclared(f *testing.F) {
	for _, s := range []string{"mytool status", "mytool status | grep x", "mytool status 2>/dev/null", "x=1 mytool status", "mytool status $(id)", "a | b | c"} {
		f.Add(s)
	}
	g := NewGate(Rules{ReadOnlyCommands: []ReadOnlyCommand{{Words: []string{"mytool", "status"}}}})
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, d := range []command.Dialect{command.DialectBash, command.DialectPOSIX} {
			pattern, _, _, ok := g.declared(cmd, d)
			if ok && (pattern != "mytool status" || !strings.Contains(cmd, "mytool")) {
				t.Fatalf("declared(%q, %s) = %q", cmd, d, pattern)
			}
		}
	})
}
