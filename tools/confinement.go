package tools

import (
	"strconv"
	"strings"

	"github.com/vigilops/vigil/policy/command"
)

// Sandbox mechanisms.
const (
	SandboxLandlock = "landlock" // vigil's own machine: vigil sandbox-exec
	SandboxBwrap    = "bwrap"    // an SSH target with bubblewrap
	SandboxNone     = "none"
)

// Sandbox says how a command was confined, for traces, audit records and
// the model: which mechanism, with what, and why none when none.
type Sandbox struct {
	// Mechanism is SandboxLandlock, SandboxBwrap or SandboxNone.
	Mechanism string `json:"mechanism"`
	// Detail qualifies it: the Landlock ABI and anything missing, or why
	// the command ran unconfined.
	Detail string `json:"detail,omitempty"`
	// Network is set when the command could reach the network; Ports are
	// the TCP ports it could connect to (Landlock), Datagrams whether it
	// could send UDP.
	Network   bool  `json:"network,omitempty"`
	Ports     []int `json:"ports,omitempty"`
	Datagrams bool  `json:"datagrams,omitempty"`
	// Shell is the shell the command ran with.
	Shell command.Dialect `json:"shell"`
}

// Confined reports whether a sandbox applied.
func (s Sandbox) Confined() bool { return s.Mechanism != "" && s.Mechanism != SandboxNone }

// String is the one line traces show: "landlock (ABI 7, no network), bash",
// "landlock (ABI 7, TCP to ports 443, 9090, UDP), bash", "bwrap (network
// allowed), sh" or "none (policy.read_sandbox is off), sh".
func (s Sandbox) String() string {
	if s.Mechanism == "" {
		return ""
	}
	detail := s.Detail
	if s.Confined() {
		net := "no network"
		switch {
		case s.Network && s.Mechanism == SandboxLandlock:
			net = "no TCP"
			if len(s.Ports) > 0 {
				ports := make([]string, len(s.Ports))
				for i, p := range s.Ports {
					ports[i] = strconv.Itoa(p)
				}
				net = "TCP to port"
				if len(ports) > 1 {
					net += "s"
				}
				net += " " + strings.Join(ports, ", ")
			}
			if s.Datagrams {
				net += ", UDP"
			} else {
				net += ", no UDP"
			}
		case s.Network:
			net = "network allowed"
		}
		if detail == "" {
			detail = net
		} else {
			detail += ", " + net
		}
	}
	out := s.Mechanism
	if detail != "" {
		out += " (" + detail + ")"
	}
	if s.Shell != "" {
		out += ", " + string(s.Shell)
	}
	return out
}
