package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=..." (the
// Makefile and the Dockerfile use `git describe`). A binary built without
// it, such as one from `go install …@vX.Y.Z`, reports the module version Go
// recorded instead.
var version = "dev"

// Exit statuses other than 0 and 1. The Makefile and service managers act
// on them, so they are part of vigil's interface (README "Two commands").
const (
	// exitNotConfigured is sysexits' EX_CONFIG: vigil cannot start because
	// something it needs, such as a language model, is not configured. The
	// command has already said what to set. `make run` treats it as a clean
	// stop, not as a build failure.
	exitNotConfigured = 78
)

// buildInfo is what `vigil version` prints and vigil_build_info exports.
type buildInfo struct {
	Version  string
	Revision string // VCS commit, "unknown" when Go recorded none
	Time     string // commit time, RFC 3339, or ""
	Modified bool   // built from a tree with uncommitted changes
	Go       string // Go version the binary was built with
	Platform string // GOOS/GOARCH
}

// readBuildInfo combines the linker-set version with what the Go toolchain
// recorded in the binary (runtime/debug.ReadBuildInfo): the module version
// for `go install`, the VCS revision for builds inside a Git checkout.
func readBuildInfo() buildInfo {
	bi, _ := debug.ReadBuildInfo()
	return buildInfoFrom(version, bi)
}

func buildInfoFrom(linked string, bi *debug.BuildInfo) buildInfo {
	info := buildInfo{Version: linked, Revision: "unknown", Go: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return info
	}
	if bi.GoVersion != "" {
		info.Go = bi.GoVersion
	}
	if info.Version == "" || info.Version == "dev" {
		// "(devel)" is what Go records for a build of the main module
		// without version information; keep "dev" then.
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			info.Version = v
		} else {
			info.Version = "dev"
		}
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// String is the text of `vigil version` and `vigil --version`.
func (b buildInfo) String() string {
	commit := b.Revision
	if b.Modified {
		commit += " (modified)"
	}
	if b.Time != "" {
		commit += ", " + b.Time
	}
	return fmt.Sprintf("vigil %s\ncommit: %s\ngo:     %s %s\n", b.Version, commit, b.Go, b.Platform)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit and the Go version vigil was built from (also: vigil --version)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), readBuildInfo())
			return err
		},
	}
}

// setVersionFlag gives the root command the --version flag people try
// first, printing exactly what `vigil version` prints.
func setVersionFlag(root *cobra.Command) {
	root.Version = readBuildInfo().Version
	root.SetVersionTemplate(readBuildInfo().String())
}
