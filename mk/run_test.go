package mk

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// makeRun runs `make run` with BIN set to a stand-in for vigil (a shell
// script) and the build taken as done, and returns make's output and
// error.
func makeRun(t *testing.T, vigil string, extra ...string) (string, error) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "vigil")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+vigil+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := append([]string{"--no-print-directory", "-o", "build", "run", "BIN=" + bin}, extra...)
	cmd := exec.CommandContext(ctx, "make", args...)
	cmd.Dir = ".."
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "MAKEFLAGS" && k != "MFLAGS" && k != "MAKELEVEL" && k != "MAKEOVERRIDES" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// vigil's "not configured" exit status (78, cmd/vigil) is a clean stop for
// `make run`: make says why and exits 0, with no "make: *** Error" line.
func TestRunStopsCleanlyWhenNotConfigured(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("this test runs GNU make, which is not installed: %v (apt-get install make)", err)
	}
	out, err := makeRun(t, `echo "vigil: no language model is configured" >&2; exit 78`)
	if err != nil {
		t.Fatalf("make run with vigil exiting 78: %v\n%s", err, out)
	}
	if !strings.Contains(out, "nothing failed") || strings.Contains(out, "Error") {
		t.Fatalf("make run did not end as a clean stop:\n%s", out)
	}
}

// Any other failure of vigil still fails make run, with vigil's status.
func TestRunPassesOnOtherFailures(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("this test runs GNU make, which is not installed: %v (apt-get install make)", err)
	}
	for _, status := range []string{"1", "2"} {
		out, err := makeRun(t, `echo "vigil: config: broken" >&2; exit `+status)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || strings.Contains(out, "nothing failed") || !strings.Contains(out, "Error "+status) {
			t.Fatalf("vigil exiting %s: make run returned %v, want make's Error %s:\n%s", status, err, status, out)
		}
	}
}

// The build says what it is doing before the long first compile.
func TestBuildSaysWhatItDoes(t *testing.T) {
	out := makeIn(t, "-n", "build")
	if !strings.Contains(out, "the first build compiles its dependencies") {
		t.Fatalf("make build does not announce itself:\n%s", out)
	}
}

// `make test` says in a plain line, first and last, whether it checks the
// shared command corpus; a skip message alone is invisible without -v.
func TestTestSaysWhetherTheCorpusIsChecked(t *testing.T) {
	t.Setenv("VIGIL_SHARED_CORPUS", "")
	out := makeIn(t, "corpus-note", "SHARED_CORPUS=")
	if !strings.HasPrefix(out, "test: NOT CHECKING the shared command corpus") {
		t.Fatalf("without a corpus: %q", out)
	}
	out = makeIn(t, "corpus-note", "VIGIL_SHARED_CORPUS=/x/commands.tsv")
	if out != "test: checking the shared command corpus /x/commands.tsv\n" {
		t.Fatalf("with VIGIL_SHARED_CORPUS: %q", out)
	}
	dry := makeIn(t, "-n", "test", "SHARED_CORPUS=")
	lines := strings.Split(strings.TrimSpace(dry), "\n")
	if !strings.Contains(lines[0], "NOT CHECKING the shared command corpus") ||
		!strings.Contains(lines[len(lines)-1], "NOT CHECKING the shared command corpus") {
		t.Fatalf("make test does not print the corpus line first and last:\n%s", dry)
	}
}
