//go:build linux

package sandbox

import (
	"fmt"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
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

// ipcCalls change System V IPC objects or POSIX message queues, which no
// Landlock right covers: create an object, send or take a message, operate
// on semaphores, attach shared memory (which updates the segment's attach
// count and times, and maps it writable without SHM_RDONLY), remove a
// queue or ask to be notified by it. A read never needs them: ipcs and lsipc
// read /proc/sysvipc, and the *ctl status commands stay allowed (ipcCtl).
// "ipc" is the one call that multiplexes all of them on the architectures
// that have it (32-bit x86, s390); its status commands go too, a price the
// rare reader on those machines pays for a filter that cannot err.
var ipcCalls = []string{
	"msgsnd", "msgrcv", "semop", "semtimedop", "shmat",
	"mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "ipc",
}

// uringCalls are io_uring's, whose submitted operations (socket, connect,
// sendmsg, setxattr…) never pass through this filter. No read needs them.
var uringCalls = []string{"io_uring_setup", "io_uring_enter", "io_uring_register"}

// System V IPC constants not in x/sys/unix.
const (
	ipcPrivate = 0     // IPC_PRIVATE: a key that always makes a new object
	ipcInfo    = 3     // IPC_INFO
	ipc64      = 0x100 // IPC_64, or'ed into a *ctl command by some C libraries
)

// ipcCtl are the *ctl system calls, the argument holding their command,
// and the commands that only report status (IPC_STAT, IPC_INFO, the *_STAT,
// *_STAT_ANY and *_INFO forms, and the semaphore GET* commands). Every
// other command (IPC_RMID, IPC_SET, SETVAL, SETALL, SHM_LOCK…) changes the
// object and is refused.
var ipcCtl = []struct {
	name  string
	arg   uint32
	reads []uint64
}{
	{"msgctl", 1, []uint64{unix.IPC_STAT, ipcInfo, 11, 12, 13}},                     // MSG_STAT, MSG_INFO, MSG_STAT_ANY
	{"shmctl", 1, []uint64{unix.IPC_STAT, ipcInfo, 13, 14, 15}},                     // SHM_STAT, SHM_INFO, SHM_STAT_ANY
	{"semctl", 2, []uint64{unix.IPC_STAT, ipcInfo, 11, 12, 13, 14, 15, 18, 19, 20}}, // GETPID… GETZCNT, SEM_STAT, SEM_INFO, SEM_STAT_ANY
}

// ipcGet are the *get calls, with the argument holding their flags: a get
// that looks an existing object up is a read, one that can create (the key
// IPC_PRIVATE, or IPC_CREAT) is not.
var ipcGet = []struct {
	name      string
	flagsArg  uint32
	createBit uint64
}{
	{"msgget", 1, unix.IPC_CREAT},
	{"semget", 2, unix.IPC_CREAT},
	{"shmget", 2, unix.IPC_CREAT},
}

// ipprotoMPTCP is multipath TCP, which Landlock's TCP rules do not see.
const ipprotoMPTCP = 262

// socketFamilies are the address families a confined command may open:
// unix sockets (local clients), IPv4 and IPv6 (TCP under Landlock's port
// rules, datagrams only when allowed) and netlink (ip, ss). Any other
// family (SCTP's is IPv4 too and is refused below; AF_SMC, AF_VSOCK,
// AF_TIPC, AF_RDS, AF_PACKET…) could reach the network past Landlock,
// which governs TCP only.
var socketFamilies = []uint64{unix.AF_UNIX, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}

// socketTypes are the IPv4 and IPv6 socket types allowed, with every
// combination of the flags or'ed into the type.
func socketTypes(datagrams bool) []uint64 {
	base := []uint64{unix.SOCK_STREAM}
	if datagrams {
		base = append(base, unix.SOCK_DGRAM)
	}
	var out []uint64
	for _, t := range base {
		for _, f := range []uint64{0, unix.SOCK_NONBLOCK, unix.SOCK_CLOEXEC, unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC} {
			out = append(out, t|f)
		}
	}
	return out
}

// notAnyOf is the conditions under which argument arg is none of values.
func notAnyOf(arg uint32, values ...uint64) seccomp.ArgumentConditions {
	var c seccomp.ArgumentConditions
	for _, v := range values {
		c = append(c, seccomp.Condition{Argument: arg, Operation: seccomp.NotEqual, Value: v})
	}
	return c
}

// seccompThread installs, on the calling thread only, the filters that make
// what Landlock does not guard fail with EPERM: metadataCalls, System V IPC
// and POSIX message queue changes, io_uring, socket families other than
// socketFamilies, IPv4 and IPv6 sockets other than TCP (and UDP or ICMP
// echo with datagrams), and TCP Fast Open, whose implicit connect in
// sendto and sendmsg may not pass Landlock's connect check. A first filter
// refuses every system call of another ABI than the native one (32-bit x86
// on a 64-bit kernel), which the second would otherwise let through
// unchecked. Everything else is allowed: Landlock and the dropped
// capabilities do the rest. no_new_privs must already be set.
func seccompThread(datagrams bool) error {
	info, err := arch.GetInfo("")
	if err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	if err := nativeABIOnly(info); err != nil {
		return err
	}
	has := func(n string) bool { _, ok := info.SyscallNames[n]; return ok }
	var names []string
	for _, group := range [][]string{metadataCalls, ipcCalls, uringCalls} {
		for _, n := range group {
			if has(n) { // the *at forms only, "ipc" only, on some architectures
				names = append(names, n)
			}
		}
	}
	var conds []seccomp.NameWithConditions
	add := func(name string, c ...seccomp.Condition) {
		if has(name) {
			conds = append(conds, seccomp.NameWithConditions{Name: name, Conditions: c})
		}
	}
	for _, c := range ipcCtl {
		var reads []uint64
		for _, r := range c.reads {
			reads = append(reads, r, r|ipc64)
		}
		add(c.name, notAnyOf(c.arg, reads...)...)
	}
	for _, g := range ipcGet {
		add(g.name, seccomp.Condition{Argument: 0, Operation: seccomp.Equal, Value: ipcPrivate})
		add(g.name, seccomp.Condition{Argument: g.flagsArg, Operation: seccomp.BitsSet, Value: g.createBit})
	}
	// mq_open may open a queue to read its status (mq_getattr), never
	// create it or open it to send or receive.
	add("mq_open", seccomp.Condition{Argument: 1, Operation: seccomp.BitsSet, Value: unix.O_CREAT | unix.O_WRONLY | unix.O_RDWR})

	add("socket", notAnyOf(0, socketFamilies...)...)
	for _, family := range []uint64{unix.AF_INET, unix.AF_INET6} {
		is := seccomp.Condition{Argument: 0, Operation: seccomp.Equal, Value: family}
		add("socket", append(seccomp.ArgumentConditions{is}, notAnyOf(1, socketTypes(datagrams)...)...)...)
		// Among the types left, a stream is TCP or nothing (not SCTP,
		// not MPTCP)...
		add("socket", append(seccomp.ArgumentConditions{is, {Argument: 1, Operation: seccomp.BitsSet, Value: unix.SOCK_STREAM}},
			notAnyOf(2, 0, unix.IPPROTO_TCP)...)...)
		if datagrams {
			// ... and a datagram UDP or ICMP echo (not UDP-Lite).
			add("socket", append(seccomp.ArgumentConditions{is, {Argument: 1, Operation: seccomp.BitsSet, Value: unix.SOCK_DGRAM}},
				notAnyOf(2, 0, unix.IPPROTO_UDP, unix.IPPROTO_ICMP, unix.IPPROTO_ICMPV6)...)...)
		}
	}
	add("sendto", seccomp.Condition{Argument: 3, Operation: seccomp.BitsSet, Value: unix.MSG_FASTOPEN})
	add("sendmsg", seccomp.Condition{Argument: 2, Operation: seccomp.BitsSet, Value: unix.MSG_FASTOPEN})
	add("sendmmsg", seccomp.Condition{Argument: 3, Operation: seccomp.BitsSet, Value: unix.MSG_FASTOPEN})

	filter := seccomp.Filter{Policy: seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: seccomp.ActionErrno, Names: names, NamesWithCondtions: conds},
		},
	}}
	if err := seccomp.LoadFilter(filter); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

// auditArchOffset is where struct seccomp_data holds the architecture.
const auditArchOffset = 4

// nativeABIOnly installs a filter that refuses, with ENOSYS, every system
// call made through another ABI than the native one: go-seccomp-bpf's
// filters let those through, and on x86-64 a 32-bit binary (or any code
// executing int 0x80) reaches chmod, ipc and socketcall that way.
func nativeABIOnly(info *arch.Info) error {
	prog, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: auditArchOffset, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
	})
	if err != nil {
		return fmt.Errorf("seccomp: native ABI filter: %w", err)
	}
	filter := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		filter[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("seccomp: native ABI filter: %w", errno)
	}
	return nil
}
