package builtin

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vigilops/vigil/internal/testenv/redistest"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/sandbox"
	"github.com/vigilops/vigil/tools/transport"
)

// These tests go the whole way a read goes: the read tool proposes, the
// real policy gate decides (with operator-declared read-only commands that
// in truth write), the decision's Execution reaches the tool, and the
// transport runs the command under the real kernel's sandbox.

var sandboxT0 = time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)

// declaredWriters are commands an operator wrongly declared read-only.
func declaredWriters(t *testing.T) policy.Rules {
	t.Helper()
	var rules policy.Rules
	for _, p := range []string{"touch", "sh -c", "rm", "kill", "bash -c"} {
		c, err := policy.ParseReadOnlyCommand(p, false)
		if err != nil {
			t.Fatal(err)
		}
		rules.ReadOnlyCommands = append(rules.ReadOnlyCommands, c)
	}
	return rules
}

// gated proposes a read exec of cmd on target and lets the gate decide, as
// the agent does; it fails unless the gate allows it.
func gated(t *testing.T, tool tools.Tool, inv *inventory.Inventory, rules policy.Rules, target, cmd string) tools.Proposal {
	t.Helper()
	p := mustPropose(t, tool, fmt.Sprintf(`{"action":"exec","target":%q,"command":%q}`, target, cmd))
	res, ok := inv.Lookup(target)
	if !ok {
		t.Fatalf("%s is not in the inventory", target)
	}
	s := policy.NewSessionState()
	s.Context.Add(res.ToPolicy(), sandboxT0)
	s.FSM.OnToolSuccess(policy.KindResolve, "query", "")
	d := policy.NewGate(rules).Authorize(s, p.Action, policy.LevelControlled, policy.Requester{User: "alice", Operator: true}, sandboxT0)
	if !d.Allow {
		t.Fatalf("the gate refused %q: %+v", cmd, d)
	}
	p.Execution = d.Execution
	return p
}

