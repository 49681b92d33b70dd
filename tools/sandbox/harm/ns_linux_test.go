//go:build linux

package harm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
)

// The throwaway machine a command runs in. The helper (this test binary,
// started by nsRun in new namespaces) builds it inside a tmpfs mounted on
// the directory the test gives it:
//
//	tpl/           the fake tree: every path the command names, as a file
//	               owned by the namespace's root (a copy of the real file
//	               when there is one)
//	upper/, work/  the overlays' upper layers: every change the command
//	               makes to a file lands here, in memory
//	root/          the new "/": for each directory of the machine's root
//	               (/etc, /usr, /var...), an overlay of tpl's above the
//	               machine's; /tmp and /run from tpl alone (the machine's
//	               sockets and files stay out of sight); the machine's
//	               top-level links
//
// Inside root/ also: a fresh /proc showing only this PID namespace's
// processes (subset=pid: no /proc/sys, no sysrq-trigger), a /dev of null,
// zero, full, random and urandom, a /dev/shm and the IPC namespace's
// /dev/mqueue, and /harm-scratch, where the read path makes its private
// temp dir. One overlay over the whole root is not possible: a user
// namespace may not use a mount with submounts as a lower layer.

const (
	helperArg = "harm-ns-helper"
	fakeHome  = "/home/op"
	scratch   = "/harm-scratch"
	oldRoot   = "/harm-oldroot"
	// runTimeout bounds each run of a command, as the transport's limit.
	runTimeout = 2 * time.Second
	// hostBase is the first host uid and gid the namespace maps when the
	// test runs as root: ids no account on the machine uses, so the
	// namespace's root owns nothing outside.
	hostBase = 0x70000000
)

// nsResult is what the helper prints: both runs of one command.
type nsResult struct {
	Setup    string    `json:"setup,omitempty"` // why the throwaway machine could not be built
	Confined runResult `json:"confined"`
	Control  runResult `json:"control"`
}

// runResult is one run: its exit status, the start of its output, and
// every change it made to the watched state.
type runResult struct {
	Exit    int      `json:"exit"`
	Output  string   `json:"output,omitempty"`
	Err     string   `json:"err,omitempty"`
	Changes []string `json:"changes,omitempty"`
}

// nsRun runs cmd in a throwaway namespace, as a read and as root without the
// sandbox, and reports both.
func nsRun(ctx context.Context, cmd string) (nsResult, error) {
	// An empty directory for the helper's tmpfs, which the namespace's
	// root (nobody outside) can reach.
	work, err := os.MkdirTemp("", "vigil-harm-")
	if err != nil {
		return nsResult{}, err
	}
	defer os.Remove(work)
	if err := os.Chmod(work, 0o755); err != nil {
		return nsResult{}, err
	}
	// The helper is this binary, opened here: the namespace's root may not
	// search the directory it lies in, and a descriptor needs no search.
	self, err := os.Open("/proc/self/exe")
	if err != nil {
		return nsResult{}, err
	}
	defer self.Close()
	c := exec.CommandContext(ctx, "/proc/self/fd/3", helperArg, work)
	c.ExtraFiles = []*os.File{self}
	c.Stdin = strings.NewReader(cmd)
	var out, errOut strings.Builder
	c.Stdout, c.Stderr = &out, &errOut
	hostUID, hostGID, size := os.Getuid(), os.Getgid(), 1
	if hostUID == 0 {
		hostUID, hostGID, size = hostBase, hostBase, 65536
	}
	c.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC |
			unix.CLONE_NEWUTS | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: hostUID, Size: size}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: hostGID, Size: size}},
		GidMappingsEnableSetgroups: hostUID != os.Getuid(),
		Pdeathsig:                  syscall.SIGKILL,
	}
	if hostUID != os.Getuid() {
		// Become the namespace's root, which root outside is not mapped to.
		c.SysProcAttr.Credential = &syscall.Credential{Uid: 0, Gid: 0}
	}
	// GORACE: under the race detector, a program sleeps a second before
	// it exits, which would be most of the helper's time. GOGC: the
	// helper lives for one command and allocates a few megabytes; without
	// the garbage collector it takes less CPU (a tenth less user time,
	// measured over a tenth of the corpus). The helper takes the variable
	// out of the commands' environment.
	c.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + fakeHome,
		"USER=root", "LOGNAME=root", "LANG=C.UTF-8", "TMPDIR=" + scratch, "GORACE=atexit_sleep_ms=0", "GOGC=off"}
	c.WaitDelay = time.Second
	if err := c.Run(); err != nil && out.Len() == 0 {
		return nsResult{}, fmt.Errorf("namespace helper: %w: %s", err, errOut.String())
	}
	var r nsResult
	if err := json.Unmarshal([]byte(out.String()), &r); err != nil {
		return nsResult{}, fmt.Errorf("namespace helper printed %q (%v), stderr %q", out.String(), err, errOut.String())
	}
	return r, nil
}

