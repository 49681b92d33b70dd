package tools

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
	"strconv"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// SSHTransport runs commands on one machine over SSH, verifying the host key
// against a known_hosts file; there is no way to skip the check. It dials a
// new connection per command: simple, and nothing stays open between calls.
type SSHTransport struct {
	Limits
	Config SSHConfig
	// DialTimeout bounds connecting and the handshake; 0 means 10 s.
	DialTimeout time.Duration
}

// Run runs cmd with /bin/sh on the remote machine and waits, at most the
// timeout. The remote side bounds it too (see remoteCommand); at the timeout
// the command is also sent SIGKILL (when the server accepts signals) and the
// connection is closed.
func (t *SSHTransport) Run(ctx context.Context, cmd string, stdin io.Reader) (ExecResult, error) {
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
	if err := sess.Start(remoteCommand(cmd, t.timeout())); err != nil {
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

// remoteCommand is what the server runs for cmd: cmd under /bin/sh, killed
// with its whole process group by timeout(1) once d has passed. Closing the
// connection does not stop a command that writes nothing (`sleep`, `tail -f`
// on a quiet file), and OpenSSH refuses the signal request for root logins
// ("session signalling requires privilege separation"), so without the
// remote bound a timed-out command would keep running there. exec keeps
// timeout in the session's process group, which a signal request that the
// server does accept kills at once. The bound is d rounded up to whole
// seconds plus one, so the client's own deadline passes first and reports
// the timeout.
func remoteCommand(cmd string, d time.Duration) string {
	secs := int64((d+time.Second-1)/time.Second) + 1
	return "exec timeout -s KILL " + strconv.FormatInt(secs, 10) + " sh -c " + shellQuote(cmd)
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
