package redis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"syscall"

	goredis "github.com/redis/go-redis/v9"
)

// Unreachable words a failure to reach Redis at addr for the person
// running vigil, in one line: where, what failed, and how to fix it. The
// client's own error text stays in debug logs.
func Unreachable(addr string, err error) string {
	return unreachable(addr, singleAddrFix, err)
}

// The fix for a wrong address, worded for the key the topology reads.
const (
	singleAddrFix   = "set store.redis.addr (VIGIL_STORE_REDIS_ADDR) to a running Redis's host:port"
	clusterAddrFix  = "set store.redis.addrs (VIGIL_STORE_REDIS_ADDRS) to the host:port of running Cluster nodes"
	sentinelAddrFix = "set store.redis.addrs (VIGIL_STORE_REDIS_ADDRS) to the running Sentinels' host:port and store.redis.master_name to the name they monitor"
)

// addrFix is the address fix for o's topology.
func (o Options) addrFix() string {
	switch o.Topology() {
	case "sentinel":
		return sentinelAddrFix
	case "cluster":
		return clusterAddrFix
	}
	if len(o.Addrs) == 1 {
		return "set store.redis.addrs (VIGIL_STORE_REDIS_ADDRS) to a running Redis's host:port"
	}
	return singleAddrFix
}

func unreachable(where, addrFix string, err error) string {
	what, fix := diagnose(err, addrFix)
	return fmt.Sprintf("cannot reach Redis at %s: %s; %s (vigil keeps trying; /readyz fails until Redis answers)", where, what, fix)
}

// diagnose sorts a connection error into what failed and what to do;
// addrFix says how to correct the address.
func diagnose(err error, addrFix string) (what, fix string) {
	var (
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		hostErr x509.HostnameError
		recErr  tls.RecordHeaderError
		netErr  net.Error
	)
	msg := err.Error()
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (nothing listens there)", "start Redis, or " + addrFix
	case errors.As(err, &dnsErr):
		return "the host name does not resolve", addrFix
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH):
		return "no route to the host", "check the address and the network, or " + addrFix
	case errors.As(err, &recErr):
		return "the server does not speak TLS", "set store.redis.tls to false (VIGIL_STORE_REDIS_TLS), or point at a TLS port"
	case errors.As(err, &certErr), errors.As(err, &unknown), errors.As(err, &hostErr):
		return "its TLS certificate is not trusted for that name", "install the CA in the system roots, or connect by the name on the certificate"
	case strings.Contains(msg, "WRONGPASS") || strings.Contains(msg, "NOAUTH") || strings.Contains(msg, "invalid password"):
		return "it refused the password", "set store.redis.password (VIGIL_STORE_REDIS_PASSWORD) to the right one"
	case strings.Contains(msg, "DB index is out of range"):
		return "the database number does not exist", "set store.redis.db to one the server has (0 to 15 by default)"
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		return "no answer in time", "check that the host and port are right and that no firewall drops the connection"
	}
	return msg, "check store.redis.* against the server"
}

// RouteClientLogs sends go-redis's own log lines (one per failed dial) to
// log at debug level, so that an outage is reported once, by vigil, in
// words. go-redis's logger is process-wide: only main should call this.
func RouteClientLogs(log *slog.Logger) {
	goredis.SetLogger(clientLog{log})
}

type clientLog struct{ log *slog.Logger }

func (l clientLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}