// loopbackListener counts the connections it is offered.
func loopbackListener(t *testing.T) (addr string, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = &atomic.Int32{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().String(), accepted
}

// victimProcess starts a process the test owns and returns its pid.
func victimProcess(t *testing.T) int {
	t.Helper()
	c := exec.Command("sleep", "120")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	return c.Process.Pid
}

// writeAttempt is a declared "read" that really writes, and how to see
// whether it got through.
type writeAttempt struct {
	name, cmd string
	intact    func() error
}

func writeAttempts(t *testing.T, dir string) []writeAttempt {
	t.Helper()
	keep := filepath.Join(dir, "keep")
	if err := os.WriteFile(keep, []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	absent := func(name string) func() error {
		return func() error {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				return fmt.Errorf("%s was created", name)
			}
			return nil
		}
	}
	pid := victimProcess(t)
	addr, accepted := loopbackListener(t)
	host, port, _ := net.SplitHostPort(addr)
	return []writeAttempt{
		{"touch", "touch " + transport.ShellQuote(filepath.Join(dir, "touched")), absent("touched")},
		{"sh -c redirect", "sh -c " + transport.ShellQuote("echo x > "+transport.ShellQuote(filepath.Join(dir, "redirected"))), absent("redirected")},
		{"rm", "rm " + transport.ShellQuote(keep), func() error {
			if b, err := os.ReadFile(keep); err != nil || string(b) != "kept\n" {
				return fmt.Errorf("keep = %q, %v", b, err)
			}
			return nil
		}},
		{"kill", "kill -TERM " + strconv.Itoa(pid), func() error {
			if err := syscall.Kill(pid, 0); err != nil {
				return fmt.Errorf("the victim process is gone: %v", err)
			}
			return nil
		}},
		{"tcp connect", "bash -c " + transport.ShellQuote("exec 3<>/dev/tcp/"+host+"/"+port), func() error {
			time.Sleep(50 * time.Millisecond)
			if n := accepted.Load(); n != 0 {
				return fmt.Errorf("the listener saw %d connections", n)
			}
			return nil
		}},
	}
}

func TestReadSandboxLocalRefusesWrites(t *testing.T) {
	if abi := sandbox.ABI(); abi < sandbox.MinABI {
		t.Fatalf("this kernel offers Landlock ABI %d, the read sandbox needs %d (Linux 6.12+ with Landlock enabled)", abi, sandbox.MinABI)
	}
	inv := inventory.Default()
	tool := NewReadTool(inv, transport.NewRouter(inv, transport.RouterOptions{}))
	rules := declaredWriters(t)
	for _, a := range writeAttempts(t, t.TempDir()) {
		t.Run(a.name, func(t *testing.T) {
			p := gated(t, tool, inv, rules, "localhost", a.cmd)
			if p.Execution.Confine != policy.ConfineRequired || p.Execution.Declared == "" {
				t.Fatalf("execution = %+v, want a required sandbox for a declared command", p.Execution)
			}
			r := tool.Execute(t.Context(), p)
			if r.Envelope.OK {
				t.Fatalf("the write succeeded: %s", r.Envelope.JSON())
			}
			if msg := r.Envelope.Error.Message; !strings.Contains(msg, "the read sandbox (landlock) refused it") {
				t.Errorf("message %q does not explain that the sandbox refused it", msg)
			}
			if r.Sandbox == nil || r.Sandbox.Mechanism != tools.SandboxLandlock || r.Sandbox.Shell != command.DialectBash {
				t.Errorf("sandbox = %+v, want landlock with bash", r.Sandbox)
			}
			if err := a.intact(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestReadSandboxLocalDailyReads: the reads on-call engineers run every
// day still work inside the sandbox.
func TestReadSandboxLocalDailyReads(t *testing.T) {
	inv := inventory.Default()
	router := transport.NewRouter(inv, transport.RouterOptions{})
	tool := NewReadTool(inv, router)
	rules := policy.Rules{ReadSandbox: policy.SandboxRequired}
	want := map[string]string{
		"cat /etc/hostname":          "",
		"ps -e":                      "PID",
		"ss -tan":                    "State",
		"journalctl -n 5 --no-pager": "",
		"df -h /":                    "Filesystem",
		"uptime":                     "load average",
		"ip addr":                    "lo",
		"id -un":                     "",
	}
	for cmd, mark := range want {
		t.Run(cmd, func(t *testing.T) {
			r := tool.Execute(t.Context(), gated(t, tool, inv, rules, "localhost", cmd))
			d, _ := r.Envelope.Data.(CommandData)
			if !r.Envelope.OK || !strings.Contains(d.Output, mark) {
				t.Fatalf("%s: %s", cmd, r.Envelope.JSON())
			}
			if r.Sandbox == nil || r.Sandbox.Mechanism != tools.SandboxLandlock {
				t.Errorf("sandbox = %+v", r.Sandbox)
			}
		})
	}
	// The same text as unconfined for stable reads.
	for _, cmd := range []string{"cat /etc/hostname", "id -un", "df -h /"} {
		r := tool.Execute(t.Context(), gated(t, tool, inv, rules, "localhost", cmd))
		plain, err := exec.Command("/bin/bash", "-c", cmd).Output()
		if d, _ := r.Envelope.Data.(CommandData); err != nil || d.Output != string(plain) {
			t.Errorf("%s: confined %q, unconfined %q (%v)", cmd, d.Output, plain, err)
		}
	}
	// systemctl status talks to systemd over D-Bus, which the sandbox lets
	// through; where systemd is not PID 1 it must fail for that reason,
	// not for the sandbox.
	r := tool.Execute(t.Context(), gated(t, tool, inv, rules, "localhost", "systemctl status --no-pager"))
	out := r.Output
	if _, err := os.Stat("/run/systemd/system"); err == nil {
		if !r.Envelope.OK {
			t.Errorf("systemctl status under systemd: %s", r.Envelope.JSON())
		}
	} else if !strings.Contains(out, "not been booted with systemd") || strings.Contains(r.Envelope.Error.Message, "refused it") {
		t.Errorf("systemctl status without systemd: %s", r.Envelope.JSON())
	}
}

func TestReadSandboxLocalRequiredRefusesWithoutSandbox(t *testing.T) {
	inv := inventory.Default()
	tool := NewReadTool(inv, transport.NewRouter(inv, transport.RouterOptions{NoLocalSandbox: true}))
	marker := filepath.Join(t.TempDir(), "ran")
	cmd := "touch " + transport.ShellQuote(marker)
	// A declared command, and a proven read under read_sandbox: required.
	for _, p := range []tools.Proposal{
		gated(t, tool, inv, declaredWriters(t), "localhost", cmd),
		gated(t, tool, inv, policy.Rules{ReadSandbox: policy.SandboxRequired}, "localhost", "uptime"),
	} {
		r := tool.Execute(t.Context(), p)
		if r.Envelope.OK || r.Envelope.Error.Code != policy.CodePolicyBlocked || !r.Envelope.Error.Blocked ||
			!strings.Contains(r.Envelope.Error.Message, "not run") || !strings.Contains(fmt.Sprint(r.Envelope.Error.Details), "control tool") {
			t.Errorf("%s: %s", p.Command, r.Envelope.JSON())
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the declared command ran without a sandbox")
	}
	// best effort runs it unconfined and says so.
	r := tool.Execute(t.Context(), gated(t, tool, inv, policy.Rules{}, "localhost", "uptime"))
	if !r.Envelope.OK || r.Sandbox == nil || r.Sandbox.Mechanism != tools.SandboxNone || !strings.Contains(r.Sandbox.Detail, "Landlock") {
		t.Errorf("best effort without a sandbox: %s, %+v", r.Envelope.JSON(), r.Sandbox)
	}
}

// TestDialectRunsAsClassified: the same text means different things to
// bash and dash; each target runs the shell its commands are classified in.
func TestDialectRunsAsClassified(t *testing.T) {
	inv, err := inventory.Parse([]byte(`
resources:
  - name: box
    kind: host
    reach: local
  - name: tiny
    kind: host
    reach: local
    shell: sh
`))
	if err != nil {
		t.Fatal(err)
	}
	tool := NewReadTool(inv, transport.NewRouter(inv, transport.RouterOptions{}))
	tests := []struct {
		target  string
		dialect command.Dialect
		want    map[string]string
	}{
		{"box", command.DialectBash, map[string]string{`echo $'a\tb'`: "a\tb\n", "echo {a,b}": "a b\n"}},
		{"tiny", command.DialectPOSIX, map[string]string{`echo $'a\tb'`: "$a\tb\n", "echo {a,b}": "{a,b}\n"}},
	}
	for _, tt := range tests {
		for cmd, want := range tt.want {
			p := gated(t, tool, inv, policy.Rules{}, tt.target, cmd)
			if p.Dialect != tt.dialect || p.Execution.Shell != tt.dialect {
				t.Fatalf("%s: dialect %q, execution shell %q; want %s", tt.target, p.Dialect, p.Execution.Shell, tt.dialect)
			}
			r := tool.Execute(t.Context(), p)
			d, _ := r.Envelope.Data.(CommandData)
			if !r.Envelope.OK || d.Output != want {
				t.Errorf("%s: %s printed %q, want %q (%s)", tt.target, cmd, d.Output, want, r.Envelope.JSON())
			}
			if r.Sandbox == nil || r.Sandbox.Shell != tt.dialect {
				t.Errorf("%s: sandbox %+v does not name shell %s", tt.target, r.Sandbox, tt.dialect)
			}
		}
	}
}

// BenchmarkLocalRead measures one read through the local transport, as the
// read tool runs it, unconfined and in the read sandbox: the difference is
// what the sandbox adds (thread, capabilities, seccomp, Landlock, the
// private temp dir).
func BenchmarkLocalRead(b *testing.B) {
	for _, c := range []struct {
		name    string
		confine policy.Confine
	}{{"Unconfined", policy.ConfineNone}, {"Sandboxed", policy.ConfineRequired}} {
		b.Run(c.name, func(b *testing.B) {
			inv := inventory.Default()
			r := transport.NewRouter(inv, transport.RouterOptions{})
			res, _ := inv.Lookup("localhost")
			spec := transport.RunSpec{Command: "cat /etc/hostname", Execution: policy.Execution{Confine: c.confine, Shell: command.DialectBash}}
			for b.Loop() {
				out, err := r.Run(b.Context(), res, spec, nil)
				if err != nil || out.ExitCode != 0 {
					b.Fatal(out, err)
				}
			}
		})
	}
}

// TestReadSandboxLocalNetworkPorts: a network read runs with TCP connect
// allowed to the ports policy carried from the verdict's destinations and
// to no other; a network read without destinations connects nowhere.
func TestReadSandboxLocalNetworkPorts(t *testing.T) {
	if abi := sandbox.ABI(); abi < sandbox.MinABI {
		t.Fatalf("this kernel offers Landlock ABI %d, the read sandbox needs %d (Linux 6.12+ with Landlock enabled)", abi, sandbox.MinABI)
	}
	inv := inventory.Default()
	router := transport.NewRouter(inv, transport.RouterOptions{})
	res, _ := inv.Lookup("localhost")
	known, knownTaken := loopbackListener(t)
	other, otherTaken := loopbackListener(t)
	port := func(addr string) int { _, p, _ := net.SplitHostPort(addr); n, _ := strconv.Atoi(p); return n }
	devTCP := func(addr string) string {
		return "exec 3<>/dev/tcp/" + strings.Replace(addr, ":", "/", 1) + " && echo connected"
	}
	tests := []struct {
		name  string
		exec  policy.Execution
		addr  string
		want  bool
		shown string
	}{
		{"declared port", policy.Execution{Network: true, Ports: []int{port(known)}}, known, true, fmt.Sprintf("TCP to port %d, no UDP", port(known))},
		{"another port", policy.Execution{Network: true, Ports: []int{port(known)}}, other, false, ""},
		{"no destinations", policy.Execution{Network: true}, known, false, "no TCP, no UDP"},
		{"not a network read", policy.Execution{Ports: []int{port(known)}}, known, false, "no network"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.exec.Confine, tt.exec.Shell = policy.ConfineRequired, command.DialectBash
			out, err := router.Run(t.Context(), res, transport.RunSpec{Command: devTCP(tt.addr), Execution: tt.exec}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(out.Stdout, "connected"); got != tt.want {
				t.Errorf("connected %v, want %v: %+v", got, tt.want, out)
			}
			if tt.shown != "" && !strings.Contains(out.Sandbox.String(), tt.shown) {
				t.Errorf("trace %q does not say %q", out.Sandbox.String(), tt.shown)
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	if n, m := knownTaken.Load(), otherTaken.Load(); n != 1 || m != 0 {
		t.Errorf("the declared port's listener took %d connections (want 1), the other %d (want 0)", n, m)
	}
}

// TestReadSandboxKeepsVigilsRedisOutOfReach: vigil's own Redis (the real
// one on loopback) is out of reach of a network read whose destinations
// are elsewhere, and reachable, as the startup warning says, by one whose
// destination shares its port.
func TestReadSandboxKeepsVigilsRedisOutOfReach(t *testing.T) {
	if abi := sandbox.ABI(); abi < sandbox.MinABI {
		t.Fatalf("this kernel offers Landlock ABI %d, the read sandbox needs %d (Linux 6.12+ with Landlock enabled)", abi, sandbox.MinABI)
	}
	addr := redistest.RequireShared(t)
	host, p, _ := net.SplitHostPort(addr)
	redisPort, _ := strconv.Atoi(p)
	inv := inventory.Default()
	router := transport.NewRouter(inv, transport.RouterOptions{})
	res, _ := inv.Lookup("localhost")
	ping := "redis-cli -h " + host + " -p " + p + " ping"
	for _, tt := range []struct {
		ports []int
		want  string
	}{
		{[]int{9090, 443}, "Permission denied"},
		{[]int{redisPort}, "PONG"},
	} {
		out, err := router.Run(t.Context(), res, transport.RunSpec{Command: ping, Execution: policy.Execution{
			Confine: policy.ConfineRequired, Shell: command.DialectBash, Network: true, Ports: tt.ports,
		}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Stdout + out.Stderr; !strings.Contains(got, tt.want) {
			t.Errorf("ports %v: %q, want %q", tt.ports, got, tt.want)
		}
	}
}