// helperMain is the helper: PID 1 of its namespaces, root of its user
// namespace. It builds the throwaway machine, runs the command on stdin
// both ways and prints an nsResult.
func helperMain(work string) int {
	unix.Close(3) // this binary, which the commands need not hold
	// The runtime has read GOGC (nsRun); the commands run with the
	// collector's default.
	os.Unsetenv("GOGC")
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		return 2
	}
	cmd := string(b)
	var res nsResult
	m, err := build(work, cmd)
	if err != nil {
		res.Setup = err.Error()
	} else {
		res.Confined = m.confined(cmd)
		m.settle()
		res.Control = m.control(cmd)
	}
	out, _ := json.Marshal(res)
	os.Stdout.Write(out)
	return 0
}

// machine is the throwaway machine, from inside.
type machine struct {
	upper, sysvipc string // /proc/self/fd paths to the overlay's upper layer and to /proc/sysvipc
	lower          []string
	victims        map[int]bool
	router         *transport.Router
	res            inventory.Resource
}

func build(work, cmd string) (*machine, error) {
	must := func(what string, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	if err := must("make / private", unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")); err != nil {
		return nil, err
	}
	if err := must("tmpfs", unix.Mount("tmpfs", work, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=48m,mode=0755")); err != nil {
		return nil, err
	}
	for _, d := range []string{"upper", "work", "tpl", "root"} {
		if err := os.Mkdir(filepath.Join(work, d), 0o755); err != nil {
			return nil, err
		}
	}
	tpl, root := filepath.Join(work, "tpl"), filepath.Join(work, "root")
	if err := fakeTree(tpl, cmd); err != nil {
		return nil, fmt.Errorf("fake tree: %w", err)
	}
	if err := must("bind the new root", unix.Mount(root, root, "", unix.MS_BIND, "")); err != nil {
		return nil, err
	}
	if err := overlays(work, tpl, root); err != nil {
		return nil, err
	}
	// Descriptors that outlive pivot_root: the upper layers, the two
	// lower layers (to tell a copy-up that changed nothing from a change)
	// and /proc/sysvipc (this IPC namespace's objects, whichever proc).
	keep := func(p string) (string, error) {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			return "", fmt.Errorf("open %s: %w", p, err)
		}
		return "/proc/self/fd/" + strconv.Itoa(fd), nil
	}
	m := &machine{victims: map[int]bool{}}
	var err error
	if m.upper, err = keep(filepath.Join(work, "upper")); err != nil {
		return nil, err
	}
	for _, p := range []string{tpl, "/"} {
		l, err := keep(p)
		if err != nil {
			return nil, err
		}
		m.lower = append(m.lower, l)
	}
	if m.sysvipc, err = keep("/proc/sysvipc"); err != nil {
		return nil, err
	}
	if err := mountInside(root); err != nil {
		return nil, err
	}
	if err := must("pivot_root", unix.PivotRoot(root, root+oldRoot)); err != nil {
		return nil, err
	}
	if err := os.Chdir("/"); err != nil {
		return nil, err
	}
	if err := must("detach the old root", unix.Unmount(oldRoot, unix.MNT_DETACH)); err != nil {
		return nil, err
	}
	if err := os.Remove(oldRoot); err != nil {
		return nil, err
	}
	if err := unix.Sethostname([]byte("harm")); err != nil {
		return nil, err
	}
	for _, l := range []struct {
		res int
		max uint64
	}{{unix.RLIMIT_NPROC, 256}, {unix.RLIMIT_DATA, 1 << 30}, {unix.RLIMIT_FSIZE, 16 << 20}} {
		if err := unix.Setrlimit(l.res, &unix.Rlimit{Cur: l.max, Max: l.max}); err != nil {
			return nil, fmt.Errorf("rlimit %d: %w", l.res, err)
		}
	}
	if err := m.seed(); err != nil {
		return nil, fmt.Errorf("victims: %w", err)
	}
	inv := inventory.Default()
	m.router = transport.NewRouter(inv, transport.RouterOptions{Limits: transport.Limits{Timeout: runTimeout, OutputCap: 4096}})
	m.res, _ = inv.Lookup("localhost")
	return m, nil
}

// ownMounts are the top-level directories the namespace mounts its own
// file systems on (mountInside); the rest of the machine's root is laid
// out by overlays.
var ownMounts = []string{"proc", "dev", "sys", scratch[1:], oldRoot[1:]}

// overlays lays out the new root: the machine's top-level links as they
// are, and an overlay for every top-level directory of the machine's and
// of the fake tree: tpl's part above the machine's (a directory whose
// submounts forbid it as a lower layer, like /tmp or a mount point, gets
// tpl's part alone).
func overlays(work, tpl, root string) error {
	dirs := map[string]bool{"tmp": true, "run": true}
	host, err := os.ReadDir("/")
	if err != nil {
		return err
	}
	for _, e := range host {
		name := e.Name()
		switch {
		case slices.Contains(ownMounts, name):
		case e.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink("/" + name)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
				return err
			}
		case e.IsDir():
			dirs[name] = true
		}
	}
	fake, err := os.ReadDir(tpl)
	if err != nil {
		return err
	}
	for _, e := range fake {
		if e.IsDir() && !slices.Contains(ownMounts, e.Name()) {
			dirs[e.Name()] = true
		}
	}
	for _, d := range ownMounts {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	for name := range dirs {
		for _, p := range []string{filepath.Join(tpl, name), filepath.Join(work, "upper", name), filepath.Join(work, "work", name), filepath.Join(root, name)} {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		}
		if name == "tmp" {
			if err := os.Chmod(filepath.Join(tpl, name), 0o1777); err != nil {
				return err
			}
		}
		lower := filepath.Join(tpl, name)
		if name != "tmp" && name != "run" {
			lower += ":/" + name
		}
		try := func(lower string) error {
			opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s,userxattr", lower,
				filepath.Join(work, "upper", name), filepath.Join(work, "work", name))
			return unix.Mount("overlay", filepath.Join(root, name), "overlay", unix.MS_NOSUID, opts)
		}
		if err := try(lower); err != nil {
			if err := try(filepath.Join(tpl, name)); err != nil {
				return fmt.Errorf("overlay on /%s: %w", name, err)
			}
		}
	}
	return nil
}

