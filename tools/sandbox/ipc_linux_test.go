//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// System V IPC and POSIX message queue commands the tests use that x/sys/unix
// does not name.
const (
	getVal  = 12 // GETVAL
	setVal  = 16 // SETVAL
	shmLock = 11 // SHM_LOCK
)

func init() { helpers["ipc-helper"] = ipcHelper }

// sys makes a raw system call and returns its errno (0 on success) and
// result.
func sys(nr uintptr, a ...uintptr) (uintptr, unix.Errno) {
	var args [6]uintptr
	copy(args[:], a)
	r, _, e := unix.Syscall6(nr, args[0], args[1], args[2], args[3], args[4], args[5])
	return r, e
}

func cstr(s string) uintptr {
	b := append([]byte(s), 0)
	return uintptr(unsafe.Pointer(&b[0]))
}

// ipcObjects are System V objects and a POSIX queue made outside the
// sandbox, by the test, each holding something a change would alter.
type ipcObjects struct {
	key                 int // the base of the System V keys
	shmid, msqid, semid int
	mq                  string // POSIX queue name as the system call takes it: no leading "/"
}

func (o ipcObjects) args() []string {
	return []string{strconv.Itoa(o.key), strconv.Itoa(o.shmid), strconv.Itoa(o.msqid), strconv.Itoa(o.semid), o.mq}
}

// ipcAttempt is one system call a confined command tries on ipcObjects.
type ipcAttempt struct {
	name string
	call func(o ipcObjects) unix.Errno
}

// msgbuf is a System V message: its type, then its text.
type msgbuf struct {
	mtype int64
	mtext [64]byte
}

