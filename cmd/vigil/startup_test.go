package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/internal/testenv/testkit"
)

// runCLI runs vigil with args and stdin, returning stdout, stderr and the
// error run returns (what main would print after "vigil: ").
func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut testkit.SyncBuffer
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errOut)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// vigilProcess runs vigil with args in a child process, as a user would
// from a shell, and returns its combined standard error and its exit
// error. Only a separate process shows what reaches the real stderr
// (libraries that log there directly).
func vigilProcess(t *testing.T, stdin string, env []string, args ...string) (string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(append(os.Environ(), "VIGIL_TEST_AS_MAIN=1"), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stdout = io.Discard
	cmd.Stderr = &stderr
	err = cmd.Run()
	return stderr.String(), err
}

// closedPort is a local address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Redis unreachable at start: one clear line naming the address, what
// failed and how to fix it, and none of the client's own log lines.
func TestStartWithRedisUnreachable(t *testing.T) {
	addr := closedPort(t)
	// An audit key, so the only warning is the one about Redis (a Redis
	// store without one draws the unkeyed-audit-chain warning too).
	stderr, err := vigilProcess(t, "", []string{"VIGIL_STORE_BACKEND=redis", "VIGIL_STORE_REDIS_ADDR=" + addr,
		"VIGIL_AUDIT_KEY=" + strings.Repeat("0123456789abcdef", 4)}, "chat", "--demo")
	if err != nil {
		t.Fatalf("vigil chat: %v\n%s", err, stderr)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("want one line about Redis on stderr, got %d:\n%s", len(lines), stderr)
	}
	for _, want := range []string{"cannot reach Redis at " + addr, "connection refused", "start Redis", "store.redis.addr", "VIGIL_STORE_REDIS_ADDR"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the line lacks %q:\n%s", want, lines[0])
		}
	}
	for _, internal := range []string{"pool.go", "dial tcp", "failed to dial"} {
		if strings.Contains(stderr, internal) {
			t.Errorf("stderr shows the client's internals (%q):\n%s", internal, stderr)
		}
	}
}

// A bad setting stops vigil with the key, the value, where it came from
// and an example; a VIGIL_ variable that sets nothing is a warning naming
// the closest one.
func TestStartConfigProblems(t *testing.T) {
	t.Run("bare duration", func(t *testing.T) {
		t.Setenv("VIGIL_POLICY_APPROVAL_TTL", "600")
		_, _, err := runCLI(t, "", "chat", "--demo")
		if err == nil {
			t.Fatal("vigil started with approval_ttl 600")
		}
		for _, want := range []string{"policy.approval_ttl", `"600"`, "environment variable VIGIL_POLICY_APPROVAL_TTL", "VIGIL_POLICY_APPROVAL_TTL=600s or 10m"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the error lacks %q: %v", want, err)
			}
		}
	})
	t.Run("misspelt variable", func(t *testing.T) {
		t.Setenv("VIGIL_LLM_BASEURL", "http://localhost:11434/v1")
		_, stderr, err := runCLI(t, "", "chat", "--demo")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stderr, "VIGIL_LLM_BASEURL is not a vigil setting") || !strings.Contains(stderr, "did you mean VIGIL_LLM_BASE_URL") {
			t.Fatalf("no warning for the misspelt variable:\n%s", stderr)
		}
	})
}
