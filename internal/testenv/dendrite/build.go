// Package dendrite builds and runs a real Matrix homeserver (Dendrite) for
// integration tests.
//
// The homeserver is compiled from the separate Go module in ./tools (which
// requires github.com/matrix-org/dendrite), so the main module's dependency
// graph never contains Dendrite. The binaries are built once per machine and
// cached outside the repository, keyed by version; a file lock keeps parallel
// test binaries from building twice.
package dendrite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Version is the Dendrite release the tools module pins.
const Version = "v0.13.8"

// EnvBinDir overrides where the binaries are cached (and looked up).
const EnvBinDir = "VIGIL_DENDRITE_DIR"

// Binaries the harness needs, as import paths inside the Dendrite module.
var commands = []string{
	"github.com/matrix-org/dendrite/cmd/dendrite",
	"github.com/matrix-org/dendrite/cmd/create-account",
	"github.com/matrix-org/dendrite/cmd/generate-keys",
}

// stampFile marks a complete build in the cache directory.
const stampFile = ".complete"

// BinDir returns the directory the binaries are cached in:
// $VIGIL_DENDRITE_DIR, else <user cache dir>/vigil/dendrite-<Version>.
func BinDir() (string, error) {
	if d := os.Getenv(EnvBinDir); d != "" {
		return filepath.Abs(d)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("dendrite: no cache directory (set %s): %w", EnvBinDir, err)
	}
	return filepath.Join(base, "vigil", "dendrite-"+Version), nil
}

// toolsDir is the separate Go module that pins Dendrite, found next to this
// source file.
func toolsDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("dendrite: cannot locate the harness source")
	}
	dir := filepath.Join(filepath.Dir(file), "tools")
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("dendrite: tools module missing at %s: %w", dir, err)
	}
	return dir, nil
}

// EnsureBinaries builds the Dendrite binaries into BinDir unless a complete
// build is already cached, and returns the directory. logf reports progress
// (may be nil). Safe to call from several processes at once.
func EnsureBinaries(ctx context.Context, logf func(format string, args ...any)) (string, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	dir, err := BinDir()
	if err != nil {
		return "", err
	}
	if complete(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("dendrite: create %s: %w", dir, err)
	}
	unlock, err := lockFile(ctx, filepath.Join(dir, ".lock"))
	if err != nil {
		return "", fmt.Errorf("dendrite: lock %s: %w", dir, err)
	}
	defer unlock()
	if complete(dir) { // another process built it while we waited
		return dir, nil
	}

	tools, err := toolsDir()
	if err != nil {
		return "", err
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		// `go test` puts its own GOROOT in the environment of the tests.
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
		if _, serr := os.Stat(goBin); os.Getenv("GOROOT") == "" || serr != nil {
			return "", fmt.Errorf("dendrite: building it needs the go command: put it on PATH (%w)", err)
		}
	}
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return "", fmt.Errorf("dendrite: temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)

	logf("dendrite: building %s binaries into %s (first run only; takes a few minutes)", Version, dir)
	start := time.Now()
	// No symbol table or DWARF: the tests never debug Dendrite, and the
	// links of three large binaries are a good part of a cold build.
	args := append([]string{"build", "-trimpath", "-ldflags=-s -w", "-o", tmp + string(filepath.Separator)}, commands...)
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = tools
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("dendrite: `go build` of %s in %s failed: %w\n%s", Version, tools, err, tail(out.String(), 4000))
	}
	for _, c := range commands {
		name := filepath.Base(c)
		if err := os.Rename(filepath.Join(tmp, name), filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("dendrite: install %s: %w", name, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, stampFile), []byte(Version+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("dendrite: stamp: %w", err)
	}
	logf("dendrite: built in %s", time.Since(start).Round(time.Second))
	return dir, nil
}

func complete(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, stampFile))
	if err != nil || strings.TrimSpace(string(b)) != Version {
		return false
	}
	for _, c := range commands {
		if _, err := os.Stat(filepath.Join(dir, filepath.Base(c))); err != nil {
			return false
		}
	}
	return true
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
