//go:build linux

package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// i386Chmod is a complete 32-bit x86 program: chmod("f", 0777) through int
// 0x80, then exit with the call's result as its status (0 done, 255 EPERM),
// and should exit be refused too, a breakpoint (SIGTRAP).
func i386Chmod() []byte {
	const base, hdr = 0x08048000, 52 + 32
	code := []byte{
		0xb8, 15, 0, 0, 0, // mov eax, 15 (chmod)
		0xbb, 0, 0, 0, 0, // mov ebx, path
		0xb9, 0xff, 0x01, 0, 0, // mov ecx, 0777
		0xcd, 0x80, // int 0x80
		0x89, 0xc3, // mov ebx, eax
		0xb8, 1, 0, 0, 0, // mov eax, 1 (exit)
		0xcd, 0x80, // int 0x80
		0xcc, // int3
		'f', 0,
	}
	binary.LittleEndian.PutUint32(code[6:], base+hdr+uint32(len(code))-2)
	size := uint32(hdr + len(code))
	le := binary.LittleEndian
	b := []byte{0x7f, 'E', 'L', 'F', 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	b = le.AppendUint16(b, 2)        // ET_EXEC
	b = le.AppendUint16(b, 3)        // EM_386
	b = le.AppendUint32(b, 1)        // EV_CURRENT
	b = le.AppendUint32(b, base+hdr) // entry
	b = le.AppendUint32(b, 52)       // program headers
	b = le.AppendUint32(b, 0)        // section headers
	b = le.AppendUint32(b, 0)        // flags
	b = le.AppendUint16(b, 52)       // header size
	b = le.AppendUint16(b, 32)       // program header size
	b = le.AppendUint16(b, 1)        // one program header
	b = le.AppendUint16(b, 40)       // section header size
	b = le.AppendUint16(b, 0)        // no sections
	b = le.AppendUint16(b, 0)        // no section names
	b = le.AppendUint32(b, 1)        // PT_LOAD
	b = le.AppendUint32(b, 0)        // from the file's start
	b = le.AppendUint32(b, base)     // virtual address
	b = le.AppendUint32(b, base)     // physical address
	b = le.AppendUint32(b, size)     // file size
	b = le.AppendUint32(b, size)     // memory size
	b = le.AppendUint32(b, 5)        // read and execute
	b = le.AppendUint32(b, 0x1000)   // alignment
	return append(b, code...)
}

// TestConfinedCannotUseAnotherABI: on x86-64, system calls made through
// the 32-bit ABI (int 0x80) reach the kernel under another architecture
// number, which a filter written for x86-64 does not match; the sandbox
// refuses them all, so chmod that way fails like chmod the native way.
func TestConfinedCannotUseAnotherABI(t *testing.T) {
	requireLandlock(t)
	if runtime.GOARCH != "amd64" {
		t.Logf("%s: the 32-bit x86 program cannot run here; only the mode check below applies", runtime.GOARCH)
	}
	dir := t.TempDir()
	prog, victim := filepath.Join(dir, "chmod32"), filepath.Join(dir, "f")
	if err := os.WriteFile(prog, i386Chmod(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(victim, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if runtime.GOARCH == "amd64" {
		c := exec.Command(prog)
		c.Dir = dir
		_, err := Start(c, Spec{TempDir: t.TempDir()})
		switch {
		case errors.Is(err, syscall.ENOEXEC):
			t.Logf("the kernel does not run 32-bit programs (%v): nothing to refuse", err)
		case err != nil:
			t.Fatal(err)
		default:
			_ = c.Wait()
			// Even exit is refused, so the program reaches its breakpoint.
			ws, _ := c.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != syscall.SIGTRAP {
				t.Errorf("the 32-bit chmod ended %v, want SIGTRAP: its system calls must all be refused", c.ProcessState)
			}
		}
	}
	if fi, err := os.Stat(victim); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("victim mode = %v (%v), want 0600", fi.Mode(), err)
	}
}

func init() {
	helpers["uring-helper"] = func([]string) int {
		var params [120]byte // struct io_uring_params
		fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
		if e != 0 {
			fmt.Println(int(e))
			return 0
		}
		unix.Close(int(fd))
		fmt.Println(0)
		return 0
	}
}

// TestConfinedCannotUseIOURing: io_uring's operations (socket, connect,
// setxattr…) do not pass through seccomp, so a confined command gets no
// ring at all.
func TestConfinedCannotUseIOURing(t *testing.T) {
	requireLandlock(t)
	c := exec.Command(os.Args[0], "uring-helper")
	var out strings.Builder
	c.Stdout = &out
	if _, err := Start(c, Spec{TempDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	_ = c.Wait()
	if got := strings.TrimSpace(out.String()); got != strconv.Itoa(int(unix.EPERM)) {
		t.Errorf("io_uring_setup in the sandbox: errno %q, want EPERM", got)
	}
}
