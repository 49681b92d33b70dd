package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/policy/command"
)

var gT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// readySession has discovered web1 and read from it, so a write to web1
// passes every gate but the role gate and the level.
func readySession() *SessionState {
	s := NewSessionState()
	s.Context.AddExplicit(Resource{ID: "node:web1", Kind: "node", Name: "web1", Target: "web1"}, gT0)
	s.FSM.OnToolSuccess(KindResolve, "discover", "web1")
	return s
}

var (
	restartNginx = Action{Tool: "control", Name: "service", Kind: KindWrite, Target: "web1", Command: "systemctl restart 'nginx'"}
	readUptime   = Action{Tool: "read", Name: "exec", Kind: KindRead, Target: "web1", Command: "uptime"}
	opAlice      = Requester{User: "alice", Operator: true}
	viewerCarol  = Requester{User: "carol", Operators: "alice and bob"}
)

// The role gate: a requester without the operator role may read in every
// level, and no write of theirs runs or waits for approval in any level.
func TestRoleGateEveryLevel(t *testing.T) {
	g := NewGate(Rules{})
	for _, level := range []ControlLevel{LevelReadOnly, LevelControlled, LevelAutonomous, "bogus"} {
		if d := g.Authorize(readySession(), readUptime, level, viewerCarol, gT0); !d.Allow {
			t.Errorf("%s: a viewer's read was refused: %+v", level, d.Block)
		}
		d := g.Authorize(readySession(), restartNginx, level, viewerCarol, gT0)
		if d.Allow || d.NeedsApproval || d.Block == nil {
			t.Fatalf("%s: a viewer's write got %+v, want a refusal", level, d)
		}
		b := d.Block
		if b.Code != CodeActionNotAllowed || b.Details[DetailRoleRequired] != "operator" ||
			!strings.Contains(b.Message, "operator") || !strings.Contains(b.Message, "carol") ||
			!strings.Contains(b.Message, "alice and bob") || b.RecoveryHint == "" {
			t.Errorf("%s: refusal %+v does not name the role, the requester and who holds it", level, b)
		}
	}
	// Unknown tools and plugin tools are writes; so is the zero Requester.
	plugin := Action{Tool: "tickets_close", Kind: KindWrite}
	if d := g.Authorize(readySession(), plugin, LevelAutonomous, Requester{}, gT0); d.Block == nil || d.Block.Details[DetailRoleRequired] == nil {
		t.Errorf("a plugin write by an unknown requester: %+v", d)
	}
	// The role gate comes before the workflow gates: a viewer is not sent
	// to discover things first only to be refused afterwards.
	if d := g.Authorize(NewSessionState(), restartNginx, LevelControlled, viewerCarol, gT0); d.Block == nil || d.Block.Details[DetailRoleRequired] == nil {
		t.Errorf("a viewer's write in a fresh session: %+v, want the role refusal", d.Block)
	}
}

// Operators get what the level gives; a run no person started never
// changes anything without an approver.
func TestGateLevelsForOperatorsAndSystemRuns(t *testing.T) {
	g := NewGate(Rules{})
	alert := SystemRequester("alertmanager")
	tests := []struct {
		level              ControlLevel
		who                Requester
		allow, needsApprov bool
	}{
		{LevelReadOnly, opAlice, false, false},
		{LevelControlled, opAlice, false, true},
		{LevelAutonomous, opAlice, true, false},
		{LevelReadOnly, alert, false, false},
		{LevelControlled, alert, false, true},
		{LevelAutonomous, alert, false, true},
	}
	for _, tt := range tests {
		d := g.Authorize(readySession(), restartNginx, tt.level, tt.who, gT0)
		if d.Allow != tt.allow || d.NeedsApproval != tt.needsApprov || (d.Block == nil) != (tt.allow || tt.needsApprov) {
			t.Errorf("%s by %+v: %+v, want allow=%v approval=%v", tt.level, tt.who, d, tt.allow, tt.needsApprov)
		}
	}
}

