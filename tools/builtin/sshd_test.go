package builtin

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/vigilops/vigil/internal/testenv/sshdtest"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
)

// These tests reach Debian's OpenSSH sshd on loopback through the inventory,
// the Router and the built-in tools, the way vigil reaches users' machines.
// Commands run through the login user's own shell (bash for root), not the
// /bin/sh of the in-process server in transport_ssh_test.go.

// Stand-ins on the sshd host's PATH for the container runtime and systemd,
// which do not run here. docker passes stdin on only with -i, as the real
// one does.
const (
	fakeDocker = `#!/bin/sh
# docker exec [-i] CONTAINER CMD...: runs CMD on this machine.
[ "$1" = exec ] || { echo "fake docker: only exec" >&2; exit 64; }
shift
if [ "$1" = -i ]; then shift; else exec </dev/null; fi
shift
exec "$@"
`
	// fakeSystemctl logs its arguments and the SSH connection it ran under
	// to the file named by its own path plus ".log".
	fakeSystemctl = `#!/bin/sh
echo "$* via ${SSH_CONNECTION:-no ssh}" >> "$0.log"
`
)

// sshdFixture is a real sshd and the stand-ins on its PATH.
type sshdFixture struct {
	srv *sshdtest.Server
	bin string
}

func startSSHD(t *testing.T) sshdFixture {
	t.Helper()
	bin := t.TempDir()
	for name, script := range map[string]string{"docker": fakeDocker, "systemctl": fakeSystemctl} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	srv := sshdtest.Start(t, sshdtest.Options{Config: []string{
		`SetEnv "PATH=` + bin + `:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"`,
	}})
	return sshdFixture{srv: srv, bin: bin}
}

// inventory declares the server as host "far", as a user's inventory file
// would, with a docker container and a service on it. keyFile and
// knownHosts replace the server's when set.
func (f sshdFixture) inventory(t *testing.T, keyFile, knownHosts string) *inventory.Inventory {
	t.Helper()
	if keyFile == "" {
		keyFile = f.srv.KeyFile
	}
	if knownHosts == "" {
		knownHosts = f.srv.KnownHosts
	}
	yaml := fmt.Sprintf(`resources:
  - name: far
    kind: host
    reach:
      ssh:
        host: %s
        port: %d
        user: %s
        key_file: %s
        known_hosts: %s
  - name: web
    kind: docker_container
    parent: far
  - name: nginx
    kind: service
    parent: far
    uid: nginx.service
`, f.srv.Host, f.srv.Port, strconv.Quote(f.srv.User), strconv.Quote(keyFile), strconv.Quote(knownHosts))
	inv, err := inventory.Parse([]byte(yaml))
	if err != nil {
		t.Fatalf("inventory: %v\n%s", err, yaml)
	}
	return inv
}

func lookup(t *testing.T, inv *inventory.Inventory, name string) inventory.Resource {
	t.Helper()
	r, ok := inv.Lookup(name)
	if !ok {
		t.Fatalf("%s is not in the inventory", name)
	}
	return r
}

