// Package command is vigil's shell-command classifier (SPEC P1, P2): it
// decides whether a command is provably read-only and whether it exits by
// itself. Classify is the one entry point; policy calls it for every tool
// call that carries a command and combines the verdict with the session's
// other gates.
//
// The classifier parses the command with mvdan.cc/sh, walks every part of
// the tree and judges each simple command against a table of tools. The
// files split that work by concern:
//
//	classify.go   entry point, parser pool, findings, verdict assembly
//	walk.go       the AST walk: lists, pipelines, redirections,
//	              substitutions, assignments, command dispatch
//	words.go      quote and escape removal; what is static
//	opts.go       getopt-style option scanning
//	env.go        which environment assignments are inert
//	table.go      the command table: pure readers, known writers and the
//	              checker groups below
//	verbs.go      subcommand tables (systemctl, docker, kubectl, ...)
//	shell.go      builtins, wrappers, shells and interpreters
//	files.go      file and text tools (find, sort, tar, less, ...)
//	awk.go, sed.go  program and script inspection
//	system.go     systemd, journal, kernel and monitoring tools
//	packages.go   package managers
//	net.go        network tools; http.go curl, wget, openssl
//	remote.go     ssh and exec into containers and guests
//	containers.go, storage.go, git.go
//	inspect.go    content inspectors (SQL clients, redis-cli) and
//	sql.go        the SQL clients' own layer: mysql client commands,
//	              psql meta-commands, sqlite3 dot-commands; the SQL
//	              itself is decided by package sqlcheck
//	bound.go      exit-boundedness rewrites
//
// Every rule errs one way: what cannot be proven read-only is
// write-or-unknown.
package command
