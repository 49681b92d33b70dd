package transport

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigilops/vigil/tools"
)

func TestLocalTransport(t *testing.T) {
	lt := &LocalTransport{}
	tests := []struct {
		name, cmd, stdin    string
		wantOut, wantErrOut string
		wantCode            int
	}{
		{name: "echo", cmd: "echo hello", wantOut: "hello\n"},
		{name: "exit code", cmd: "echo partial; exit 3", wantOut: "partial\n", wantCode: 3},
		{name: "stderr", cmd: "echo oops >&2; false", wantErrOut: "oops\n", wantCode: 1},
		{name: "stdin", cmd: "tr a-z A-Z", stdin: "shout\n", wantOut: "SHOUT\n"},
		{name: "no stdin reads EOF", cmd: "cat; echo done", wantOut: "done\n"},
		{name: "hostile string stays data", cmd: "printf '%s\\n' " + ShellQuote("'; echo pwned #"), wantOut: "'; echo pwned #\n"},
		{name: "missing command", cmd: "definitely-not-a-command-vigil", wantCode: 127},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in *strings.Reader
			if tt.stdin != "" {
				in = strings.NewReader(tt.stdin)
			}
			var res ExecResult
			var err error
			if in != nil {
				res, err = lt.Run(t.Context(), Job{Command: tt.cmd}, in)
			} else {
				res, err = lt.Run(t.Context(), Job{Command: tt.cmd}, nil)
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.ExitCode != tt.wantCode {
				t.Errorf("exit code = %d, want %d (stderr %q)", res.ExitCode, tt.wantCode, res.Stderr)
			}
			if tt.wantOut != "" && res.Stdout != tt.wantOut {
				t.Errorf("stdout = %q, want %q", res.Stdout, tt.wantOut)
			}
			if tt.wantErrOut != "" && res.Stderr != tt.wantErrOut {
				t.Errorf("stderr = %q, want %q", res.Stderr, tt.wantErrOut)
			}
		})
	}
}

func TestLocalTransportEnvironmentIsMinimal(t *testing.T) {
	t.Setenv("VIGIL_TEST_SECRET", "hunter2")
	res, err := (&LocalTransport{}).Run(t.Context(), Job{Command: "env"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Stdout, "hunter2") {
		t.Error("vigil's environment leaked into the command")
	}
	if !strings.Contains(res.Stdout, "PATH=") || !strings.Contains(res.Stdout, "PAGER=cat") {
		t.Errorf("environment lacks PATH or PAGER: %q", res.Stdout)
	}
}

func TestLocalTransportTimeoutKillsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	lt := &LocalTransport{Limits: Limits{Timeout: 300 * time.Millisecond}}
	start := time.Now()
	// A background child that would outlive a naive kill of the shell.
	res, err := lt.Run(t.Context(), Job{Command: "sleep 30 & echo $! > " + ShellQuote(pidFile) + "; echo started; sleep 30"}, nil)
	elapsed := time.Since(start)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if elapsed > 5*time.Second {
		t.Errorf("timeout took %s", elapsed)
	}
	if res.ExitCode != -1 || res.Stdout != "started\n" {
		t.Errorf("result = %+v; want exit -1 and the output so far", res)
	}
	assertDead(t, pidFile)
}

func TestLocalTransportBackgroundChildDoesNotHoldRun(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	res, err := (&LocalTransport{}).Run(t.Context(), Job{Command: "sleep 30 & echo $! > " + ShellQuote(pidFile) + "; echo done"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Stdout != "done\n" {
		t.Errorf("result = %+v", res)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run waited %s for a background child", d)
	}
	assertDead(t, pidFile)
}

// assertDead checks that the process whose PID is in pidFile is gone.
func assertDead(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("read pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		// A killed child not yet reaped by init is a zombie: dead too.
		if st, rerr := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); rerr == nil && strings.Contains(string(st), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("background child %d outlived the command", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLocalTransportOutputCap(t *testing.T) {
	lt := &LocalTransport{Limits: Limits{OutputCap: 64 * 1024}}
	res, err := lt.Run(t.Context(), Job{Command: "head -c 2000000 /dev/zero | tr '\\0' a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.StdoutBytes != 2000000 {
		t.Errorf("Truncated = %v, StdoutBytes = %d", res.Truncated, res.StdoutBytes)
	}
	const notice = "\n[output truncated: 1.9 MiB total, showing first 64 KiB]"
	if !strings.HasSuffix(res.Stdout, notice) {
		t.Errorf("no truncation notice; ends with %q", res.Stdout[len(res.Stdout)-80:])
	}
	if got := len(res.Stdout) - len(notice); got != 64*1024 {
		t.Errorf("kept %d bytes, want %d", got, 64*1024)
	}
}

func TestLocalTransportCallerCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	_, err := (&LocalTransport{}).Run(ctx, Job{Command: "sleep 30"}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestCapBufferKeepsWholeRunes(t *testing.T) {
	c := newCapBuffer(5)
	_, _ = c.Write([]byte("abcdé and more")) // é is 2 bytes: 4+2 > 5
	got := c.text()
	if !strings.HasPrefix(got, "abcd\n[output truncated: 15 B total, showing first 4 B]") {
		t.Errorf("text = %q", got)
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 65536: "64 KiB", 2000000: "1.9 MiB", 3 << 30: "3 GiB"} {
		if got := tools.FormatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