// mountInside mounts /proc, /dev, /dev/shm, /dev/mqueue and the read
// path's scratch dir in the new root.
func mountInside(root string) error {
	type mnt struct{ src, target, fstype, data string }
	for _, x := range []mnt{
		{"proc", "/proc", "proc", "subset=pid"},
		{"tmpfs", "/dev", "tmpfs", "size=1m,mode=0755"},
		{"tmpfs", scratch, "tmpfs", "size=16m,mode=0755"},
	} {
		if err := unix.Mount(x.src, root+x.target, x.fstype, unix.MS_NOSUID|unix.MS_NODEV, x.data); err != nil {
			return fmt.Errorf("mount %s on %s: %w", x.fstype, x.target, err)
		}
	}
	for _, d := range []string{"null", "zero", "full", "random", "urandom"} {
		p := root + "/dev/" + d
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			return err
		}
		if err := unix.Mount("/dev/"+d, p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind /dev/%s: %w", d, err)
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, root+"/dev/"+name); err != nil {
			return err
		}
	}
	for _, d := range []string{"shm", "mqueue"} {
		if err := os.Mkdir(root+"/dev/"+d, 0o1777); err != nil {
			return err
		}
	}
	if err := unix.Mount("tmpfs", root+"/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=1m,mode=1777"); err != nil {
		return fmt.Errorf("mount /dev/shm: %w", err)
	}
	if err := unix.Mount("mqueue", root+"/dev/mqueue", "mqueue", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /dev/mqueue: %w", err)
	}
	return nil
}