// ipcChanges change an object or make one; every one must be refused.
var ipcChanges = []ipcAttempt{
	{"shmget IPC_PRIVATE", func(o ipcObjects) unix.Errno {
		_, e := sys(unix.SYS_SHMGET, 0, 4096, 0o600)
		return e
	}},
	{"shmget IPC_CREAT", func(o ipcObjects) unix.Errno {
		_, e := sys(unix.SYS_SHMGET, uintptr(o.key+10), 4096, unix.IPC_CREAT|0o600)
		return e
	}},
	{"shmat read-only", func(o ipcObjects) unix.Errno {
		_, e := sys(unix.SYS_SHMAT, uintptr(o.shmid), 0, unix.SHM_RDONLY)
		return e
	}},
	{"shmat", func(o ipcObjects) unix.Errno { _, e := sys(unix.SYS_SHMAT, uintptr(o.shmid), 0, 0); return e }},
	{"shmctl IPC_RMID", func(o ipcObjects) unix.Errno {
		_, e := sys(unix.SYS_SHMCTL, uintptr(o.shmid), unix.IPC_RMID, 0)
		return e
	}},
	{"shmctl IPC_SET", func(o ipcObjects) unix.Errno {
		var buf [512]byte
		if _, e := sys(unix.SYS_SHMCTL, uintptr(o.shmid), unix.IPC_STAT, uintptr(unsafe.Pointer(&buf[0]))); e != 0 {
			return e
		}
		_, e := sys(unix.SYS_SHMCTL, uintptr(o.shmid), unix.IPC_SET, uintptr(unsafe.Pointer(&buf[0])))
		return e
	}},
	{"shmctl SHM_LOCK", func(o ipcObjects) unix.Errno {
		_, e := sys(unix.SYS_SHMCTL, uintptr(o.shmid), shmLock, 0)
		return e
	}},
	{"msgget IPC_PRIVATE", func(o ipcObjects) unix.Errno { _, e := sys(unix.SYS_MSGGET, 0, 0o600); return e }},
	{"msgget IPC_CREAT", func(o ipcObjects) unix.Errno {
		_, e := sys(unix.SYS_MSGGET, uintptr(o.key+11), unix.IPC_CREAT|0o600)
		return e
	}},
	{"msgsnd", func(o ipcObjects) unix.Errno {
		m := msgbuf{mtype: 1}
		_, e := sys(unix.SYS_MSGSND, uintptr(o.msqid), uintptr(unsafe.Pointer(&m)), 1, unix.IPC_NOWAIT)
		return e
	}},
	{"msgrcv", func(o ipcObjects) unix.Errno {
		var m msgbuf
		_, e := sys(unix.SYS_MSGRCV, uintptr(o.msqid), uintptr(unsafe.Pointer(&m)), uintptr(len(m.mtext)), 0, unix.IPC_NOWAIT)
		return e
	}},
	{"msgctl IPC_RMID", func(o ipcObjects) unix.Errno {
		_, e := sys(unix.SYS_MSGCTL, uintptr(o.msqid), unix.IPC_RMID, 0)
		return e
	}},
	{"semget IPC_PRIVATE", func(o ipcObjects) unix.Errno { _, e := sys(unix.SYS_SEMGET, 0, 1, 0o600); return e }},
	{"semget IPC_CREAT", func(o ipcObjects) unix.Errno {
		_, e := sys(unix.SYS_SEMGET, uintptr(o.key+12), 1, unix.IPC_CREAT|0o600)
		return e
	}},
	{"semop", func(o ipcObjects) unix.Errno {
		op := [3]int16{0, -1, unix.IPC_NOWAIT} // sem_num, sem_op, sem_flg
		_, e := sys(unix.SYS_SEMOP, uintptr(o.semid), uintptr(unsafe.Pointer(&op[0])), 1)
		return e
	}},
	{"semtimedop", func(o ipcObjects) unix.Errno {
		op := [3]int16{0, -1, unix.IPC_NOWAIT}
		_, e := sys(unix.SYS_SEMTIMEDOP, uintptr(o.semid), uintptr(unsafe.Pointer(&op[0])), 1, 0)
		return e
	}},
	{"semctl SETVAL", func(o ipcObjects) unix.Errno {
		_, e := sys(unix.SYS_SEMCTL, uintptr(o.semid), 0, setVal, 0)
		return e
	}},
	{"semctl IPC_RMID", func(o ipcObjects) unix.Errno {
		_, e := sys(unix.SYS_SEMCTL, uintptr(o.semid), 0, unix.IPC_RMID, 0)
		return e
	}},
	{"mq_open O_CREAT", func(o ipcObjects) unix.Errno {
		_, e := sys(unix.SYS_MQ_OPEN, cstr(o.mq+"-new"), unix.O_CREAT|unix.O_RDONLY, 0o600, 0)
		return e
	}},
	{"mq_open O_WRONLY", func(o ipcObjects) unix.Errno {
		_, e := sys(unix.SYS_MQ_OPEN, cstr(o.mq), unix.O_WRONLY, 0, 0)
		return e
	}},
	{"mq_timedreceive", func(o ipcObjects) unix.Errno {
		fd, e := sys(unix.SYS_MQ_OPEN, cstr(o.mq), unix.O_RDONLY|unix.O_NONBLOCK, 0, 0)
		if e != 0 {
			return e
		}
		defer unix.Close(int(fd))
		var buf [8192]byte
		_, e = sys(unix.SYS_MQ_TIMEDRECEIVE, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
		return e
	}},
	{"mq_notify", func(o ipcObjects) unix.Errno {
		fd, e := sys(unix.SYS_MQ_OPEN, cstr(o.mq), unix.O_RDONLY, 0, 0)
		if e != 0 {
			return e
		}
		defer unix.Close(int(fd))
		_, e = sys(unix.SYS_MQ_NOTIFY, fd, 0)
		return e
	}},
	{"mq_unlink", func(o ipcObjects) unix.Errno { _, e := sys(unix.SYS_MQ_UNLINK, cstr(o.mq)); return e }},
}

// ipcReads only look; every one must still work.
var ipcReads = []ipcAttempt{
	{"shmget lookup", func(o ipcObjects) unix.Errno { _, e := sys(unix.SYS_SHMGET, uintptr(o.key), 0, 0); return e }},
	{"shmctl IPC_STAT", func(o ipcObjects) unix.Errno {
		var buf [512]byte
		_, e := sys(unix.SYS_SHMCTL, uintptr(o.shmid), unix.IPC_STAT, uintptr(unsafe.Pointer(&buf[0])))
		return e
	}},
	{"msgget lookup", func(o ipcObjects) unix.Errno { _, e := sys(unix.SYS_MSGGET, uintptr(o.key+1), 0); return e }},
	{"msgctl IPC_STAT", func(o ipcObjects) unix.Errno {
		var buf [512]byte
		_, e := sys(unix.SYS_MSGCTL, uintptr(o.msqid), unix.IPC_STAT, uintptr(unsafe.Pointer(&buf[0])))
		return e
	}},
	{"semget lookup", func(o ipcObjects) unix.Errno { _, e := sys(unix.SYS_SEMGET, uintptr(o.key+2), 0, 0); return e }},
	{"semctl GETVAL", func(o ipcObjects) unix.Errno { _, e := sys(unix.SYS_SEMCTL, uintptr(o.semid), 0, getVal); return e }},
}

// ipcHelper runs inside the sandbox: every attempt on the objects named by
// args, one line each, "name: errno" (0 for success).
func ipcHelper(args []string) int {
	var o ipcObjects
	o.key, _ = strconv.Atoi(args[0])
	o.shmid, _ = strconv.Atoi(args[1])
	o.msqid, _ = strconv.Atoi(args[2])
	o.semid, _ = strconv.Atoi(args[3])
	o.mq = args[4]
	for _, a := range append(append([]ipcAttempt(nil), ipcReads...), ipcChanges...) {
		fmt.Printf("%s: %d\n", a.name, int(a.call(o)))
	}
	return 0
}

// makeIPCObjects creates, outside any sandbox, a shared memory segment, a
// message queue holding one message, a semaphore set at 3 and a POSIX queue
// holding one message, and removes them when the test ends.
func makeIPCObjects(t *testing.T) ipcObjects {
	t.Helper()
	o := ipcObjects{key: 0x56490000 + (os.Getpid()&0xfff)<<4, mq: fmt.Sprintf("vigil-sandbox-test-%d", os.Getpid())}
	var e unix.Errno
	var r uintptr
	if r, e = sys(unix.SYS_SHMGET, uintptr(o.key), 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600); e != 0 {
		t.Fatalf("shmget: %v", e)
	}
	o.shmid = int(r)
	t.Cleanup(func() { sys(unix.SYS_SHMCTL, uintptr(o.shmid), unix.IPC_RMID, 0) })
	if r, e = sys(unix.SYS_MSGGET, uintptr(o.key+1), unix.IPC_CREAT|unix.IPC_EXCL|0o600); e != 0 {
		t.Fatalf("msgget: %v", e)
	}
	o.msqid = int(r)
	t.Cleanup(func() { sys(unix.SYS_MSGCTL, uintptr(o.msqid), unix.IPC_RMID, 0) })
	m := msgbuf{mtype: 1, mtext: [64]byte{'k', 'e', 'e', 'p'}}
	if _, e = sys(unix.SYS_MSGSND, uintptr(o.msqid), uintptr(unsafe.Pointer(&m)), 4, unix.IPC_NOWAIT); e != 0 {
		t.Fatalf("msgsnd: %v", e)
	}
	if r, e = sys(unix.SYS_SEMGET, uintptr(o.key+2), 1, unix.IPC_CREAT|unix.IPC_EXCL|0o600); e != 0 {
		t.Fatalf("semget: %v", e)
	}
	o.semid = int(r)
	t.Cleanup(func() { sys(unix.SYS_SEMCTL, uintptr(o.semid), 0, unix.IPC_RMID, 0) })
	if _, e = sys(unix.SYS_SEMCTL, uintptr(o.semid), 0, setVal, 3); e != 0 {
		t.Fatalf("semctl SETVAL: %v", e)
	}
	fd, e := sys(unix.SYS_MQ_OPEN, cstr(o.mq), unix.O_CREAT|unix.O_EXCL|unix.O_RDWR, 0o600, 0)
	if e != 0 {
		t.Fatalf("mq_open: %v", e)
	}
	t.Cleanup(func() { sys(unix.SYS_MQ_UNLINK, cstr(o.mq)); sys(unix.SYS_MQ_UNLINK, cstr(o.mq+"-new")) })
	defer unix.Close(int(fd))
	if _, e = sys(unix.SYS_MQ_TIMEDSEND, fd, cstr("keep"), 4, 0, 0); e != 0 {
		t.Fatalf("mq_timedsend: %v", e)
	}
	return o
}

// intact reports what changed in o since makeIPCObjects.
func (o ipcObjects) intact() []string {
	var bad []string
	var buf [512]byte
	if _, e := sys(unix.SYS_SHMCTL, uintptr(o.shmid), unix.IPC_STAT, uintptr(unsafe.Pointer(&buf[0]))); e != 0 {
		bad = append(bad, fmt.Sprintf("the shared memory segment is gone: %v", e))
	}
	if n, ok := sysvField("/proc/sysvipc/msg", o.msqid, 4); !ok || n != "1" { // qnum
		bad = append(bad, fmt.Sprintf("the message queue holds %q messages (present %v), want 1", n, ok))
	}
	if v, e := sys(unix.SYS_SEMCTL, uintptr(o.semid), 0, getVal); e != 0 || v != 3 {
		bad = append(bad, fmt.Sprintf("the semaphore is %d (%v), want 3", v, e))
	}
	fd, e := sys(unix.SYS_MQ_OPEN, cstr(o.mq), unix.O_RDONLY, 0, 0)
	if e != 0 {
		return append(bad, fmt.Sprintf("the POSIX queue is gone: %v", e))
	}
	defer unix.Close(int(fd))
	var attr [8]int64 // mq_flags, mq_maxmsg, mq_msgsize, mq_curmsgs
	if _, e := sys(unix.SYS_MQ_GETSETATTR, fd, 0, uintptr(unsafe.Pointer(&attr[0]))); e != 0 || attr[3] != 1 {
		bad = append(bad, fmt.Sprintf("the POSIX queue holds %d messages (%v), want 1", attr[3], e))
	}
	if fd, e := sys(unix.SYS_MQ_OPEN, cstr(o.mq+"-new"), unix.O_RDONLY, 0, 0); e == 0 {
		unix.Close(int(fd))
		bad = append(bad, "a new POSIX queue was created")
	}
	return bad
}

// sysvField is the field-th column of the line for id in a /proc/sysvipc
// file (columns: key, id, perms, ...).
func sysvField(path string, id, field int) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) > field && f[1] == strconv.Itoa(id) {
			return f[field], true
		}
	}
	return "", false
}

