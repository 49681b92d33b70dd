package transport

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/vigilops/vigil/tools/inventory"
)

// testSSHServer is an SSH server on loopback that runs exec requests with
// /bin/sh on this machine: the real protocol, handshake and host key check,
// without needing sshd installed.
type testSSHServer struct {
	addr    string
	hostKey ssh.Signer
	// path is prepended to PATH for the commands the server runs.
	path string
	wg   sync.WaitGroup
}

func newTestSSHServer(t *testing.T, clientKey ssh.PublicKey, path string, extraHostKeys ...ssh.Signer) *testSSHServer {
	t.Helper()
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hostKey, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
			if string(k.Marshal()) == string(clientKey.Marshal()) {
				return nil, nil
			}
			return nil, errors.New("unknown key")
		},
	}
	cfg.AddHostKey(hostKey)
	for _, k := range extraHostKeys {
		cfg.AddHostKey(k)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &testSSHServer{addr: ln.Addr().String(), hostKey: hostKey, path: path}
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Go(func() { s.serve(c, cfg) })
		}
	})
	return s
}

func (s *testSSHServer) serve(c net.Conn, cfg *ssh.ServerConfig) {
	defer c.Close()
	_, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		s.wg.Go(func() { s.session(ch, creqs) })
	}
}

func (s *testSSHServer) session(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	var cmd *exec.Cmd
	done := make(chan struct{})
	for req := range reqs {
		switch req.Type {
		case "exec":
			var p struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &p); err != nil || cmd != nil {
				_ = req.Reply(false, nil)
				continue
			}
			cmd = exec.Command("/bin/sh", "-c", p.Command)
			if s.path != "" {
				cmd.Env = append(os.Environ(), "PATH="+s.path+":"+os.Getenv("PATH"))
			}
			cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				_ = req.Reply(false, nil)
				return
			}
			_ = req.Reply(true, nil)
			go func() {
				defer close(done)
				_ = cmd.Wait()
				status := make([]byte, 4)
				binary.BigEndian.PutUint32(status, uint32(cmd.ProcessState.ExitCode()))
				_, _ = ch.SendRequest("exit-status", false, status)
				_ = ch.CloseWrite()
				ch.Close()
			}()
		case "signal":
			if cmd != nil && cmd.Process != nil {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
		default:
			if req.WantReply {
				_ = req.Reply(false, nil)
			}
		}
	}
	if cmd != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// sshFixture starts a server, with path prepended to its commands' PATH,