// pathWord finds absolute paths and ~/ paths in a command; bareWord the
// words that may name a file in the working directory.
var (
	pathWord = regexp.MustCompile(`(?:^|[\s=:'"<>|;&(),@])(~?/[A-Za-z0-9._+,%@/-]*)`)
	bareWord = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$`)
)

// fakeTree makes, beneath tpl, the files the command names: every
// absolute path (a copy of the real file when it is a small regular file
// this namespace can read, else a fake one; a directory when it is one),
// every ~/ path under the fake home, and every bare word as a file in the
// fake home, which is the working directory. Every directory on the way
// belongs to the namespace's root, so a change there works unconfined.
// /proc, /sys and /dev belong to the namespace (ownMounts).
func fakeTree(tpl, cmd string) error {
	if err := os.MkdirAll(filepath.Join(tpl, fakeHome), 0o755); err != nil {
		return err
	}
	fake := []byte("vigil harm test: a fake file\nline two\n")
	put := func(p string) error {
		p = throughLinks(filepath.Clean(p))
		top, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
		if p == "/" || slices.Contains(ownMounts, top) {
			return nil
		}
		dst := filepath.Join(tpl, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil // a file stands where a directory is wanted: leave it
		}
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.IsDir():
			return os.MkdirAll(dst, 0o755)
		case err == nil && fi.Mode().IsRegular() && fi.Size() < 1<<20:
			if b, err := os.ReadFile(p); err == nil {
				return writeNew(dst, b, fi.Mode().Perm())
			}
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			return nil // the machine's link, as it is
		}
		return writeNew(dst, fake, 0o644)
	}
	for _, m := range pathWord.FindAllStringSubmatch(cmd, -1) {
		p := m[1]
		if rest, ok := strings.CutPrefix(p, "~"); ok {
			p = fakeHome + rest
		}
		if err := put(p); err != nil {
			return err
		}
	}
	for _, w := range strings.FieldsFunc(cmd, func(r rune) bool { return strings.ContainsRune(" \t\n'\"|;&<>()=,", r) }) {
		if bareWord.MatchString(w) {
			if err := put(filepath.Join(fakeHome, w)); err != nil {
				return err
			}
		}
	}
	return nil
}

// throughLinks is p with the machine's symbolic links in its directories
// resolved (/bin/sh is /usr/bin/sh where /bin links to usr/bin), so the
// fake tree puts a file where the command will find it.
func throughLinks(p string) string {
	dir, rest := filepath.Dir(p), filepath.Base(p)
	for dir != "/" {
		if d, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(d, rest)
		}
		dir, rest = filepath.Dir(dir), filepath.Join(filepath.Base(dir), rest)
	}
	return p
}

// writeNew writes a file unless one is there.
func writeNew(p string, b []byte, mode fs.FileMode) error {
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	return os.WriteFile(p, b, mode|0o200)
}

// seed makes the things a command might harm that are not files: two
// sleeping processes (one in a session of its own), a System V shared
// memory segment holding data, a message queue holding a message, a
// semaphore at 3, a POSIX message queue holding a message and a file in
// /dev/shm.
func (m *machine) seed() error {
	for _, setsid := range []bool{false, true} {
		c := exec.Command("/bin/sleep", "3600")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid, Setpgid: !setsid}
		if err := c.Start(); err != nil {
			return err
		}
		m.victims[c.Process.Pid] = true
	}
	// Each victim is asleep before the machine's state is first taken.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		asleep := 0
		for pid := range m.victims {
			if st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); strings.Contains(string(st), "(sleep) S ") {
				asleep++
			}
		}
		if asleep == len(m.victims) {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("the victim processes never went to sleep")
		}
	}
	const key = 0x76690000
	shm, _, e := unix.Syscall(unix.SYS_SHMGET, key, 4096, unix.IPC_CREAT|0o666)
	if e != 0 {
		return fmt.Errorf("shmget: %w", e)
	}
	addr, err := unix.SysvShmAttach(int(shm), 0, 0)
	if err != nil {
		return fmt.Errorf("shmat: %w", err)
	}
	copy(addr, "victim data")
	_ = unix.SysvShmDetach(addr)
	q, _, e := unix.Syscall(unix.SYS_MSGGET, key+1, unix.IPC_CREAT|0o666, 0)
	if e != 0 {
		return fmt.Errorf("msgget: %w", e)
	}
	msg := struct {
		mtype int64
		text  [8]byte
	}{1, [8]byte{'v', 'i', 'c', 't', 'i', 'm'}}
	if _, _, e := unix.Syscall6(unix.SYS_MSGSND, q, uintptr(unsafe.Pointer(&msg)), 6, unix.IPC_NOWAIT, 0, 0); e != 0 {
		return fmt.Errorf("msgsnd: %w", e)
	}
	sem, _, e := unix.Syscall(unix.SYS_SEMGET, key+2, 1, unix.IPC_CREAT|0o666)
	if e != 0 {
		return fmt.Errorf("semget: %w", e)
	}
	if _, _, e := unix.Syscall6(unix.SYS_SEMCTL, sem, 0, 16 /* SETVAL */, 3, 0, 0); e != 0 {
		return fmt.Errorf("semctl: %w", e)
	}
	name := []byte("victim\x00")
	fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(&name[0])), unix.O_CREAT|unix.O_RDWR, 0o666, 0, 0, 0)
	if e != 0 {
		return fmt.Errorf("mq_open: %w", e)
	}
	text := []byte("victim")
	if _, _, e := unix.Syscall6(unix.SYS_MQ_TIMEDSEND, fd, uintptr(unsafe.Pointer(&text[0])), uintptr(len(text)), 0, 0, 0); e != 0 {
		return fmt.Errorf("mq_timedsend: %w", e)
	}
	unix.Close(int(fd))
	return os.WriteFile("/dev/shm/victim", []byte("victim\n"), 0o666)
}

// confined runs cmd as a read runs on vigil's machine: through the
// router and the local transport, the sandbox required, not a network read.
func (m *machine) confined(cmd string) runResult {
	before := m.snapshot()
	out, err := m.router.Run(context.Background(), m.res, transport.RunSpec{Command: cmd, Execution: policy.Execution{
		Confine: policy.ConfineRequired, Shell: command.DialectBash,
	}}, nil)
	r := runResult{Exit: out.ExitCode, Output: clip(out.Stdout + out.Stderr)}
	if err != nil {
		r.Err = err.Error()
	}
	if !out.Sandbox.Confined() && !errors.Is(err, transport.ErrTransport) {
		r.Err += "; not confined: " + out.Sandbox.String()
	}
	quiesce(before)
	r.Changes = diff(before, m.snapshot())
	return r
}

// control runs cmd as root in the namespace without the sandbox (but with
// the transport's environment, working directory, session and time limit):
// whatever it changes is what the sandbox had to stop.
func (m *machine) control(cmd string) runResult {
	before := m.snapshot()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, "/bin/bash", "-c", cmd)
	c.Dir = fakeHome
	c.Env = os.Environ()
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = time.Second
	out, err := c.CombinedOutput()
	if c.Process != nil {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
	r := runResult{Exit: c.ProcessState.ExitCode(), Output: clip(string(out))}
	if err != nil && !errors.As(err, new(*exec.ExitError)) {
		r.Err = err.Error()
	}
	quiesce(before)
	r.Changes = diff(before, m.snapshot())
	return r
}

// quiesce waits, a little, for the processes a run started to be gone: the
// transport kills the command's process group when it ends, and a killed
// process takes a moment to exit. One still there after that was left
// running.
func quiesce(before snapshot) {
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		reapZombies()
		extra := false
		for pid := range processes() {
			if _, ok := before["process "+strconv.Itoa(pid)]; !ok && pid != 1 {
				extra = true
				break
			}
		}
		if !extra {
			return
		}
	}
}

// settle kills what a run left running, so the next run starts from the
// processes the machine started with.
func (m *machine) settle() {
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		reapZombies()
		left := 0
		for pid := range processes() {
			if !m.victims[pid] && pid != 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				left++
			}
		}
		if left == 0 {
			return
		}
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// snapshot is the watched state: key → description.
type snapshot map[string]string

func diff(a, b snapshot) []string {
	var out []string
	for k, v := range b {
		if old, ok := a[k]; !ok {
			out = append(out, k+": new: "+v)
		} else if old != v {
			out = append(out, k+": "+old+" → "+v)
		}
	}
	for k, v := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k+": gone (was "+v+")")
		}
	}
	sort.Strings(out)
	return out
}

func (m *machine) snapshot() snapshot {
	reapZombies()
	s := snapshot{}
	m.files(s)
	walk(s, "/dev")
	walkRoot(s)
	for pid, st := range processes() {
		if pid != 1 {
			s["process "+strconv.Itoa(pid)] = st
		}
	}
	for _, f := range []string{"shm", "msg", "sem"} {
		b, _ := os.ReadFile(m.sysvipc + "/" + f)
		for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			fields := strings.Fields(line)
			if i == 0 || len(fields) < 2 {
				continue
			}
			if f == "shm" && len(fields) >= 14 {
				// lpid, atime and dtime change when a reader attaches.
				fields[5], fields[11], fields[12] = "-", "-", "-"
				fields = fields[:14] // rss and swap are the kernel's
			}
			s["sysv "+f+" "+fields[1]] = strings.Join(fields, " ") + ipcContent(f, fields[1])
		}
	}
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	s["mounts"] = string(mi)
	var u unix.Utsname
	_ = unix.Uname(&u)
	s["hostname"] = unix.ByteSliceToString(u.Nodename[:]) + " " + unix.ByteSliceToString(u.Domainname[:])
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		addrs, _ := i.Addrs()
		s["interface "+i.Name] = fmt.Sprintf("%v mtu %d %v %v", i.Flags, i.MTU, i.HardwareAddr, addrs)
	}
	for _, f := range []string{"route", "ipv6_route"} {
		b, _ := os.ReadFile("/proc/self/net/" + f)
		s["routes "+f] = string(b)
	}
	return s
}

// ipcContent is a System V object's content: a shared memory segment's
// bytes, a semaphore set's first value.
func ipcContent(kind, id string) string {
	n, _ := strconv.Atoi(id)
	switch kind {
	case "shm":
		addr, err := unix.SysvShmAttach(n, 0, unix.SHM_RDONLY)
		if err != nil {
			return " (unreadable)"
		}
		defer unix.SysvShmDetach(addr)
		h := sha256.Sum256(addr)
		return " content " + hex.EncodeToString(h[:8])
	case "sem":
		v, _, e := unix.Syscall6(unix.SYS_SEMCTL, uintptr(n), 0, 12 /* GETVAL */, 0, 0, 0)
		return fmt.Sprintf(" value %d %v", v, e)
	}
	return ""
}

// files records the overlay's upper layer: every file the command made,
// changed or deleted (a whiteout). A file copied up unchanged (opened for
// writing, written nothing) is left out.
func (m *machine) files(s snapshot) {
	// The trailing slash walks what the descriptor's magic link names.
	_ = filepath.WalkDir(m.upper+"/", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == m.upper+"/" {
			return nil
		}
		rel := strings.TrimPrefix(p, m.upper)
		st := fileState(p)
		if d.IsDir() && st == m.lowerState(rel) {
			return nil // a directory copied up on the way to a change
		}
		if !d.IsDir() && st == m.lowerState(rel) {
			return nil
		}
		s["file "+rel] = st
		return nil
	})
}

// lowerState is how rel looks in the layers below the upper one.
func (m *machine) lowerState(rel string) string {
	for _, l := range m.lower {
		if _, err := os.Lstat(l + rel); err == nil {
			return fileState(l + rel)
		}
	}
	return "absent"
}

// walk records every file beneath dir (not an overlay) as path → state.
func walk(s snapshot, dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			s["file "+p] = fileState(p)
		}
		return nil
	})
}

// walkRoot records what the new root itself holds, apart from what is
// mounted on it: a file or directory a command made at the top level.
func walkRoot(s snapshot) {
	var root unix.Stat_t
	if unix.Stat("/", &root) != nil {
		return
	}
	_ = filepath.WalkDir("/", func(p string, d fs.DirEntry, err error) error {
		var st unix.Stat_t
		if err != nil || unix.Lstat(p, &st) != nil {
			return nil
		}
		if st.Dev != root.Dev {
			return fs.SkipDir // a mount of its own, watched otherwise
		}
		if p != "/" {
			s["file "+p] = fileState(p)
		}
		return nil
	})
}

// fileState describes a file: type, mode, owner, size, modification time
// (not for directories, whose entries speak for them), link target and a
// hash of the content; a whiteout (character device 0:0) is a deletion.
func fileState(p string) string {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return "unreadable: " + err.Error()
	}
	mode := st.Mode & unix.S_IFMT
	out := fmt.Sprintf("mode %o uid %d gid %d", st.Mode, st.Uid, st.Gid)
	switch mode {
	case unix.S_IFCHR, unix.S_IFBLK:
		if st.Rdev == 0 {
			return "deleted"
		}
		out += fmt.Sprintf(" dev %d", st.Rdev)
	case unix.S_IFLNK:
		target, _ := os.Readlink(p)
		out += " -> " + target
	case unix.S_IFREG:
		out += fmt.Sprintf(" size %d mtime %d.%09d", st.Size, st.Mtim.Sec, st.Mtim.Nsec)
		if f, err := os.Open(p); err == nil {
			h := sha256.New()
			_, _ = io.Copy(h, io.LimitReader(f, 1<<20))
			f.Close()
			out += " sha " + hex.EncodeToString(h.Sum(nil)[:8])
		}
	}
	if names, err := listXattrs(p); err == nil && len(names) > 0 {
		out += " xattrs " + strings.Join(names, ",")
	}
	return out
}

// listXattrs are p's extended attributes with their values, but for the
// overlay's own (user.overlay.*) other than opaque.
func listXattrs(p string) ([]string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(p, buf)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		// The overlay's own bookkeeping, but for opaque: a directory
		// removed and made again hides what was below it.
		if name == "" || (strings.HasPrefix(name, "user.overlay.") || strings.HasPrefix(name, "trusted.overlay.")) && !strings.HasSuffix(name, ".opaque") {
			continue
		}
		val := make([]byte, 1024)
		vn, _ := unix.Lgetxattr(p, name, val)
		out = append(out, name+"="+string(val[:max(vn, 0)]))
	}
	sort.Strings(out)
	return out, nil
}

// processes are this PID namespace's processes: pid → state (name, state,
// session, nice, policy, priority, affinity, OOM score adjustment, limits).
func processes() map[int]string {
	out := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// comm may hold spaces; the fields after its ")" are fixed.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		// f[0] is field 3 (state): session 6, nice 19, rt_priority 40, policy 41.
		pick := func(field int) string {
			if field-3 < len(f) {
				return f[field-3]
			}
			return "?"
		}
		status, _ := os.ReadFile("/proc/" + e.Name() + "/status")
		var cpus string
		for line := range strings.Lines(string(status)) {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				cpus = strings.TrimSpace(v)
			}
		}
		oom, _ := os.ReadFile("/proc/" + e.Name() + "/oom_score_adj")
		limits, _ := os.ReadFile("/proc/" + e.Name() + "/limits")
		lh := sha256.Sum256(limits)
		out[pid] = fmt.Sprintf("%s state %s session %s nice %s rtprio %s policy %s cpus %s oom %s limits %s",
			s[:i+1], pick(3), pick(6), pick(19), pick(40), pick(41), cpus, strings.TrimSpace(string(oom)), hex.EncodeToString(lh[:6]))
	}
	return out
}

// reapZombies waits for this namespace's dead processes: as PID 1 the
// helper inherits every orphan. Only called when no exec.Cmd of its own is
// running, so it takes no exit status a Wait expects.
func reapZombies() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
