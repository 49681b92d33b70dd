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
//     for this one command. No TCP bind; TCP connect only to the ports the
//     caller lists (those of the destinations a network read was proven to
//     talk to), none without. Landlock sees ports, not hosts: a listed port
//     is open on every host. Signals and abstract unix sockets are scoped:
//     the command cannot signal or reach a process outside its own sandbox.
//   - seccomp: no change of a file's mode, owner, times or extended
//     attributes (Landlock does not guard metadata); no System V IPC or
//     POSIX message queue change (create, send, receive, remove, set), only
//     their status; no multipath TCP (Landlock's TCP rules do not see it);
//     no datagram, raw or packet socket unless the caller allows datagrams
//     (DNS), and then to any address and port, which seccomp cannot see;
//     and no system call of another architecture's ABI (32-bit x86 on a
//     64-bit kernel), which would pass the filter unchecked.
//   - no_new_privs, so setuid binaries and file capabilities grant nothing.
//   - Every capability is dropped but CAP_DAC_READ_SEARCH (read any file),
//     so a root vigil's reads cannot reconfigure the network, set the clock,
//     load modules or reboot through system calls Landlock does not cover.
//
// What it does not cover: requests to daemons over pathname unix sockets
// (D-Bus to systemd, docker.sock), netlink, where an allowed port or an
// allowed datagram goes (another host on the same port), and a process a
// command leaves running in a session of its own. That is why the
// classifier stays the first gate; see README's security model.
//
// `vigil sandbox-exec` (Main) applies the same confinement to itself and
// executes a shell, for trying out what a read may do.
package sandbox

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

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
	// Ports are the TCP ports the command may connect to (it never
	// listens). None means no TCP connection at all.
	Ports []int
	// Datagrams lets the command open UDP and ICMP echo sockets, for name
	// resolution and DNS queries. seccomp cannot see a datagram's address,
	// so it may then send to any host and port.
	Datagrams bool
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

// checkPorts refuses a port Landlock could not mean: TCP ports are 1 to
// 65535.
func checkPorts(ports []int) error {
	for _, p := range ports {
		if p < 1 || p > 65535 {
			return fmt.Errorf("TCP port %d is out of range (1-65535)", p)
		}
	}
	return nil
}

// ParsePorts reads a comma-separated list of TCP ports ("443,5432"), as
// `vigil sandbox-exec --connect` takes them; "" is none.
func ParsePorts(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var ports []int
	for f := range strings.SplitSeq(s, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q is not a TCP port number", f)
		}
		ports = append(ports, p)
	}
	return ports, checkPorts(ports)
}