// TestConfinedCannotChangeIPC: a confined command can remove, change or
// use no System V IPC object or POSIX message queue made outside, nor make
// one, and can still look at them (ipcs).
func TestConfinedCannotChangeIPC(t *testing.T) {
	requireLandlock(t)
	o := makeIPCObjects(t)
	c := exec.Command(os.Args[0], append([]string{"ipc-helper"}, o.args()...)...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if _, err := Start(c, Spec{TempDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	_ = c.Wait()
	got := map[string]string{}
	for line := range strings.Lines(out.String()) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
		got[k] = v
	}
	// seccomp refuses with EPERM. Landlock refuses opening a POSIX queue
	// at all (EACCES: the queues' file system is no path beneath "/"), but
	// not mq_unlink, which never opens one.
	eperm, eacces := strconv.Itoa(int(unix.EPERM)), strconv.Itoa(int(unix.EACCES))
	for _, a := range ipcChanges {
		if got[a.name] != eperm && !(strings.HasPrefix(a.name, "mq_") && got[a.name] == eacces) {
			t.Errorf("%s: errno %q, want EPERM (%s)", a.name, got[a.name], eperm)
		}
	}
	for _, a := range ipcReads {
		if got[a.name] != "0" {
			t.Errorf("%s: errno %q, want success", a.name, got[a.name])
		}
	}
	for _, b := range o.intact() {
		t.Error(b)
	}

	// The same through the util-linux tools a read or a mistaken write
	// would use.
	for _, cmd := range []string{"ipcrm -m " + strconv.Itoa(o.shmid), "ipcrm -q " + strconv.Itoa(o.msqid), "ipcrm -s " + strconv.Itoa(o.semid),
		"ipcmk -Q", "ipcmk -M 4096", "ipcmk -S 1"} {
		// ipcrm says "permission denied" for EPERM.
		if r := run(t, cmd, Spec{}); r.exit == 0 || !strings.Contains(r.out, "Operation not permitted") && !strings.Contains(r.out, "permission denied") {
			t.Errorf("%s: exit %d, %q; want EPERM", cmd, r.exit, r.out)
		}
	}
	if r := run(t, "ipcs -m", Spec{}); r.exit != 0 || !strings.Contains(r.out, strconv.Itoa(o.shmid)) {
		t.Errorf("ipcs -m: exit %d, %q; want the segment listed", r.exit, r.out)
	}
	for _, b := range o.intact() {
		t.Error("after the tools: " + b)
	}
}