// The decision carries the risk and reasons the approval card shows: a
// file write is judged by its path, a command by the classifier, and a
// system path makes either high risk.
func TestWriteRiskOnTheDecision(t *testing.T) {
	g := NewGate(Rules{})
	tests := []struct {
		name    string
		a       Action
		risk    command.Risk
		reasons []string // substrings of some reason
		not     string   // must appear in no reason
	}{
		{"file_edit of /etc/passwd",
			Action{Tool: "file_edit", Name: "write", Kind: KindWrite, Target: "web1", Path: "/etc/passwd", Command: "write 12 bytes to /etc/passwd"},
			command.RiskHigh, []string{"/etc/passwd", "user accounts", "system path"}, "unknown command"},
		{"file_edit append to a unit file",
			Action{Tool: "file_edit", Name: "append", Kind: KindWrite, Target: "web1", Path: "/etc/systemd/system/app.service", Command: "append 3 bytes to /etc/systemd/system/app.service"},
			command.RiskHigh, []string{"systemd"}, "unknown command"},
		{"file_edit in a home directory's ssh keys",
			Action{Tool: "file_edit", Name: "write", Kind: KindWrite, Target: "web1", Path: "/home/alice/.ssh/authorized_keys"},
			command.RiskHigh, []string{"SSH keys"}, ""},
		{"file_edit of an application file",
			Action{Tool: "file_edit", Name: "write", Kind: KindWrite, Target: "web1", Path: "/srv/app/config.yml", Command: "write 5 bytes to /srv/app/config.yml"},
			command.RiskMedium, []string{"writes /srv/app/config.yml"}, "unknown command"},
		{"command appending to /etc/hosts",
			Action{Tool: "control", Name: "command", Kind: KindWrite, Target: "web1", Command: "echo '10.0.0.9 db' >> /etc/hosts"},
			command.RiskHigh, []string{"/etc/hosts", "system path"}, ""},
		{"command editing sshd_config",
			Action{Tool: "control", Name: "command", Kind: KindWrite, Target: "web1", Command: "sed -i 's/^PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config"},
			command.RiskHigh, []string{"SSH configuration"}, ""},
		{"command writing sudoers.d",
			Action{Tool: "control", Name: "command", Kind: KindWrite, Target: "web1", Command: "tee /etc/sudoers.d/app"},
			command.RiskHigh, []string{"sudo rules"}, ""},
		{"dd onto a disk",
			Action{Tool: "control", Name: "command", Kind: KindWrite, Target: "web1", Command: "dd if=/tmp/img of=/dev/sda bs=4M"},
			command.RiskHigh, []string{"/dev/sda", "devices"}, ""},
		{"a path smuggled through ..",
			Action{Tool: "control", Name: "command", Kind: KindWrite, Target: "web1", Command: "cp x /tmp/../usr/local/bin/tool"},
			command.RiskHigh, []string{"installed software"}, ""},
		{"a restart names no path",
			restartNginx, "", nil, "system path"},
		{"output thrown away in /dev/null is no system write",
			Action{Tool: "control", Name: "command", Kind: KindWrite, Target: "web1", Command: "rm /tmp/app.lock 2>/dev/null"},
			"", nil, "system path"},
		{"a plugin write is assessed too",
			Action{Tool: "tickets_close", Kind: KindWrite},
			command.RiskMedium, []string{"tickets_close"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := g.Authorize(readySession(), tt.a, LevelControlled, opAlice, gT0)
			if !d.NeedsApproval {
				t.Fatalf("decision %+v, want an approval", d)
			}
			want := tt.risk
			if want == "" && d.Verdict != nil {
				want = d.Verdict.Risk // the classifier's own risk
			}
			if d.Risk != want || d.Risk == "" {
				t.Errorf("risk %q, want %q (reasons %q)", d.Risk, want, d.Reasons)
			}
			all := strings.Join(d.Reasons, "; ")
			for _, r := range tt.reasons {
				if !strings.Contains(all, r) {
					t.Errorf("reasons %q lack %q", d.Reasons, r)
				}
			}
			if tt.not != "" && strings.Contains(all, tt.not) {
				t.Errorf("reasons %q hold %q", d.Reasons, tt.not)
			}
		})
	}
}

func TestSystemPath(t *testing.T) {
	tests := []struct {
		path string
		what string // "" means not a system path
	}{
		{"/etc/passwd", "user accounts"},
		{"/etc/shadow", "password hashes"},
		{"/etc/sudoers", "sudo rules"},
		{"/etc/sudoers.d/90-app", "sudo rules"},
		{"/etc/ssh/sshd_config", "SSH configuration"},
		{"/etc/nginx/nginx.conf", "system configuration"},
		{"/etc", "system configuration"},
		{"/boot/grub/grub.cfg", "boot loader and kernels"},
		{"/usr/local/bin/tool", "installed software"},
		{"/usr/lib/systemd/system/app.service", "systemd units"},
		{"/lib/systemd/system/ssh.service", "systemd units"},
		{"/var/lib/postgresql/16/main/pg_hba.conf", "application and package state"},
		{"/var/spool/cron/crontabs/root", "scheduled jobs"},
		{"/root/.bashrc", "root's home (keys, shell start-up files)"},
		{"/home/alice/.ssh/authorized_keys", "SSH keys"},
		{"~/.ssh/id_ed25519", "SSH keys"},
		{"/home/alice/.bashrc", "a shell start-up file"},
		{"/home/alice/.config/systemd/user/sync.service", "systemd units"},
		{"/opt/app/app.service", "a systemd unit"},
		{"/proc/sys/vm/drop_caches", "kernel settings"},
		{"/dev/sda", "devices"},
		{"/tmp/../etc/passwd", "user accounts"},
		{"/etcetera/file", ""},
		{"/usrdata/x", ""},
		{"/dev/null", ""},
		{"/dev/stderr", ""},
		{"/dev/shm/cache", ""},
		{"/tmp/app.lock", ""},
		{"/srv/www/index.html", ""},
		{"/var/log/nginx/access.log", ""},
		{"relative/etc/passwd", ""},
		{"", ""},
	}
	for _, tt := range tests {
		what, ok := SystemPath(tt.path)
		if ok != (tt.what != "") || what != tt.what {
			t.Errorf("SystemPath(%q) = %q, %v; want %q", tt.path, what, ok, tt.what)
		}
	}
}
