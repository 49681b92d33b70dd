// Package command is vigil's shell-command classifier (SPEC P1, P2): it
// decides whether a command is provably read-only and whether it exits by
// itself. Classify is the one entry point; policy calls it for every tool
// call that carries a command and combines the verdict with the session's
// other gates.
//
// The classifier parses the command with mvdan.cc/sh in the dialect it
// will run in (bash, or a POSIX sh such as dash), walks every part of the
// tree and judges each simple command against a table of tools. Most tools
// are described by a grammar: every option they have (its names, its
// value, whether it writes, runs code, changes state or sends data), how
// their parser reads options (getopt_long abbreviations, pflag, Go flag,
// argparse), where their verb sits and each verb's own options. The files
// split that work by concern:
//
//	classify.go   entry points, Options, parser pool, findings, verdict
//	              assembly, bytes refused before parsing, dialects
//	walk.go       the AST walk: lists, pipelines, redirections,
//	              substitutions (classified in turn), assignments,
//	              expansions that evaluate code, command dispatch
//	words.go      quote and escape removal; what is static
//	grammar.go    the grammar engine: option tables, parser styles, verbs,
//	              scanTool
//	verbs.go      helpers for verb tables
//	opts.go       the first-generation option scanner (SQL clients)
//	env.go        which environment assignments are inert
//	table.go      the command table: pure readers, known writers, checker
//	              and grammar groups
//	shell.go      builtins, wrappers, shells and interpreters
//	files.go      file and text tools (find, sort, tar, less, ...)
//	readers.go    readers with one dangerous option (locate, lxc-info)
//	awk.go, sed.go  program and script inspection
//	system.go     systemd, journal, kernel and service tools
//	monitors.go   top-like monitors, lsof, sensors
//	packages.go   package managers
//	net.go        network tools (iproute2's ordered option matching,
//	              iptables, DNS tools, netcat); http.go curl, wget,
//	              httpie, openssl
//	url.go        URL action words and policy.http_read_urls prefixes
//	remote.go     ssh and exec into containers and guests
//	containers.go, storage.go, git.go, cloud.go (aws, gcloud, az,
//	              terraform, ansible-inventory)
//	inspect.go    content inspectors (SQL clients, redis-cli) and
//	sql.go        the SQL clients' own layer: mysql client commands,
//	              psql meta-commands, sqlite3 dot-commands; the SQL
//	              itself is decided by package sqlcheck
//	bound.go      exit-boundedness rewrites
//
// Every rule errs one way: what cannot be proven read-only is
// write-or-unknown. An option a tool's table does not list, an ambiguous
// abbreviation and an unknown verb are unknown; so are bytes the shell and
// the parser would read differently (NUL, carriage return, other control
// characters). A read that talks over the network is marked so in the
// verdict (Verdict.Network).
package command
