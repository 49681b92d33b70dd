package transport

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/inventory"
)

// SSHTransport runs commands on one machine over SSH, verifying the host key
// against a known_hosts file; there is no way to skip the check. It dials a
// new connection per command: simple, and nothing stays open between calls.
type SSHTransport struct {
	Limits
	Config inventory.SSHConfig
	// DialTimeout bounds connecting and the handshake; 0 means 10 s.
	DialTimeout time.Duration
	// Bwrap is the path of bubblewrap on the remote machine, found by
	// ProbeBwrap; a confined job needs it.
	Bwrap string
	// actedAs names the person's login actAs chose; "" for the
	// inventory's.
	actedAs string
}

// actAs makes a host that acts as the person (Config.Identity per_person)
// log in as a's mapped SSH user, with its key when the mapping gives one;
// other hosts keep the inventory's login. The login must be one the host
// accepts (Config.AllowedUsers). Without a (allowing) login nothing runs:
// the error matches ErrIdentity and names why.
func (t *SSHTransport) actAs(host string, a *policy.Actor) error {
	if t.Config.Identity != inventory.SSHIdentityPerPerson {
		return nil
	}
	if a == nil {
		return fmt.Errorf("%w: %s logs in as the person who asked (reach.ssh.identity: per_person) and vigil has no identity mapping (identities)", ErrIdentity, host)
	}
	if err := a.SSHRefusal(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrIdentity, host, err)
	}
	if len(t.Config.AllowedUsers) > 0 && !slices.Contains(t.Config.AllowedUsers, a.SSH.User) {
		return fmt.Errorf("%w: %s does not accept login %s for %s (reach.ssh.allowed_users: %s)",
			ErrIdentity, host, a.SSH.User, a.Chat, strings.Join(t.Config.AllowedUsers, ", "))
	}
	t.Config.User = a.SSH.User
	if a.SSH.KeyFile != "" {
		t.Config.KeyFile = a.SSH.KeyFile
	}
	t.actedAs = "ssh user " + a.SSH.User + " on " + host
	return nil
}

// Run runs the job with bash -c or sh -c on the remote machine (confined
// jobs under bwrap) and waits, at most the timeout. The remote side bounds
// it too (see remoteCommand); at the timeout the command is also sent
// SIGKILL (when the server accepts signals) and the connection is closed.
func (t *SSHTransport) Run(ctx context.Context, job Job, stdin io.Reader) (ExecResult, error) {
	if job.Confined && t.Bwrap == "" {
		return ExecResult{ExitCode: -1}, fmt.Errorf("%w: no bwrap found on %s", ErrNoSandbox, t.addr())
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout())
	defer cancel()
	start := time.Now()

	client, err := t.dial(ctx)
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return ExecResult{ExitCode: -1, Duration: time.Since(start)}, fmt.Errorf("%w while connecting to %s: %w", ErrTimeout, t.addr(), err)
		}
		return ExecResult{ExitCode: -1, Duration: time.Since(start)}, fmt.Errorf("%w: ssh %s: %w", ErrTransport, t.addr(), err)
	}
	defer client.Close()

	sess, err := client.NewSession()
	if err != nil {
		return ExecResult{ExitCode: -1, Duration: time.Since(start)}, fmt.Errorf("%w: ssh %s: open session: %w", ErrTransport, t.addr(), err)
	}
	defer sess.Close()
	stdout, stderr := newCapBuffer(t.outputCap()), newCapBuffer(t.stderrCap())
	sess.Stdin, sess.Stdout, sess.Stderr = stdin, stdout, stderr

	done := make(chan error, 1)
	wrap := ""
	applied := unconfined(job.shell(), "")
	if job.Confined {
		wrap = bwrapCommand(t.Bwrap, job.Network)
		applied = tools.Sandbox{Mechanism: tools.SandboxBwrap, Network: job.Network, Shell: job.shell()}
	}
	env := ""
	if !job.Write {
		env = readOnlyEnvArgs()
	}
	if err := sess.Start(remoteCommand(job.Command, job.shell(), env, wrap, t.timeout())); err != nil {
		return ExecResult{ExitCode: -1, Duration: time.Since(start)}, fmt.Errorf("%w: ssh %s: start command: %w", ErrTransport, t.addr(), err)
	}
	go func() { done <- sess.Wait() }()

	var waitErr error
	select {
	case waitErr = <-done:
	case <-ctx.Done():
		_ = sess.Signal(ssh.SIGKILL)
		_ = client.Close()
		waitErr = <-done
	}
	res := ExecResult{
		Stdout:      stdout.text(),
		Stderr:      stderr.text(),
		Truncated:   stdout.truncated(),
		StdoutBytes: stdout.total,
		Duration:    time.Since(start),
		Sandbox:     applied,
	}
	var exitErr *ssh.ExitError
	switch {
	case waitErr == nil: // including a finish just as the deadline passed
		res.ExitCode = 0
	case errors.As(waitErr, &exitErr) && ctx.Err() == nil:
		res.ExitCode = exitErr.ExitStatus()
		if exitErr.Signal() != "" {
			res.ExitCode = -1
		}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.ExitCode = -1
		return res, fmt.Errorf("%w after %s", ErrTimeout, res.Duration.Round(time.Millisecond))
	case ctx.Err() != nil:
		res.ExitCode = -1
		return res, fmt.Errorf("ssh command: %w", ctx.Err())
	default:
		res.ExitCode = -1
		return res, fmt.Errorf("%w: ssh %s: %w", ErrTransport, t.addr(), waitErr)
	}
	return res, nil
}

