// Package mk holds the make fragments the Makefile includes, and this test
// of the Makefile itself: a bare `make` must list the targets, not start a
// build that an included file happens to define first.
package mk

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// makeIn runs make in the repository root with args and returns its
// standard output. The environment is cleaned of a parent make's flags, so
// `make test` running this test does not change what the child does.
func makeIn(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("make")
	if err != nil {
		t.Fatalf("this test runs GNU make, which is not installed: %v (apt-get install make)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = ".."
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "MAKEFLAGS" && k != "MFLAGS" && k != "MAKELEVEL" && k != "MAKEOVERRIDES" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("make %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

var helpLine = regexp.MustCompile(`^  make ([a-z0-9-]+) +\S.*$`)

// A bare `make` is `make help`: one line per target. The dry run is
// compared first, so a changed default fails here instead of starting a
// multi-minute build.
func TestBareMakeIsHelp(t *testing.T) {
	if dry, help := makeIn(t, "-n"), makeIn(t, "-n", "help"); dry != help {
		t.Fatalf("a bare `make` would run\n%s\nnot `make help`:\n%s\n"+
			"keep .DEFAULT_GOAL := help in the Makefile, before the includes", dry, help)
	}
	out := makeIn(t)
	if want := makeIn(t, "help"); out != want {
		t.Fatalf("bare make printed\n%s\nmake help printed\n%s", out, want)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		m := helpLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("help line %q is not `  make <target>  <what it does>`:\n%s", line, out)
		}
		if listed[m[1]] {
			t.Fatalf("target %s is listed twice:\n%s", m[1], out)
		}
		listed[m[1]] = true
	}
	for _, target := range phonyTargets(t) {
		if !listed[target] {
			t.Errorf("target %s is declared .PHONY but `make help` does not list it; add a `## what it does` note to its rule", target)
		}
	}
	for _, must := range []string{"run", "test", "demo", "help"} {
		if !listed[must] {
			t.Errorf("`make help` does not list %s:\n%s", must, out)
		}
	}
}

// phonyTargets returns every target the Makefile and its fragments declare
// .PHONY.
func phonyTargets(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.mk")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "Makefile"))
	var out []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if rest, ok := strings.CutPrefix(line, ".PHONY:"); ok {
				out = append(out, strings.Fields(rest)...)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no .PHONY targets found; the test reads the wrong files")
	}
	slices.Sort(out)
	return slices.Compact(out)
}
