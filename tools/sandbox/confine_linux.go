//go:build linux

package sandbox

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// keptCaps are the capabilities a confined command keeps when vigil runs
// with capabilities (as root): reading any file, nothing that changes.
var keptCaps = []int{unix.CAP_DAC_READ_SEARCH}

// presets are go-landlock's access sets per ABI, V1 to V6: what each ABI
// can restrict. V6 is everything this package asks for (V7 and later add
// only logging, or rights that would break reads: pathname unix sockets).
var presets = []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6}

// Access rights granted beneath a path.
const (
	readAccess  = llsys.AccessFSExecute | llsys.AccessFSReadFile | llsys.AccessFSReadDir
	sinkAccess  = llsys.AccessFSReadFile | llsys.AccessFSWriteFile | llsys.AccessFSTruncate
	writeAccess = readAccess | llsys.AccessFSWriteFile | llsys.AccessFSTruncate | llsys.AccessFSRefer | llsys.AccessFSRemoveDir |
		llsys.AccessFSRemoveFile | llsys.AccessFSMakeDir | llsys.AccessFSMakeReg | llsys.AccessFSMakeSym |
		llsys.AccessFSMakeFifo | llsys.AccessFSMakeSock
)

// sinks are the device files a confined command may write.
var sinks = []string{"/dev/null", "/dev/zero", "/dev/full"}

// ABI is the Landlock ABI this kernel enforces, 0 without Landlock. An ABI
// of 6 or more whose signal scoping is known broken (not fixed per the
// kernel's errata) counts as 5, as go-landlock treats it.
func ABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	if v >= 6 {
		errata, err := llsys.LandlockGetErrata()
		if err != nil || errata&0x2 == 0 {
			v = 5
		}
	}
	return v
}

// Start starts c (not yet started; an absolute Path) confined as s says,
// and reports what applied. It confines a fresh OS thread and starts c from
// it; the thread is never unlocked, so the Go runtime ends it with its
// goroutine and nothing else in the process runs restricted. With
// s.BestEffort a confinement the kernel cannot give is reported, not an
// error; otherwise Start refuses and c does not start.
func Start(c *exec.Cmd, s Spec) (Report, error) {
	type started struct {
		rep Report
		err error
	}
	done := make(chan started, 1)
	var confineAndStart func()
	confineAndStart = func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			// The main thread cannot end with its goroutine (the runtime
			// would park it for good, confined). Hold it, so the retry
			// lands on another thread, then give it back untouched.
			retried := make(chan struct{})
			go func() { confineAndStart(); close(retried) }()
			<-retried
			runtime.UnlockOSThread()
			return
		}
		// No UnlockOSThread: this thread's credentials are spent.
		rep, err := confineThread(s)
		if err != nil {
			done <- started{err: err}
			return
		}
		done <- started{rep: rep, err: c.Start()}
	}
	go confineAndStart()
	r := <-done
	return r.rep, r.err
}

// confineThread restricts the calling thread, which must be locked and
// never reused: capabilities, no_new_privs and Landlock.
func confineThread(s Spec) (Report, error) {
	if !filepath.IsAbs(s.TempDir) {
		return Report{}, fmt.Errorf("%w: temp dir %q is not an absolute path", ErrRefused, s.TempDir)
	}
	if err := checkPorts(s.Ports); err != nil {
		return Report{}, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	dropped, capErr := dropCaps()
	if capErr != nil && !s.BestEffort {
		return Report{}, fmt.Errorf("%w: %w", ErrRefused, capErr)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return Report{}, fmt.Errorf("%w: set no_new_privs: %w", ErrRefused, err)
	}
	abi := ABI()
	switch {
	case abi < MinABI && !s.BestEffort:
		return Report{}, fmt.Errorf("%w: the kernel offers Landlock ABI %d, the read sandbox needs %d or later", ErrRefused, abi, MinABI)
	case abi == 0:
		return Report{CapsDropped: dropped, Note: "the kernel offers no Landlock"}, nil
	}
	if err := seccompThread(s.Datagrams); err != nil {
		if !s.BestEffort {
			return Report{}, fmt.Errorf("%w: %w", ErrRefused, err)
		}
		capErr = errors.Join(capErr, err) // reported as a note below
	}
	if err := landlockThread(abi, s); err != nil {
		if !s.BestEffort {
			return Report{}, fmt.Errorf("%w: %w", ErrRefused, err)
		}
		return Report{CapsDropped: dropped, Note: err.Error()}, nil
	}
	rep := Report{Confined: true, ABI: min(abi, 7), CapsDropped: dropped}
	var notes []string
	if abi < MinABI {
		notes = append(notes, fmt.Sprintf("partial: ABI %d does not scope signals and abstract sockets", abi))
		if abi < 4 {
			notes = append(notes, "nor TCP")
		}
	}
	if capErr != nil {
		notes = append(notes, strings.ReplaceAll(capErr.Error(), "\n", ", "))
	}
	rep.Note = strings.Join(notes, ", ")
	return rep, nil
}

// landlockThread enforces the ruleset on the calling thread only.
func landlockThread(abi int, s Spec) error {
	cfg := presets[min(abi, len(presets))-1]
	handledFS := uint64(cfg.HandledAccessFS)
	// Bind and connect are both handled: bind has no rule, so it is
	// refused; connect is allowed to the listed ports only.
	handledNet := uint64(cfg.HandledAccessNet)
	attr := llsys.RulesetAttr{HandledAccessFS: handledFS, HandledAccessNet: handledNet, Scoped: uint64(cfg.Scoped)}
	fd, err := llsys.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("landlock: create ruleset: %w", err)
	}
	defer unix.Close(fd)
	allow := func(path string, access uint64, optional bool) error {
		pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if optional && errors.Is(err, unix.ENOENT) {
				return nil
			}
			return fmt.Errorf("landlock: open %s: %w", path, err)
		}
		defer unix.Close(pfd)
		rule := llsys.PathBeneathAttr{AllowedAccess: access & handledFS, ParentFd: pfd}
		if err := llsys.LandlockAddPathBeneathRule(fd, &rule, 0); err != nil {
			return fmt.Errorf("landlock: allow %s: %w", path, err)
		}
		return nil
	}
	if err := allow("/", readAccess, false); err != nil {
		return err
	}
	for _, p := range sinks {
		if err := allow(p, sinkAccess, true); err != nil {
			return err
		}
	}
	if err := allow(s.TempDir, writeAccess, false); err != nil {
		return err
	}
	if handledNet&llsys.AccessNetConnectTCP != 0 {
		for _, p := range s.Ports {
			rule := llsys.NetPortAttr{AllowedAccess: llsys.AccessNetConnectTCP, Port: uint64(p)}
			if err := llsys.LandlockAddNetPortRule(fd, &rule, 0); err != nil {
				return fmt.Errorf("landlock: allow TCP connect to port %d: %w", p, err)
			}
		}
	}
	if err := llsys.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("landlock: restrict: %w", err)
	}
	return nil
}

