//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func init() { helpers["net-helper"] = netHelper }

// netHelper runs inside the sandbox: each argument is one attempt,
// "kind:address", and it prints "kind address: ok" or the error.
//
//	listen        listen on TCP (plain and multipath) on 127.0.0.1:0
//	tcp:ADDR      dial TCP
//	mptcp:ADDR    open a multipath TCP socket and connect it
//	tfo:ADDR      connect with TCP Fast Open (sendto with MSG_FASTOPEN)
//	tfomsg:ADDR   the same with sendmsg
//	tfoconn:ADDR  the same with TCP_FASTOPEN_CONNECT and connect
//	sctp:ADDR     open an SCTP socket and connect it
//	udp:ADDR      send a UDP datagram
//	family:N      open a socket of address family N
func netHelper(args []string) int {
	for _, a := range args {
		kind, addr, _ := strings.Cut(a, ":")
		fmt.Printf("%s %s: %s\n", kind, addr, errText(netAttempt(kind, addr)))
	}
	return 0
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func netAttempt(kind, addr string) error {
	switch kind {
	case "listen":
		for _, mp := range []bool{false, true} {
			lc := net.ListenConfig{}
			lc.SetMultipathTCP(mp)
			ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			ln.Close()
		}
		return nil
	case "tcp":
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	case "udp":
		c, err := net.Dial("udp", addr)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Write([]byte("u"))
		return err
	}
	if kind == "family" {
		n, _ := strconv.Atoi(addr)
		fd, err := unix.Socket(n, unix.SOCK_SEQPACKET, 0)
		if err == unix.EPROTOTYPE || err == unix.ESOCKTNOSUPPORT || err == unix.EPROTONOSUPPORT {
			fd, err = unix.Socket(n, unix.SOCK_STREAM, 0)
		}
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return err
	}
	sa := &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	proto := map[string]int{"mptcp": ipprotoMPTCP, "sctp": unix.IPPROTO_SCTP}[kind]
	typ := unix.SOCK_STREAM
	if kind == "sctp" {
		typ = unix.SOCK_SEQPACKET
	}
	fd, err := unix.Socket(unix.AF_INET, typ, proto)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	switch kind {
	case "tfo":
		return unix.Sendto(fd, []byte("f"), unix.MSG_FASTOPEN, sa)
	case "tfomsg":
		_, err := unix.SendmsgN(fd, []byte("f"), nil, sa, unix.MSG_FASTOPEN)
		return err
	case "tfoconn":
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_FASTOPEN_CONNECT, 1); err != nil {
			return fmt.Errorf("setsockopt: %w", err)
		}
	}
	return unix.Connect(fd, sa)
}

// countingListener accepts TCP connections on loopback and counts those
// that are not the test's own sentinel (which says "s" first).
type countingListener struct {
	ln       net.Listener
	accepted atomic.Int32
	sentinel chan struct{}
}

func newCountingListener(t *testing.T) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	l := &countingListener{ln: ln, sentinel: make(chan struct{}, 1)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var b [1]byte
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, _ := c.Read(b[:]); n == 1 && b[0] == 's' {
				l.sentinel <- struct{}{}
			} else {
				l.accepted.Add(1)
			}
			c.Close()
		}
	}()
	return l
}

func (l *countingListener) addr() string { return l.ln.Addr().String() }

func (l *countingListener) port() int { return l.ln.Addr().(*net.TCPAddr).Port }

// settle returns the number of connections taken since the last settle,
// once the listener has taken every connection made before it:
// connections are accepted in order, and a sentinel made now comes after
// all of the helper's.
func (l *countingListener) settle(t *testing.T) int32 {
	t.Helper()
	c, err := net.Dial("tcp", l.addr())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte("s"))
	c.Close()
	select {
	case <-l.sentinel:
	case <-time.After(10 * time.Second):
		t.Fatal("the listener never took the sentinel connection")
	}
	return l.accepted.Swap(0)
}

