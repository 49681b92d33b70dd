// Package sshdtest starts Debian's OpenSSH sshd on loopback for tests, as
// the user running them (root or not), with a fresh host key, a client key it
// accepts and a known_hosts file that records its host key. Tests that use it
// reach a real sshd, the way users' machines are reached.
package sshdtest

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Binary is the sshd that Start runs; it must be called by an absolute path.
const Binary = "/usr/sbin/sshd"

// privsepDir is where sshd running as root chroots its unprivileged child.
const privsepDir = "/run/sshd"

// Bounds of starting and stopping the server.
const (
	readyTimeout = 5 * time.Second
	stopTimeout  = 5 * time.Second
	startTries   = 3
)

// Server is a running sshd. The fields are what a client needs.
type Server struct {
	Host string // 127.0.0.1
	Port int
	// User is the account the server lets in: the current user.
	User string
	// Dir holds the server's files; tests may put their own files there.
	Dir string
	// KeyFile is the client's private key (ed25519, OpenSSH format,
	// unencrypted), authorized by the server.
	KeyFile string
	// KnownHosts records HostKey for [Host]:Port.
	KnownHosts string
	HostKey    ssh.PublicKey
	// UserKeys holds the private key of each account of Options.Users
	// (and of User), each authorized for that account only.
	UserKeys map[string]string
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Options adjust the server. The zero value is a plain server.
type Options struct {
	// Config lines are appended to sshd_config, e.g. `SetEnv PATH=/x:/usr/bin:/bin`.
	Config []string
	// Users are further accounts the server lets in, each with its own
	// key (Server.UserKeys), so a test can see which one a command ran
	// as. Accounts that do not exist are created (useradd, removed when
	// the test ends), which needs root, as does an sshd that logs anyone
	// in as another user.
	Users []string
}

// Start runs sshd in the foreground on a free loopback port and stops it when
// the test ends. Without sshd installed, the test fails saying how to get it.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		t.Fatalf("sshdtest: %s: %v; install openssh-server (apt-get install openssh-server) or run .ci/run", Binary, err)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatalf("sshdtest: current user: %v", err)
	}
	if os.Geteuid() == 0 {
		// Only root's sshd needs it; the package's service would create it.
		if err := os.MkdirAll(privsepDir, 0o755); err != nil {
			t.Fatalf("sshdtest: sshd running as root needs the privilege separation directory %s: %v", privsepDir, err)
		}
	}

	dir := t.TempDir()
	s := &Server{Host: "127.0.0.1", User: u.Username, Dir: dir,
		KeyFile: filepath.Join(dir, "id_ed25519"), KnownHosts: filepath.Join(dir, "known_hosts")}
	hostKey := filepath.Join(dir, "ssh_host_ed25519_key")
	if s.HostKey, err = writeKey(hostKey); err != nil {
		t.Fatalf("sshdtest: host key: %v", err)
	}
	clientKey, err := writeKey(s.KeyFile)
	if err != nil {
		t.Fatalf("sshdtest: client key: %v", err)
	}
	authorized := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(authorized, ssh.MarshalAuthorizedKey(clientKey), 0o600); err != nil {
		t.Fatalf("sshdtest: %v", err)
	}
	if len(opts.Users) > 0 {
		authorized = s.addUsers(t, opts.Users, clientKey)
	}

	// Another process may take the free port before sshd binds it; try again
	// with another.
	var lastErr error
	for range startTries {
		port, err := freePort()
		if err != nil {
			t.Fatalf("sshdtest: %v", err)
		}
		s.Port = port
		conf := filepath.Join(dir, "sshd_config")
		if err := os.WriteFile(conf, []byte(config(s, hostKey, authorized, opts.Config)), 0o600); err != nil {
			t.Fatalf("sshdtest: %v", err)
		}
		lastErr = s.run(t, conf)
		if lastErr == nil {
			line := knownhosts.Line([]string{knownhosts.Normalize(s.Addr())}, s.HostKey)
			if err := os.WriteFile(s.KnownHosts, []byte(line+"\n"), 0o600); err != nil {
				t.Fatalf("sshdtest: %v", err)
			}
			return s
		}
		if !errors.Is(lastErr, errPortTaken) {
			break
		}
	}
	t.Fatalf("sshdtest: %v", lastErr)
	return nil
}

var errPortTaken = errors.New("port already in use")

