package transport

import (
	"slices"
	"strings"
)

// readOnlyEnv are the environment settings with which a client asks its
// server for a session the server itself keeps read-only. Every call but a
// change runs with them, on this machine and over SSH (inside bwrap too),
// so a write the classifier mistook for a read is refused by the server:
//
//   - PGOPTIONS (libpq: psql, pg_dump, and every libpq client) makes each
//     transaction read-only unless the session turns it back on (SET
//     default_transaction_read_only, BEGIN READ WRITE, options= in the
//     connection string), which the classifier's SQL grammar refuses.
//
// There is no such setting for MySQL or MariaDB (a read-only session is
// the client option --init-command or a server setting, neither taken from
// the environment) or for sqlite3 (-readonly is an option); the read
// sandbox keeps SQLite files read-only instead.
var readOnlyEnv = []envSetting{
	{name: "PGOPTIONS", value: "-c default_transaction_read_only=on", appends: true},
}

// envSetting is one variable of readOnlyEnv. appends keeps a value the
// environment already holds, with ours after it (for PGOPTIONS, the last
// -c of a name wins).
type envSetting struct {
	name, value string
	appends     bool
}

// withReadOnlyEnv is env with readOnlyEnv set, for a read. It never changes
// env's backing array.
func withReadOnlyEnv(env []string) []string {
	out := slices.Clip(env)
	for _, s := range readOnlyEnv {
		value := s.value
		i := slices.IndexFunc(out, func(kv string) bool { return strings.HasPrefix(kv, s.name+"=") })
		if i >= 0 {
			if old := strings.TrimPrefix(out[i], s.name+"="); s.appends && old != "" {
				value = old + " " + value
			}
			out = slices.Delete(slices.Clone(out), i, i+1)
		}
		out = append(out, s.name+"="+value)
	}
	return out
}

// readOnlyEnvArgs are readOnlyEnv as env(1) arguments for a remote command,
// each quoted for the remote shell. A value the remote environment holds is
// replaced, not appended to: the remote login shell is not known to expand
// it.
func readOnlyEnvArgs() string {
	var b strings.Builder
	for _, s := range readOnlyEnv {
		b.WriteString(ShellQuote(s.name+"="+s.value) + " ")
	}
	return b.String()
}
