// Package sandbox confines the commands vigil runs as reads on its own
// machine, so that a command the classifier wrongly proved read-only still
// cannot change what the kernel can guard.
//
// A confined command starts from an OS thread that confined itself first:
// Start locks a fresh thread, restricts it, starts the command from it (the
// child inherits the thread's credentials and Landlock domain) and lets the
// thread die with its goroutine, so no other part of vigil ever runs
// restricted. What the command may then do:
//
//   - Landlock (ABI 6 or later): read and execute every file; write only
//     /dev/null, /dev/zero, /dev/full and a private temp dir the caller made
//     for this one command. No TCP bind; no TCP connect unless the caller
//     allows network (a read classified as talking over the network).
//     Signals and abstract unix sockets are scoped: the command cannot
//     signal or reach a process outside its own sandbox.
//   - seccomp: no change of a file's mode, owner, times or extended
//     attributes (Landlock does not guard metadata), no multipath TCP
//     (Landlock's TCP rules do not see it), and without network no UDP,
//     raw or packet socket either.
//   - no_new_privs, so setuid binaries and file capabilities grant nothing.
//   - Every capability is dropped but CAP_DAC_READ_SEARCH (read any file),
//     so a root vigil's reads cannot reconfigure the network, set the clock,
//     load modules or reboot through system calls Landlock does not cover.
//
// What it does not cover: requests to daemons over pathname unix sockets
// (D-Bus to systemd, docker.sock) and netlink. That is why the classifier
// stays the first gate; see README's security model.
//
// `vigil sandbox-exec` (Main) applies the same confinement to itself and
// executes a shell, for trying out what a read may do.
package sandbox

import "errors"

// ErrRefused is what Start returns, wrapped, when it does not start the
// command because the confinement required is not available.
var ErrRefused = errors.New("sandbox cannot confine the command")

// Subcommand is vigil's subcommand that runs Main.
const Subcommand = "sandbox-exec"

// MinABI is the Landlock ABI that gives every promise of this package:
// filesystem (1), TCP (4), ioctl on devices (5), scoped signals and
// abstract unix sockets (6).
const MinABI = 6

// Spec is how to confine one command.
type Spec struct {
	// TempDir is the one directory the command may write in. The caller
	// creates it and removes it afterwards.
	TempDir string
	// Network lets the command open TCP connections (never listen).
	Network bool
	// BestEffort runs the command with whatever confinement the kernel
	// offers, down to none, and reports what applied; without it, anything
	// short of the full confinement refuses to start the command.
	BestEffort bool
}

// Report is what confinement applied.
type Report struct {
	// Confined is false when best effort fell back to no Landlock.
	Confined bool
	// ABI is the Landlock ABI enforced; 0 when unconfined.
	ABI int
	// CapsDropped says capabilities were dropped; false when there were
	// none to drop.
	CapsDropped bool
	// Note explains a partial or missing confinement; "" when complete.
	Note string
}
