package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigilops/vigil/tools/sandbox"
)

func TestSandboxExecCommand(t *testing.T) {
	if abi := sandbox.ABI(); abi < sandbox.MinABI {
		t.Fatalf("this kernel offers Landlock ABI %d, the read sandbox needs %d (Linux 6.12+ with Landlock enabled)", abi, sandbox.MinABI)
	}
	dir, tmp := t.TempDir(), t.TempDir()
	outside := filepath.Join(dir, "outside")
	out, err := exec.Command(os.Args[0], "sandbox-exec", "--tmp", tmp, "--",
		"touch "+outside+"; echo ok > \"$TMPDIR/f\"; cat \"$TMPDIR/f\"").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "Permission denied") || !strings.HasSuffix(string(out), "ok\n") {
		t.Errorf("output %q", out)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("vigil sandbox-exec let the command write outside its temp dir")
	}
	// Bad usage exits 2 without running anything.
	err = run(context.Background(), []string{"sandbox-exec", "--", "true"})
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 2 {
		t.Errorf("without --tmp: %v, want exit status 2", err)
	}
}
