//go:build linux

package sandbox

import (
	"fmt"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/sys/unix"
)

// metadataCalls change a file without writing it, which Landlock (up to
// ABI 7 at least) does not guard: mode, owner, times, extended attributes.
// A confined root still owns /etc/shadow and could chmod it.
var metadataCalls = []string{
	"chmod", "fchmod", "fchmodat", "fchmodat2",
	"chown", "fchown", "lchown", "fchownat",
	"utime", "utimes", "utimensat", "futimesat",
	"setxattr", "lsetxattr", "fsetxattr", "setxattrat",
	"removexattr", "lremovexattr", "fremovexattr", "removexattrat",
}

// ipprotoMPTCP is multipath TCP, which Landlock's TCP rules do not see:
// without this filter a confined command could listen and connect over it.
const ipprotoMPTCP = 262

// seccompThread installs, on the calling thread only, a filter that makes
// metadataCalls fail with EPERM, refuses multipath TCP sockets, and
// without network refuses datagram, raw and packet sockets on IPv4 and IPv6
// (UDP, which Landlock does not restrict before ABI 10, included).
// Everything else is allowed: Landlock and the dropped capabilities do the
// rest. no_new_privs must already be set.
func seccompThread(network bool) error {
	info, err := arch.GetInfo("")
	if err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	var names []string
	for _, n := range metadataCalls {
		if _, ok := info.SyscallNames[n]; ok { // the *at forms only, on some architectures
			names = append(names, n)
		}
	}
	sockets := []seccomp.NameWithConditions{{Name: "socket", Conditions: seccomp.ArgumentConditions{
		{Argument: 2, Operation: seccomp.Equal, Value: ipprotoMPTCP},
	}}}
	if !network {
		for _, family := range []uint64{unix.AF_INET, unix.AF_INET6} {
			sockets = append(sockets, seccomp.NameWithConditions{Name: "socket", Conditions: seccomp.ArgumentConditions{
				{Argument: 0, Operation: seccomp.Equal, Value: family},
				// SOCK_DGRAM's bit is set in DGRAM, RAW, DCCP and PACKET,
				// clear in STREAM, whatever flags are or'ed in.
				{Argument: 1, Operation: seccomp.BitsSet, Value: unix.SOCK_DGRAM},
			}})
		}
	}
	filter := seccomp.Filter{Policy: seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: seccomp.ActionErrno, Names: names, NamesWithCondtions: sockets},
		},
	}}
	if err := seccomp.LoadFilter(filter); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}
