package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

// Every way Redis can be unreachable is worded as what failed and how to
// fix it, naming the address, on one line.
func TestUnreachable(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want []string
	}{
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)},
			[]string{"connection refused", "start Redis", "store.redis.addr"}},
		{"unknown host", &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "redis.invalid", IsNotFound: true}},
			[]string{"does not resolve", "store.redis.addr"}},
		{"timeout", fmt.Errorf("redis: ping: %w", context.DeadlineExceeded), []string{"no answer in time", "firewall"}},
		{"password", errors.New("WRONGPASS invalid username-password pair or user is disabled."),
			[]string{"refused the password", "VIGIL_STORE_REDIS_PASSWORD"}},
		{"no auth", errors.New("NOAUTH Authentication required."), []string{"refused the password", "store.redis.password"}},
		{"db", errors.New("ERR DB index is out of range"), []string{"database number", "store.redis.db"}},
		{"other", errors.New("something odd"), []string{"something odd", "store.redis.*"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			line := Unreachable("10.0.0.5:6379", tc.err)
			if strings.Contains(line, "\n") || !strings.HasPrefix(line, "cannot reach Redis at 10.0.0.5:6379: ") {
				t.Fatalf("not one line naming the address: %q", line)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q lacks %q", line, w)
				}
			}
		})
	}
}

// Against a closed port the real client's error is recognised.
func TestUnreachableClosedPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s, err := New(t.Context(), Options{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	line := Unreachable(addr, s.Ping(t.Context()))
	if !strings.Contains(line, "connection refused (nothing listens there)") {
		t.Fatalf("a closed port is not recognised: %q", line)
	}
}

// The address fix names the key the configured topology reads.
func TestUnreachableNamesTheTopologysKey(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	cases := []struct {
		opts      Options
		want, not string
	}{
		{Options{Addr: "10.0.0.5:6379"}, "store.redis.addr (", "addrs"},
		{Options{Addrs: []string{"10.0.0.5:6379"}}, "store.redis.addrs", "master_name"},
		{Options{Addrs: []string{"10.0.0.5:7000", "10.0.0.6:7000"}}, "Cluster nodes", "master_name"},
		{Options{Addrs: []string{"10.0.0.5:26379"}, MasterName: "main"}, "store.redis.master_name", "Cluster"},
	}
	for _, tc := range cases {
		line := unreachable(tc.opts.where(), tc.opts.addrFix(), refused)
		if !strings.Contains(line, tc.want) || strings.Contains(line, tc.not) {
			t.Errorf("%+v: %q should name %q and not %q", tc.opts, line, tc.want, tc.not)
		}
	}
}