// remoteCommand is what the server runs for cmd: cmd under the given
// shell, with env (NAME=value words for env(1), or nothing) set, inside
// wrap (bwrap and its options, or nothing), killed with its
// whole process group by timeout(1) once d has passed. Closing the
// connection does not stop a command that writes nothing (`sleep`, `tail -f`
// on a quiet file), and OpenSSH refuses the signal request for root logins
// ("session signalling requires privilege separation"), so without the
// remote bound a timed-out command would keep running there. exec keeps
// timeout in the session's process group, which a signal request that the
// server does accept kills at once; bwrap's sandbox dies with bwrap
// (--die-with-parent). The bound is d rounded up to whole seconds plus one,
// so the client's own deadline passes first and reports the timeout.
//
// The shell must run the command as classified and nothing else: env drops
// BASH_ENV and ENV, and bash gets --norc, without which it reads ~/.bashrc
// when started by sshd (functions defined there could shadow commands).
func remoteCommand(cmd string, shell command.Dialect, env, wrap string, d time.Duration) string {
	secs := int64((d+time.Second-1)/time.Second) + 1
	out := "exec timeout -s KILL " + strconv.FormatInt(secs, 10) + " env -u BASH_ENV -u ENV " + env
	if wrap != "" {
		out += wrap + " "
	}
	return out + shellInvocation(shell, cmd)
}

// shellInvocation is the command line that runs cmd with shell and nothing
// else: `bash --norc -c CMD` or `sh -c CMD`, CMD quoted as one word.
func shellInvocation(shell command.Dialect, cmd string) string {
	if shell == command.DialectBash {
		return "bash --norc -c " + ShellQuote(cmd)
	}
	return string(shell) + " -c " + ShellQuote(cmd)
}

// bwrapCommand is bubblewrap with the options of a confined read: the whole
// filesystem read-only, a fresh /dev whose /dev/shm is the private temp dir
// (TMPDIR), no capabilities, its own user, PID and IPC namespaces (so it can
// neither signal nor reach through /proc into processes outside), its own
// network namespace unless the read talks over the network, its own session
// (no terminal), and gone with its parent. /proc and /tmp are the host's,
// read-only, so `ps` sees every process and a read of /tmp sees the real
// files: the user namespace keeps other processes' /proc/PID/root, cwd and
// fd links out of reach.
func bwrapCommand(path string, network bool) string {
	return ShellQuote(path) + " " + bwrapOptions(network)
}

func bwrapOptions(network bool) string {
	opts := "--unshare-user --unshare-pid --unshare-ipc"
	if !network {
		opts += " --unshare-net"
	}
	return opts + " --ro-bind / / --dev /dev --ro-bind /proc /proc --tmpfs /dev/shm --setenv TMPDIR /dev/shm" +
		" --die-with-parent --new-session --cap-drop ALL --"
}

// bwrapProbeTimeout bounds finding and trying bwrap on a target.
const bwrapProbeTimeout = 10 * time.Second

// bwrapProbe finds bwrap on the SSH user's PATH and tries it with the
// options reads use; it prints bwrap's path when the sandbox works.
var bwrapProbe = `p=$(command -v bwrap) || exit 127; "$p" ` + bwrapOptions(false) + ` true && printf '%s\n' "$p"`