// TestConfinedNetwork: a confined command connects over TCP only to the
// ports it is given (any host), never listens, and never reaches the
// network past Landlock's TCP rules (multipath TCP, SCTP, TCP Fast Open),
// and sends datagrams only when allowed.
func TestConfinedNetwork(t *testing.T) {
	requireLandlock(t)
	allowed, other := newCountingListener(t), newCountingListener(t)
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	helper := func(s Spec, attempts ...string) map[string]string {
		t.Helper()
		c := exec.Command(os.Args[0], append([]string{"net-helper"}, attempts...)...)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		s.TempDir = t.TempDir()
		if _, err := Start(c, s); err != nil {
			t.Fatal(err)
		}
		_ = c.Wait()
		got := map[string]string{}
		for line := range strings.Lines(out.String()) {
			k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
			kind, _, _ := strings.Cut(k, " ")
			got[kind+">"+strings.TrimPrefix(k, kind+" ")] = v
		}
		return got
	}
	refused := func(got string) bool {
		return strings.Contains(got, "permission denied") || strings.Contains(got, "operation not permitted")
	}
	tests := []struct {
		name      string
		spec      Spec
		tcpOK     bool // the allowed listener's port
		udpOK     bool
		wantTaken int32
	}{
		{"no network", Spec{}, false, false, 0},
		{"one port", Spec{Ports: []int{allowed.port()}}, true, false, 1},
		{"one port and datagrams", Spec{Ports: []int{allowed.port()}, Datagrams: true}, true, true, 1},
	}
	// Families that reach beyond Landlock's TCP rules: crypto (AF_ALG), SMC
	// (TCP underneath), VSOCK (the hypervisor), TIPC, RDS, packet sockets.
	families := []int{unix.AF_ALG, unix.AF_SMC, unix.AF_VSOCK, unix.AF_TIPC, unix.AF_RDS, unix.AF_PACKET, unix.AF_BLUETOOTH}
	var familyAttempts []string
	for _, f := range families {
		familyAttempts = append(familyAttempts, "family:"+strconv.Itoa(f))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := helper(tt.spec, append(familyAttempts, "listen:", "tcp:"+allowed.addr(), "tcp:"+other.addr(), "mptcp:"+allowed.addr(),
				"mptcp:"+other.addr(), "tfo:"+other.addr(), "tfomsg:"+other.addr(), "tfoconn:"+other.addr(), "sctp:"+other.addr(), "udp:"+udp.LocalAddr().String())...)
			for _, f := range familyAttempts {
				if k := strings.Replace(f, ":", ">", 1); got[k] != "operation not permitted" {
					t.Errorf("socket of family %s: %q, want EPERM", strings.TrimPrefix(f, "family:"), got[k])
				}
			}
			if !refused(got["listen>"]) {
				t.Errorf("listening was not refused: %q", got["listen>"])
			}
			if ok := got["tcp>"+allowed.addr()] == "ok"; ok != tt.tcpOK {
				t.Errorf("TCP to the allowed port: %q, want ok %v", got["tcp>"+allowed.addr()], tt.tcpOK)
			}
			for _, k := range []string{"tcp>" + other.addr(), "mptcp>" + allowed.addr(), "mptcp>" + other.addr(), "tfo>" + other.addr(),
				"tfomsg>" + other.addr(), "tfoconn>" + other.addr(), "sctp>" + other.addr()} {
				if !refused(got[k]) {
					t.Errorf("%s: %q, want a refusal", k, got[k])
				}
			}
			if ok := got["udp>"+udp.LocalAddr().String()] == "ok"; ok != tt.udpOK {
				t.Errorf("UDP: %q, want ok %v", got["udp>"+udp.LocalAddr().String()], tt.udpOK)
			}
			if n := allowed.settle(t); n != tt.wantTaken {
				t.Errorf("the allowed listener took %d connections, want %d", n, tt.wantTaken)
			}
			if n := other.settle(t); n != 0 {
				t.Errorf("the other listener took %d connections, want none", n)
			}
		})
	}
	// The shell's own /dev/tcp is refused the same way.
	r := run(t, "exec 3<>/dev/tcp/"+strings.Replace(other.addr(), ":", "/", 1), Spec{Ports: []int{allowed.port()}})
	if r.exit == 0 {
		t.Errorf("/dev/tcp connect to another port from a confined bash: exit 0, %q", r.out)
	}
	if _, err := Start(exec.Command("/bin/true"), Spec{TempDir: t.TempDir(), Ports: []int{0}}); !errors.Is(err, ErrRefused) {
		t.Errorf("port 0: %v, want a refusal", err)
	}
}

// TestSandboxExecConnect: `vigil sandbox-exec --connect` opens the ports it
// lists, and only those.
func TestSandboxExecConnect(t *testing.T) {
	requireLandlock(t)
	tmp := t.TempDir()
	allowed, other := newCountingListener(t), newCountingListener(t)
	devTCP := func(addr string) string {
		return "(exec 3<>/dev/tcp/" + strings.Replace(addr, ":", "/", 1) + ") 2>/dev/null && echo " + addr + " ok || echo " + addr + " refused"
	}
	c := exec.Command(os.Args[0], Subcommand, "--tmp", tmp, "--shell", "/bin/bash", "--connect", strconv.Itoa(allowed.port()), "--",
		devTCP(allowed.addr())+"; "+devTCP(other.addr()))
	out, err := c.CombinedOutput()
	if want := allowed.addr() + " ok\n" + other.addr() + " refused\n"; err != nil || string(out) != want {
		t.Errorf("--connect %d: %v, %q; want %q", allowed.port(), err, out, want)
	}
	if out, err := exec.Command(os.Args[0], Subcommand, "--tmp", tmp, "--connect", "http", "--", "true").CombinedOutput(); err == nil ||
		!strings.Contains(string(out), `"http" is not a TCP port number`) {
		t.Errorf("--connect http: %v, %q", err, out)
	}
}