func TestSSHD(t *testing.T) {
	f := startSSHD(t)
	inv := f.inventory(t, "", "")
	far := lookup(t, inv, "far")
	router := transport.NewRouter(inv, transport.RouterOptions{})

	t.Run("streams and exit code", func(t *testing.T) {
		res, err := router.Run(t.Context(), far, transport.RunSpec{Command: "echo hello; echo err >&2; exit 3"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Stdout != "hello\n" || res.Stderr != "err\n" || res.ExitCode != 3 {
			t.Errorf("result = %+v, want stdout hello, stderr err, exit 3", res)
		}
	})

	t.Run("runs under sshd", func(t *testing.T) {
		// sshd sets SSH_CONNECTION to "client port server port".
		res, err := router.Run(t.Context(), far, transport.RunSpec{Command: `echo "$SSH_CONNECTION"; id -un`}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(" 127.0.0.1 %d\n%s\n", f.srv.Port, f.srv.User)
		if !strings.HasPrefix(res.Stdout, "127.0.0.1 ") || !strings.HasSuffix(res.Stdout, want) {
			t.Errorf("stdout = %q, want SSH_CONNECTION ending %q and the user", res.Stdout, want)
		}
	})

	t.Run("file_edit writes through stdin", func(t *testing.T) {
		// Content no shell may interpret: it goes on stdin to `cat > path`.
		dir := t.TempDir()
		path, marker := filepath.Join(dir, "app.conf"), filepath.Join(dir, "pwned")
		content := "listen 80;\n" + hostile + "\n$(touch " + marker + ") `touch " + marker + "` \"q\"\n"
		tool := NewFileEditTool(inv, router)
		for _, step := range []struct{ args, want string }{
			{fmt.Sprintf(`{"action":"write","target":"far","path":%q,"content":%q}`, path, content), content},
			{fmt.Sprintf(`{"action":"append","target":"far","path":%q,"content":"tail\n"}`, path), content + "tail\n"},
		} {
			r := tool.Execute(t.Context(), mustPropose(t, tool, step.args))
			if !r.Envelope.OK {
				t.Fatalf("%s: %s", step.args, r.Envelope.JSON())
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != step.want {
				t.Fatalf("file = %q, %v; want %q", got, err, step.want)
			}
		}
		r := tool.Execute(t.Context(), mustPropose(t, tool, fmt.Sprintf(`{"action":"read","target":"far","path":%q}`, path)))
		if d, ok := r.Envelope.Data.(CommandData); !r.Envelope.OK || !ok || d.Output != content+"tail\n" {
			t.Errorf("read back: %s", r.Envelope.JSON())
		}
		if _, err := os.Stat(marker); err == nil {
			t.Error("the content was run by a shell")
		}
	})

	t.Run("file_edit shows and checks the remote file", func(t *testing.T) {
		// The preview reads the file over SSH with the tool's own read; the
		// approved append compares the file with that read first, over SSH
		// too, and writes nothing once it changed.
		path := filepath.Join(t.TempDir(), "app.conf")
		if err := os.WriteFile(path, []byte("a=1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		tool := NewFileEditTool(inv, router)
		args := fmt.Sprintf(`{"action":"append","target":"far","path":%q,"content":"b=2\n"}`, path)
		preview := func() tools.Proposal {
			p := mustPropose(t, tool, args)
			pr := tool.(tools.Previewer).Preview(t.Context(), p, func(ctx context.Context, raw json.RawMessage) tools.PreviewRead {
				return tools.PreviewRead{Result: tool.Execute(ctx, mustPropose(t, tool, string(raw))), At: time.Now()}
			})
			if len(pr.Details) == 0 || !strings.Contains(pr.Details[0].Value, " a=1\n") || !strings.HasSuffix(pr.Details[0].Value, "\n+b=2\n") || pr.Basis == "" {
				t.Fatalf("preview over SSH: %q, basis %q", pr.Details, pr.Basis)
			}
			p.Basis = pr.Basis
			return p
		}
		p := preview()
		if r := tool.Execute(t.Context(), p); !r.Envelope.OK {
			t.Fatalf("unchanged file: %s", r.Envelope.JSON())
		}
		p = preview()
		if err := os.WriteFile(path, []byte("a=1\nb=2\nplanted=1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := tool.Execute(t.Context(), p)
		if r.Envelope.OK || !strings.Contains(r.Envelope.Error.Message, "changed since the approval card showed it") {
			t.Fatalf("changed file: %s", r.Envelope.JSON())
		}
		if got, _ := os.ReadFile(path); string(got) != "a=1\nb=2\nplanted=1\n" {
			t.Fatalf("the changed file was written: %q", got)
		}
		// A file gone since the card: the remote cat's "No such file"
		// is its absence, which is a change too.
		p = preview()
		os.Remove(path)
		if r := tool.Execute(t.Context(), p); r.Envelope.OK || !strings.Contains(r.Envelope.Error.Message, "it exists no more") {
			t.Fatalf("removed file: %s", r.Envelope.JSON())
		}
	})

	t.Run("timeout kills the remote command", func(t *testing.T) {
		dir := t.TempDir()
		pidFiles := []string{filepath.Join(dir, "fg"), filepath.Join(dir, "bg")}
		// Generous enough that login and start-up finish on a loaded machine;
		// the command itself would run for 30 s.
		short := transport.NewRouter(inv, transport.RouterOptions{Limits: transport.Limits{Timeout: 3 * time.Second}})
		start := time.Now()
		res, err := short.Run(t.Context(), far, transport.RunSpec{Command: "echo started; sleep 30 >/dev/null 2>&1 & echo $! > " + transport.ShellQuote(pidFiles[1]) +
			"; echo $$ > " + transport.ShellQuote(pidFiles[0]) + "; exec sleep 30", Execution: unconfinedRun}, nil)
		took := time.Since(start)
		if !errors.Is(err, transport.ErrTimeout) {
			t.Fatalf("err = %v, want transport.ErrTimeout", err)
		}
		if took > 8*time.Second {
			t.Errorf("the timeout took %s", took)
		}
		if res.ExitCode != -1 || res.Stdout != "started\n" {
			t.Errorf("result = %+v, want exit -1 and the output up to the timeout", res)
		}
		// The remote sleep and its background sibling are killed, not left
		// running after the client gave up.
		deadline := time.Now().Add(8 * time.Second)
		for _, f := range pidFiles {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatalf("pid file: %v", err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
			if err != nil {
				t.Fatalf("pid file %s: %v", f, err)
			}
			for alive(pid) {
				if time.Now().After(deadline) {
					t.Fatalf("remote sleep (pid %d, %s) still runs 8 s after the timeout", pid, filepath.Base(f))
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	})

	t.Run("output cap", func(t *testing.T) {
		capped := transport.NewRouter(inv, transport.RouterOptions{Limits: transport.Limits{OutputCap: 1024}})
		res, err := capped.Run(t.Context(), far, transport.RunSpec{Command: `head -c 100000 /dev/zero | tr '\0' b`}, nil)
		if err != nil {
			t.Fatal(err)
		}
		notice := "[output truncated: 97.7 KiB total, showing first 1 KiB]"
		if !res.Truncated || res.StdoutBytes != 100000 || res.ExitCode != 0 ||
			!strings.HasPrefix(res.Stdout, strings.Repeat("b", 1024)) || !strings.HasSuffix(res.Stdout, notice) ||
			len(res.Stdout) > 1024+len(notice)+1 {
			t.Errorf("truncated %v, %d bytes in all, exit %d, %d bytes kept ending %q",
				res.Truncated, res.StdoutBytes, res.ExitCode, len(res.Stdout), transport.Tail(res.Stdout, 80))
		}
	})

	t.Run("nested route through the ssh host", func(t *testing.T) {
		web := lookup(t, inv, "web")
		rt, err := transport.FindRoute(inv, web, "cat > /etc/app.conf", web.Shell, true)
		if err != nil {
			t.Fatal(err)
		}
		wantHops := []policy.ResourceID{"docker_container:far:web", "host:far"}
		if rt.Via.Name != "far" || rt.Command != `docker exec -i web sh -c 'cat > /etc/app.conf'` ||
			fmt.Sprint(rt.Hops) != fmt.Sprint(wantHops) {
			t.Errorf("route = via %s, %q, hops %v", rt.Via.Name, rt.Command, rt.Hops)
		}

		// Over sshd, through the host's login shell and docker exec's sh -c,
		// the hostile string arrives as one argument, and stdin gets through.
		res, err := router.Run(t.Context(), web, transport.RunSpec{Command: "printf '%s\\n' " + transport.ShellQuote(hostile) + "; tr a-z A-Z"}, strings.NewReader("from stdin\n"))
		if err != nil || res.Stdout != hostile+"\nFROM STDIN\n" || res.ExitCode != 0 {
			t.Errorf("nested run = %+v, %v", res, err)
		}
	})

	t.Run("service runs on its host", func(t *testing.T) {
		tool := NewControlTool(inv, router)
		p := mustPropose(t, tool, `{"action":"service","target":"nginx","operation":"restart"}`)
		if p.Command != "systemctl restart nginx.service" {
			t.Fatalf("command = %q", p.Command)
		}
		r := tool.Execute(t.Context(), p)
		if !r.Envelope.OK {
			t.Fatalf("control: %s", r.Envelope.JSON())
		}
		log, err := os.ReadFile(filepath.Join(f.bin, "systemctl.log"))
		want := fmt.Sprintf(" 127.0.0.1 %d\n", f.srv.Port)
		if err != nil || !strings.HasPrefix(string(log), "restart nginx.service via 127.0.0.1 ") || !strings.HasSuffix(string(log), want) {
			t.Errorf("systemctl ran with %q, %v; want restart nginx.service over the ssh connection", log, err)
		}
	})

	t.Run("read tool", func(t *testing.T) {
		tool := NewReadTool(inv, router)
		r := tool.Execute(t.Context(), mustPropose(t, tool, `{"action":"exec","target":"far","command":"uname -a"}`))
		d, ok := r.Envelope.Data.(CommandData)
		if !r.Envelope.OK || !ok || d.ExitCode != 0 || !strings.HasPrefix(d.Output, "Linux ") || d.Target != "far" {
			t.Fatalf("envelope = %s", r.Envelope.JSON())
		}
		if r.Envelope.Meta["resource_id"] != "host:far" {
			t.Errorf("meta = %v", r.Envelope.Meta)
		}
	})
}

// TestSSHDRefuses checks that nothing runs when the server is not the one
// known_hosts records, or does not accept the key.
func TestSSHDRefuses(t *testing.T) {
	f := startSSHD(t)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Another key pair: recorded as the host's key, and offered as a client key.
	otherPub, otherPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hostPub, err := ssh.NewPublicKey(otherPub)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(otherPriv, "")
	if err != nil {
		t.Fatal(err)
	}
	wrongHosts := write("wrong_known_hosts", []byte(knownhosts.Line([]string{knownhosts.Normalize(f.srv.Addr())}, hostPub)+"\n"))
	emptyHosts := write("empty_known_hosts", nil)
	strangerKey := write("stranger", pem.EncodeToMemory(block))

	tests := []struct {
		name, keyFile, knownHosts string
		want                      string
		hostKey                   bool // a host key error, with the recorded keys when known
		known                     bool
	}{
		{"host key differs", "", wrongHosts, "knownhosts: key mismatch", true, true},
		{"host unknown", "", emptyHosts, "knownhosts: key is unknown", true, false},
		{"client key not authorized", strangerKey, "", "unable to authenticate", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := f.inventory(t, tt.keyFile, tt.knownHosts)
			marker := filepath.Join(t.TempDir(), "ran")
			_, err := transport.NewRouter(inv, transport.RouterOptions{}).Run(t.Context(), lookup(t, inv, "far"), transport.RunSpec{Command: "touch " + transport.ShellQuote(marker)}, nil)
			if !errors.Is(err, transport.ErrTransport) || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want transport.ErrTransport saying %q", err, tt.want)
			}
			var keyErr *knownhosts.KeyError
			if errors.As(err, &keyErr) != tt.hostKey || (tt.hostKey && (len(keyErr.Want) > 0) != tt.known) {
				t.Errorf("err = %#v, want a host key error: %v, with recorded keys: %v", err, tt.hostKey, tt.known)
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the command ran: stat %s: %v", marker, err)
			}
		})
	}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// unconfinedRun is how policy runs a write: outside any sandbox.
var unconfinedRun = policy.Execution{Confine: policy.ConfineNone, Why: "a change runs unconfined"}

// hostile is an argument that breaks out of naive quoting.
const hostile = `'; rm -rf / #`
