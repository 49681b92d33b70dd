package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// LocalTransport runs commands on this machine with /bin/sh -c. Each command
// gets its own process group, and the whole group is killed when the command
// ends or times out, so a background child (`sleep 100 &`) does not outlive
// it.
//
// Commands get a small environment (see LocalTransport.Env), not vigil's own:
// vigil's environment holds API keys and tokens that a model-proposed `env`
// must not print.
type LocalTransport struct {
	Limits
	// Env is the command's environment. Nil means minimalEnv: PATH, HOME,
	// USER, LOGNAME, LANG, TZ, KUBECONFIG and DOCKER_HOST from vigil's
	// environment, plus pager and colour settings that keep output plain.
	Env []string
	// Dir is the working directory; "" means $HOME, or / without one.
	Dir string
}

// readerGrace is how long the output readers may take to drain after the
// process group is gone; only a process that left the group (setsid) and
// kept the pipe open can make them wait that long.
const readerGrace = 2 * time.Second

// Run runs cmd and waits for it, at most the timeout.
func (t *LocalTransport) Run(ctx context.Context, cmd string, stdin io.Reader) (ExecResult, error) {
	if err := ctx.Err(); err != nil {
		return ExecResult{ExitCode: -1}, fmt.Errorf("local command: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout())
	defer cancel()

	stdout, stderr := newCapBuffer(t.outputCap()), newCapBuffer(t.stderrCap())
	outR, outW, err := os.Pipe()
	if err != nil {
		return ExecResult{ExitCode: -1}, fmt.Errorf("%w: local: %w", ErrTransport, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return ExecResult{ExitCode: -1}, fmt.Errorf("%w: local: %w", ErrTransport, err)
	}

	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
	c.Env = t.Env
	if c.Env == nil {
		c.Env = minimalEnv()
	}
	c.Dir = t.Dir
	if c.Dir == "" {
		c.Dir = homeDir()
	}
	c.Stdin = stdin // nil reads /dev/null
	c.Stdout, c.Stderr = outW, errW
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return killGroup(c.Process) }
	c.WaitDelay = readerGrace // bounds the stdin copy after the process is gone

	start := time.Now()
	if err := c.Start(); err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return ExecResult{ExitCode: -1}, fmt.Errorf("%w: local: start shell: %w", ErrTransport, err)
	}
	// The child holds its own copies of the write ends; ours must go so the
	// readers see EOF when the child's are closed.
	outW.Close()
	errW.Close()

	var wg sync.WaitGroup
	wg.Go(func() { _, _ = io.Copy(stdout, outR) })
	wg.Go(func() { _, _ = io.Copy(stderr, errR) })

	waitErr := c.Wait()
	_ = killGroup(c.Process) // stragglers left in the group
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(readerGrace):
		// Something outside the group holds the pipes; stop reading.
		outR.Close()
		errR.Close()
		<-drained
	}
	outR.Close()
	errR.Close()

	res := ExecResult{
		Stdout:      stdout.text(),
		Stderr:      stderr.text(),
		ExitCode:    c.ProcessState.ExitCode(),
		Truncated:   stdout.truncated(),
		StdoutBytes: stdout.total,
		Duration:    time.Since(start),
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !c.ProcessState.Exited() {
		// Killed because the deadline passed or the caller gave up.
		res.ExitCode = -1
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return res, fmt.Errorf("%w after %s", ErrTimeout, res.Duration.Round(time.Millisecond))
		}
		return res, fmt.Errorf("local command: %w", ctxErr)
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return res, fmt.Errorf("%w: local: %w", ErrTransport, waitErr)
	}
	return res, nil
}

// killGroup kills the process group led by p. Errors are expected when the
// group is already empty.
func killGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	return syscall.Kill(-p.Pid, syscall.SIGKILL)
}

func homeDir() string {
	if h, err := os.UserHomeDir(); err == nil {
		if fi, err := os.Stat(h); err == nil && fi.IsDir() {
			return h
		}
	}
	return "/"
}

// minimalEnv is the environment commands run with by default.
func minimalEnv() []string {
	env := []string{
		"PAGER=cat", "SYSTEMD_PAGER=cat", "GIT_PAGER=cat", "SYSTEMD_COLORS=0",
		"NO_COLOR=1", "TERM=dumb",
	}
	if _, ok := os.LookupEnv("PATH"); !ok {
		env = append(env, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	}
	for _, k := range []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ", "KUBECONFIG", "DOCKER_HOST"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
