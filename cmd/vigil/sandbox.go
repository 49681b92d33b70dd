package main

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/tools/sandbox"
)

// newSandboxExecCmd is `vigil sandbox-exec`: run a command confined as a
// read on this machine would be, to see what the read sandbox allows.
// Package sandbox does the work.
func newSandboxExecCmd() *cobra.Command {
	return &cobra.Command{
		Use:   sandbox.Subcommand + " [--connect PORT,...] [--datagrams] [--best-effort] [--shell PATH] [-v] --tmp DIR -- 'COMMAND'",
		Short: "Run a command in the read sandbox (Landlock, no capabilities), as vigil runs reads here",
		Long: "Runs COMMAND with the shell, confined as vigil confines a read on this machine: it may read every file, " +
			"write only /dev/null and DIR, signal nothing outside, change no IPC object, connect over TCP only to the --connect ports " +
			"and send no UDP unless --datagrams.",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Main executes the shell; it returns only on failure.
			return exitError{code: sandbox.Main(args, cmd.ErrOrStderr())}
		},
	}
}

// endpoint is a host:port the configuration names, and which key names it.
type endpoint struct {
	key  string
	host string
	port int
}

// redisEndpoints are the Redis servers (or Sentinels) vigil keeps its own
// state in; none with the memory store.
func redisEndpoints(cfg *config.Config) []endpoint {
	if cfg.Store.Backend != "redis" {
		return nil
	}
	var out []endpoint
	add := func(key, addr string) {
		host, port, err := net.SplitHostPort(addr)
		if n, perr := strconv.Atoi(port); err == nil && perr == nil {
			out = append(out, endpoint{key: key, host: host, port: n})
		}
	}
	if len(cfg.Store.Redis.Addrs) == 0 {
		add("store.redis.addr", cfg.Store.Redis.Addr)
	}
	for i, a := range cfg.Store.Redis.Addrs {
		add(fmt.Sprintf("store.redis.addrs[%d]", i), a)
	}
	return out
}

// readDestinations are the destinations of network reads the
// configuration itself names: the URL prefixes of policy.http_read_urls and
// the Prometheus and Alertmanager servers of the metrics and alerts tools.
// (Inventory hosts and declared commands' hosts are destinations too; the
// classifier knows them per command.)
func readDestinations(cfg *config.Config) []endpoint {
	var out []endpoint
	addURL := func(key, raw string) {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		if n, err := strconv.Atoi(port); err == nil {
			out = append(out, endpoint{key: key, host: u.Hostname(), port: n})
		}
	}
	for i, u := range cfg.Policy.HTTPReadURLs {
		addURL(fmt.Sprintf("policy.http_read_urls[%d]", i), u)
	}
	for i, p := range cfg.Observability.Prometheus {
		addURL(fmt.Sprintf("observability.prometheus[%d].url", i), p.URL)
	}
	addURL("observability.alertmanager.url", cfg.Observability.Alertmanager.URL)
	return out
}

// sandboxWarnings are startup warnings about what the read sandbox cannot
// keep from reads. It denies a network read every TCP port but those of
// its destinations, which keeps vigil's own Redis out of reach, unless a
// destination uses the Redis port: Landlock allows ports, not hosts, so a
// read allowed to reach that port anywhere may reach it on Redis's host.
func sandboxWarnings(redis, dests []endpoint) []string {
	var out []string
	for _, r := range redis {
		i := slices.IndexFunc(dests, func(d endpoint) bool { return d.port == r.port })
		if i < 0 {
			continue
		}
		d := dests[i]
		out = append(out, fmt.Sprintf("%s %s: %s (%s) uses port %d too, so a network read to it may also connect to vigil's Redis "+
			"(the read sandbox confines ports, not hosts); run Redis on a port no read destination uses, and keep its password set",
			r.key, net.JoinHostPort(r.host, strconv.Itoa(r.port)), d.key, net.JoinHostPort(d.host, strconv.Itoa(d.port)), r.port))
	}
	return out
}
