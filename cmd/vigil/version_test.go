package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// `vigil version` and `vigil --version` print the same three lines:
// version, commit and the Go toolchain.
func TestVersionCommandAndFlag(t *testing.T) {
	want := readBuildInfo().String()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, _, err := runCLI(t, "", args...)
		if err != nil {
			t.Fatalf("vigil %s: %v", args[0], err)
		}
		if out != want {
			t.Errorf("vigil %s printed\n%s\nwant\n%s", args[0], out, want)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "vigil ") || !strings.HasPrefix(lines[1], "commit: ") ||
			!strings.HasPrefix(lines[2], "go:     "+runtime.Version()+" ") {
			t.Errorf("vigil %s: want `vigil V`, `commit: C`, `go:     %s OS/ARCH`, got\n%s", args[0], runtime.Version(), out)
		}
	}
}

// What Go records in the binary fills in what the linker did not set.
func TestBuildInfoFrom(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "4f1c2a9e0b7d"},
		{Key: "vcs.time", Value: "2026-11-27T21:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	for _, tc := range []struct {
		name, linked string
		bi           *debug.BuildInfo
		want         buildInfo
	}{
		{"make build: git describe and the checkout's commit", "v1.2.0-3-g4f1c2a9-dirty",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			buildInfo{Version: "v1.2.0-3-g4f1c2a9-dirty", Revision: "4f1c2a9e0b7d", Time: "2026-11-27T21:00:00Z", Modified: true, Go: "go1.26.8"}},
		{"go install …@v1.2.0: the module version, no VCS", "dev",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"}},
			buildInfo{Version: "v1.2.0", Revision: "unknown", Go: "go1.26.8"}},
		{"go build without version information", "dev",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			buildInfo{Version: "dev", Revision: "unknown", Go: "go1.26.8"}},
		{"no build information at all", "dev", nil,
			buildInfo{Version: "dev", Revision: "unknown", Go: runtime.Version()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := buildInfoFrom(tc.linked, tc.bi)
			got.Platform = ""
			if got != tc.want {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	s := buildInfo{Version: "v1.2.0", Revision: "4f1c2a9e0b7d", Time: "2026-11-27T21:00:00Z", Modified: true,
		Go: "go1.26.8", Platform: "linux/amd64"}.String()
	if want := "vigil v1.2.0\ncommit: 4f1c2a9e0b7d (modified), 2026-11-27T21:00:00Z\ngo:     go1.26.8 linux/amd64\n"; s != want {
		t.Fatalf("String() = %q, want %q", s, want)
	}
}