// dropCaps leaves the thread, and whatever it starts, with keptCaps at
// most: out of the bounding set (which bounds what an exec as root gets
// back), the permitted, effective and inheritable sets, and the ambient
// set. It reports whether there was anything to drop. A thread without
// capabilities makes no call that changes them (a seccomp filter may
// forbid capset, and there is nothing to do).
func dropCaps() (bool, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false, fmt.Errorf("read capabilities: %w", err)
	}
	var keep [2]uint32
	for _, c := range keptCaps {
		keep[c/32] |= 1 << (c % 32)
	}
	kept := func(c int) bool { return keep[c/32]&(1<<(c%32)) != 0 }
	// The bounding set matters to root only: exec as root gets it back.
	var bound []int
	if os.Geteuid() == 0 {
		for c := 0; c < 64; c++ {
			in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
			if err != nil {
				break // past the last capability this kernel knows
			}
			if in == 1 && !kept(c) {
				bound = append(bound, c)
			}
		}
	}
	held := data[0].Permitted|data[1].Permitted != 0
	if !held && len(bound) == 0 {
		return false, nil
	}
	var errs []error
	if len(bound) > 0 {
		if data[0].Effective&(1<<unix.CAP_SETPCAP) == 0 {
			errs = append(errs, errors.New("capabilities not dropped: root without CAP_SETPCAP keeps its bounding set"))
		} else {
			for _, c := range bound {
				if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
					errs = append(errs, fmt.Errorf("drop capability %d from the bounding set: %w", c, err))
				}
			}
		}
	}
	if held {
		if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
			errs = append(errs, fmt.Errorf("clear ambient capabilities: %w", err))
		}
		for i := range data {
			data[i].Effective &= keep[i]
			data[i].Permitted &= keep[i]
			data[i].Inheritable &= keep[i]
		}
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			errs = append(errs, fmt.Errorf("set capabilities: %w", err))
		}
	}
	return true, errors.Join(errs...)
}

// Main is `vigil sandbox-exec [--connect PORTS] [--datagrams]
// [--best-effort] [--shell PATH] --tmp DIR -- COMMAND`: it confines itself
// as Start would confine a read and executes the shell with the command, so
// an operator can see what a read may do. It returns only when that fails,
// with the exit status to use.
func Main(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet(Subcommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	shell := fs.String("shell", "/bin/sh", "absolute path of the shell that runs the command with -c")
	var s Spec
	fs.StringVar(&s.TempDir, "tmp", "", "the only directory the command may write (required)")
	connect := fs.String("connect", "", "comma-separated TCP ports the command may connect to (default none)")
	fs.BoolVar(&s.Datagrams, "datagrams", false, "allow UDP and ICMP echo sockets (DNS), to any address")
	fs.BoolVar(&s.BestEffort, "best-effort", false, "run with whatever the kernel offers")
	verbose := fs.Bool("v", false, "say what confinement applied on stderr")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || s.TempDir == "" || !filepath.IsAbs(*shell) {
		fmt.Fprintf(stderr, "usage: vigil %s [--connect PORT,...] [--datagrams] [--best-effort] [--shell /bin/bash] --tmp DIR -- 'COMMAND'\n", Subcommand)
		return 2
	}
	var err error
	if s.Ports, err = ParsePorts(*connect); err != nil {
		fmt.Fprintf(stderr, "sandbox: --connect: %v\n", err)
		return 2
	}
	// Confine this thread and execute the shell from it.
	runtime.LockOSThread()
	rep, err := confineThread(s)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 126
	}
	if *verbose {
		fmt.Fprintf(stderr, "sandbox: %+v\n", rep)
	}
	err = syscall.Exec(*shell, []string{filepath.Base(*shell), "-c", fs.Arg(0)}, append(os.Environ(), "TMPDIR="+s.TempDir))
	fmt.Fprintf(stderr, "sandbox: exec %s: %v\n", *shell, err)
	return 127
}