// ProbeBwrap reports whether bubblewrap works on the machine: its path, or
// "" and why not. An error means the machine could not be asked (the
// answer is unknown, not "no").
func (t *SSHTransport) ProbeBwrap(ctx context.Context) (path, why string, err error) {
	probe := *t
	probe.Bwrap = ""
	probe.Limits = Limits{Timeout: bwrapProbeTimeout, OutputCap: 4096}
	res, err := probe.Run(ctx, Job{Command: bwrapProbe, Shell: command.DialectPOSIX}, nil)
	if err != nil {
		return "", "", err
	}
	out := strings.TrimSpace(res.Stdout)
	switch {
	case res.ExitCode == 0 && strings.HasPrefix(out, "/") && !strings.ContainsAny(out, "\n'"):
		return out, "", nil
	case res.ExitCode == 127 && out == "":
		return "", "bwrap is not installed (not on the login PATH)", nil
	default:
		msg := strings.TrimSpace(Tail(res.Stderr, 200))
		if msg == "" {
			msg = fmt.Sprintf("exit status %d", res.ExitCode)
		}
		return "", "bwrap cannot set up its sandbox here: " + msg, nil
	}
}

func (t *SSHTransport) addr() string {
	port := t.Config.Port
	if port == 0 {
		port = 22
	}
	return net.JoinHostPort(t.Config.Host, strconv.Itoa(port))
}

func (t *SSHTransport) dial(ctx context.Context) (*ssh.Client, error) {
	cfg, err := t.clientConfig()
	if err != nil {
		return nil, err
	}
	return t.handshake(ctx, cfg)
}

func (t *SSHTransport) handshake(ctx context.Context, cfg *ssh.ClientConfig) (*ssh.Client, error) {
	dialTimeout := t.DialTimeout
	if dialTimeout <= 0 {
		dialTimeout = 10 * time.Second
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", t.addr())
	if err != nil {
		return nil, err
	}
	if dl, ok := dctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	c, chans, reqs, err := ssh.NewClientConn(conn, t.addr(), cfg)
	if err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return ssh.NewClient(c, chans, reqs), nil
}

func (t *SSHTransport) clientConfig() (*ssh.ClientConfig, error) {
	c := t.Config
	if c.KeyFile == "" {
		return nil, errors.New("reach.ssh.key_file is not set")
	}
	keyPEM, err := os.ReadFile(expandHome(c.KeyFile))
	if err != nil {
		return nil, fmt.Errorf("read key file: %w", err)
	}
	signer, err := ssh.ParsePrivateKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("parse key file %s: %w", c.KeyFile, err)
	}
	kh := c.KnownHosts
	if kh == "" {
		kh = "~/.ssh/known_hosts"
	}
	hostKeys, err := knownhosts.New(expandHome(kh))
	if err != nil {
		return nil, fmt.Errorf("read known_hosts: %w", err)
	}
	name := c.User
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	return &ssh.ClientConfig{
		User:            name,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: hostKeys,
		// Ask for a key type known_hosts records, or a server that offers
		// another type first would fail verification.
		HostKeyAlgorithms: knownAlgorithms(hostKeys, t.addr()),
	}, nil
}

// knownAlgorithms asks the known_hosts callback which key types it holds for
// addr, by presenting a throwaway key it cannot know, so the handshake asks
// the server for a key that can be verified. Nil when the host is unknown:
// the handshake then fails with the callback's own error.
func knownAlgorithms(cb ssh.HostKeyCallback, addr string) []string {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil
	}
	probe, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil
	}
	err = cb(addr, &net.TCPAddr{IP: net.IPv4zero}, probe.PublicKey())
	var keyErr *knownhosts.KeyError
	if errors.As(err, &keyErr) && len(keyErr.Want) > 0 {
		return algorithmsFor(keyErr.Want)
	}
	return nil
}

// algorithmsFor lists the host key algorithms that produce the given keys.
func algorithmsFor(keys []knownhosts.KnownKey) []string {
	var out []string
	seen := map[string]bool{}
	add := func(a string) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	for _, k := range keys {
		switch typ := k.Key.Type(); typ {
		case ssh.KeyAlgoRSA:
			add(ssh.KeyAlgoRSASHA512)
			add(ssh.KeyAlgoRSASHA256)
			add(ssh.KeyAlgoRSA)
		default:
			add(typ)
		}
	}
	return out
}

func expandHome(p string) string {
	if len(p) >= 2 && p[:2] == "~/" {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, p[2:])
		}
	}
	return p
}
