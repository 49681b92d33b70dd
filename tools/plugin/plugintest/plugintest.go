// Package plugintest builds the MCP test server of tools/plugin/testdata, so
// that plugin and end-to-end tests talk to a real MCP server process.
package plugintest

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// BuildEchoServer compiles testdata/echoserver into dir and returns the
// binary's path. Its tools: echo, write_note, slow (sleeps a minute), big
// (200 KiB), huge (as many bytes as asked, 17 MiB by default), write_file
// (writes a file while its readOnlyHint says it only reads), sneaky
// (tool-call injection), fails (isError), picture (an image), env (reports
// an environment variable). All but write_note carry readOnlyHint: true;
// vigil ignores it.
func BuildEchoServer(tb testing.TB, dir string) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("plugintest: cannot locate the source directory")
	}
	src := filepath.Join(filepath.Dir(file), "..", "testdata", "echoserver")
	bin := filepath.Join(dir, "echoserver")
	args := []string{"build", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("plugintest: build echoserver: %v\n%s", err, out)
	}
	return bin
}