// and writes a client key and a known_hosts file for it that records
// knownKey, or the server's ed25519 host key when knownKey is nil. Extra
// host keys are offered by the server as well.
func sshFixture(t *testing.T, path string, knownKey ssh.Signer, extraHostKeys ...ssh.Signer) (*testSSHServer, inventory.SSHConfig) {
	t.Helper()
	dir := t.TempDir()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	clientPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestSSHServer(t, clientPub, path, extraHostKeys...)
	if knownKey == nil {
		knownKey = srv.hostKey
	}
	host, port, _ := net.SplitHostPort(srv.addr)
	p, _ := strconv.Atoi(port)
	kh := filepath.Join(dir, "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(srv.addr)}, knownKey.PublicKey())
	if err := os.WriteFile(kh, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv, inventory.SSHConfig{Host: host, Port: p, User: "vigil", KeyFile: keyFile, KnownHosts: kh}
}

func TestSSHTransport(t *testing.T) {
	_, cfg := sshFixture(t, "", nil)
	tr := &SSHTransport{Config: cfg}

	res, err := tr.Run(t.Context(), Job{Command: "echo hello; echo oops >&2; exit 4"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "hello\n" || res.Stderr != "oops\n" || res.ExitCode != 4 {
		t.Errorf("result = %+v", res)
	}

	res, err = tr.Run(t.Context(), Job{Command: "tr a-z A-Z"}, strings.NewReader("over ssh\n"))
	if err != nil || res.Stdout != "OVER SSH\n" || res.ExitCode != 0 {
		t.Errorf("stdin: %+v, %v", res, err)
	}

	capped := &SSHTransport{Config: cfg, Limits: Limits{OutputCap: 1024}}
	res, err = capped.Run(t.Context(), Job{Command: "head -c 100000 /dev/zero | tr '\\0' b"}, nil)
	if err != nil || !res.Truncated || !strings.HasSuffix(res.Stdout, "[output truncated: 97.7 KiB total, showing first 1 KiB]") {
		t.Errorf("cap: truncated %v, err %v, tail %q", res.Truncated, err, Tail(res.Stdout, 80))
	}
}

func TestSSHTransportTimeout(t *testing.T) {
	_, cfg := sshFixture(t, "", nil)
	tr := &SSHTransport{Config: cfg, Limits: Limits{Timeout: 300 * time.Millisecond}}
	start := time.Now()
	res, err := tr.Run(t.Context(), Job{Command: "echo started; sleep 30"}, nil)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("timeout took %s", d)
	}
	if res.ExitCode != -1 {
		t.Errorf("exit code = %d, want -1", res.ExitCode)
	}
}

func TestSSHTransportVerifiesHostKey(t *testing.T) {
	_, cfg := sshFixture(t, "", nil)

	// known_hosts holding another key for the same address.
	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	other, _ := ssh.NewSignerFromKey(otherPriv)
	wrong := filepath.Join(t.TempDir(), "known_hosts")
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	_ = os.WriteFile(wrong, []byte(knownhosts.Line([]string{knownhosts.Normalize(addr)}, other.PublicKey())+"\n"), 0o600)
	bad := cfg
	bad.KnownHosts = wrong
	_, err := (&SSHTransport{Config: bad}).Run(t.Context(), Job{Command: "echo should-not-run"}, nil)
	var keyErr *knownhosts.KeyError
	if !errors.Is(err, ErrTransport) || !errors.As(err, &keyErr) || len(keyErr.Want) == 0 {
		t.Errorf("mismatched host key: err = %v, want a KeyError", err)
	}

	// known_hosts that does not know the host at all.
	empty := filepath.Join(t.TempDir(), "known_hosts")
	_ = os.WriteFile(empty, nil, 0o600)
	bad.KnownHosts = empty
	_, err = (&SSHTransport{Config: bad}).Run(t.Context(), Job{Command: "true"}, nil)
	if !errors.As(err, &keyErr) || len(keyErr.Want) != 0 {
		t.Errorf("unknown host: err = %v, want a KeyError without known keys", err)
	}
}

func TestRouterOverSSHWithNesting(t *testing.T) {
	// A stand-in pct on the "remote" side (this machine, through the test
	// server) runs what it is given: the route goes over SSH, then through
	// pct exec, and the hostile string survives both layers of quoting.
	dir := t.TempDir()
	pct := "#!/bin/sh\nshift 2\n[ \"$1\" = -- ] && shift\nexec \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "pct"), []byte(pct), 0o755); err != nil {
		t.Fatal(err)
	}
	_, cfg := sshFixture(t, dir, nil)
	inv, err := inventory.New([]inventory.Resource{
		{ID: "node:far", Name: "far", Kind: inventory.KindNode, Node: "far", UID: "far", Reach: inventory.Reach{SSH: &cfg}},
		{ID: "lxc:far:7", Name: "ct7", Kind: inventory.KindLXC, Node: "far", UID: "7", Parent: "node:far"},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := inv.Lookup("ct7")
	out, err := NewRouter(inv, RouterOptions{}).Run(t.Context(), res, RunSpec{Command: "printf '%s\\n' " + ShellQuote(hostile)}, nil)
	if err != nil || out.Stdout != hostile+"\n" {
		t.Errorf("nested over ssh = %+v, %v", out, err)
	}
}

func TestSSHTransportAsksForTheRecordedKeyType(t *testing.T) {
	// The server offers ed25519 and ECDSA host keys; known_hosts records only
	// the ed25519 one. Go's client prefers ECDSA, so unless it asks for the
	// recorded type, verification fails on a key that is not wrong, just
	// not recorded.
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecSigner, err := ssh.NewSignerFromKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	_, cfg := sshFixture(t, "", nil, ecSigner)
	res, err := (&SSHTransport{Config: cfg}).Run(t.Context(), Job{Command: "echo verified"}, nil)
	if err != nil || res.Stdout != "verified\n" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
}
