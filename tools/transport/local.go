package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/sandbox"
)

// LocalTransport runs commands on this machine with bash -c or sh -c, as
// the job says. Each command gets its own process group, and the whole
// group is killed when the command ends or times out, so a background child
// (`sleep 100 &`) does not outlive it.
//
// A confined job starts through package sandbox: Landlock, no_new_privs and
// no capabilities, writing only to a private temp dir (TMPDIR) that is
// removed afterwards.
//
// Commands get a small environment (see LocalTransport.Env), not vigil's own:
// vigil's environment holds API keys and tokens that a model-proposed `env`
// must not print. Every job but a change also gets readOnlyEnv.
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

// Run runs the job and waits for it, at most the timeout.
func (t *LocalTransport) Run(ctx context.Context, job Job, stdin io.Reader) (ExecResult, error) {
	if err := ctx.Err(); err != nil {
		return ExecResult{ExitCode: -1}, fmt.Errorf("local command: %w", err)
	}
	shellPath, err := localShell(job.shell())
	if err != nil {
		return ExecResult{ExitCode: -1}, fmt.Errorf("%w: local: %w", ErrTransport, err)
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout())
	defer cancel()

	env := t.Env
	if env == nil {
		env = minimalEnv()
	}
	if !job.Write {
		env = withReadOnlyEnv(env)
	}
	c := exec.CommandContext(ctx, shellPath, "-c", job.Command)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var box *sandbox.Spec
	if job.Confined {
		tmp, err := os.MkdirTemp("", "vigil-read-")
		if err != nil {
			return ExecResult{ExitCode: -1}, fmt.Errorf("%w: local: sandbox temp dir: %w", ErrTransport, err)
		}
		defer os.RemoveAll(tmp)
		box = &sandbox.Spec{TempDir: tmp, BestEffort: job.BestEffort}
		if job.Network {
			box.Ports, box.Datagrams = job.Ports, job.Datagrams
		}
		env = append(slices.Clip(env), "TMPDIR="+tmp)
		// A session of its own: no controlling terminal to write to, and
		// still one process group to kill.
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}

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

	c.Env = env
	c.Dir = t.Dir
	if c.Dir == "" {
		c.Dir = homeDir()
	}
	c.Stdin = stdin // nil reads /dev/null
	c.Stdout, c.Stderr = outW, errW
	c.Cancel = func() error { return killGroup(c.Process) }
	c.WaitDelay = readerGrace // bounds the stdin copy after the process is gone

	start := time.Now()
	applied := unconfined(job.shell(), "")
	var startErr error
	if box != nil {
		var rep sandbox.Report
		rep, startErr = sandbox.Start(c, *box)
		switch {
		case startErr != nil:
		case rep.Confined:
			applied = tools.Sandbox{Mechanism: tools.SandboxLandlock, Detail: landlockDetail(rep), Network: job.Network,
				Ports: box.Ports, Datagrams: box.Datagrams, Shell: job.shell()}
		default:
			applied = unconfined(job.shell(), "the sandbox could not confine it: %s", rep.Note)
		}
	} else {
		startErr = c.Start()
	}
	if startErr != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		if errors.Is(startErr, sandbox.ErrRefused) {
			// Nothing ran: policy requires what the kernel cannot give.
			return ExecResult{ExitCode: -1, Sandbox: applied}, fmt.Errorf("%w: %w", ErrNoSandbox, startErr)
		}
		return ExecResult{ExitCode: -1}, fmt.Errorf("%w: local: start shell: %w", ErrTransport, startErr)
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
		Sandbox:     applied,
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

// landlockDetail is how a trace names the Landlock confinement.
func landlockDetail(rep sandbox.Report) string {
	d := "ABI " + strconv.Itoa(rep.ABI)
	if rep.Note != "" {
		d += "; " + rep.Note
	}
	return d
}

// localShell is the path of the shell for d on this machine.
func localShell(d command.Dialect) (string, error) {
	switch d {
	case command.DialectPOSIX:
		return "/bin/sh", nil
	case command.DialectBash:
		for _, p := range []string{"/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"} {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p, nil
			}
		}
		return "", errors.New("bash is not installed on this machine; install it, or give the resource shell: sh in the inventory")
	}
	return "", fmt.Errorf("unknown shell %q: want bash or sh", d)
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