// run starts sshd and waits until it greets a client on its port. When it
// returns nil, the server stops at the test's cleanup.
func (s *Server) run(t testing.TB, conf string) error {
	var stderr lockedBuffer
	cmd := exec.Command(Binary, "-D", "-e", "-f", conf)
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	// Its own process group, so cleanup reaches the per-connection
	// processes too; and gone with the test binary if that dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", Binary, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(stopTimeout):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}

	deadline := time.Now().Add(readyTimeout)
	for {
		if banner(s.Addr()) {
			t.Cleanup(func() {
				stop()
				if t.Failed() && stderr.Len() > 0 {
					t.Logf("sshd's log:\n%s", stderr.String())
				}
			})
			return nil
		}
		select {
		case <-exited:
			log := strings.TrimSpace(stderr.String())
			if strings.Contains(log, "Address already in use") {
				return fmt.Errorf("%w: %s", errPortTaken, log)
			}
			return fmt.Errorf("sshd -f %s exited before serving: %s", conf, log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return fmt.Errorf("sshd did not answer on %s within %s; its log: %s", s.Addr(), readyTimeout, stderr.String())
		}
	}
}

// config is the server's sshd_config: key-only logins for the current user,
// no PAM and no ownership checks, so that it runs unprivileged as well.
func config(s *Server, hostKey, authorized string, extra []string) string {
	lines := []string{
		"ListenAddress " + s.Host,
		"Port " + strconv.Itoa(s.Port),
		"HostKey " + hostKey,
		"PidFile " + filepath.Join(s.Dir, "sshd.pid"),
		"AuthorizedKeysFile " + authorized,
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"PermitRootLogin prohibit-password",
		"UsePAM no",
		"StrictModes no",
		"PrintMotd no",
		"LogLevel ERROR",
	}
	return strings.Join(append(lines, extra...), "\n") + "\n"
}

// addUsers gives each account its own key, authorized for it alone, in
// authorized_keys.<user> files (the current user's holds the client key),
// creating accounts that do not exist; it returns the AuthorizedKeysFile
// pattern.
func (s *Server) addUsers(t testing.TB, users []string, clientKey ssh.PublicKey) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("sshdtest: logins as other accounts (%s) need the tests to run as root, as CI does (.ci/run)", strings.Join(users, ", "))
	}
	s.UserKeys = map[string]string{s.User: s.KeyFile}
	if err := os.WriteFile(filepath.Join(s.Dir, "authorized_keys."+s.User), ssh.MarshalAuthorizedKey(clientKey), 0o644); err != nil {
		t.Fatalf("sshdtest: %v", err)
	}
	for _, u := range users {
		if _, err := user.Lookup(u); err != nil {
			// "*": no password, but not locked (sshd without PAM refuses
			// locked accounts).
			if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/bin/sh", "--password", "*", u).CombinedOutput(); err != nil {
				t.Fatalf("sshdtest: useradd %s: %v: %s", u, err, out)
			}
			t.Cleanup(func() { _ = exec.Command("userdel", u).Run() })
		}
		key := filepath.Join(s.Dir, "id_ed25519."+u)
		pub, err := writeKey(key)
		if err != nil {
			t.Fatalf("sshdtest: key of %s: %v", u, err)
		}
		if err := os.WriteFile(filepath.Join(s.Dir, "authorized_keys."+u), ssh.MarshalAuthorizedKey(pub), 0o644); err != nil {
			t.Fatalf("sshdtest: %v", err)
		}
		s.UserKeys[u] = key
	}
	// The other accounts must reach the files through the test's
	// directory.
	if err := os.Chmod(filepath.Dir(s.Dir), 0o755); err != nil {
		t.Fatalf("sshdtest: %v", err)
	}
	if err := os.Chmod(s.Dir, 0o755); err != nil {
		t.Fatalf("sshdtest: %v", err)
	}
	return filepath.Join(s.Dir, "authorized_keys.%u")
}

// banner reports whether an SSH server greets on addr. It greets back before
// hanging up, so the server does not log a failed key exchange.
func banner(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "SSH-2.0-") {
		return false
	}
	_, _ = c.Write([]byte("SSH-2.0-sshdtest\r\n"))
	return true
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// writeKey writes a new ed25519 private key to path and returns its public key.
func writeKey(path string) (ssh.PublicKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	return ssh.NewPublicKey(pub)
}

// lockedBuffer collects sshd's output while tests read it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Len()
}
