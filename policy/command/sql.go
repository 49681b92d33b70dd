package command

import (
	"strings"

	"github.com/vigilops/vigil/policy/command/sqlcheck"
)

// The SQL clients' own layer: what psql, mysql and sqlite3 do with their
// input before any SQL reaches a server. The SQL itself is decided by
// package sqlcheck; this file decides the client commands around it (psql
// meta-commands, mysql client commands, sqlite3 dot-commands), each allowed
// only from an explicit read-only list and with literal arguments.

// inspectSQL records the verdict about one SQL text as the server reads it.
func (c *classifier) inspectSQL(k *call, sql string, d sqlcheck.Dialect) bool {
	r := sqlcheck.Check(sql, d)
	if !r.ReadOnly {
		risk := RiskMedium
		if r.Severity == sqlcheck.High {
			risk = RiskHigh
		}
		c.inspected(k.name, true, risk, r.Reason)
		return false
	}
	c.inspected(k.name, false, RiskReadOnly, r.Reason)
	return true
}

// wordSet builds a set from space-separated words.
func wordSet(words string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// mysqlClientCommands are the mysql and mariadb clients' commands by long
// name. At the start of a statement the client runs them itself, instead of
// sending anything to the server: "system" runs a shell command, "source"
// a file, "tee" and "pager" write files or run programs, "edit" an editor.
var mysqlClientCommands = wordSet(`? clear connect delimiter edit ego exit go help nopager notee
	pager print prompt quit rehash source status system tee use charset warnings nowarning
	resetconnection query_attributes ssl_session_data_print sandbox`)

// mysqlClientInput is what the mysql client makes of an -e string: the
// statements it sends to the server, or the first client command it would
// run itself.
type mysqlClientInput struct {
	statements []string
	command    string // e.g. "system" or `\!`; "" if none
}

// mysqlClient models the client's reading of its input (mysql.cc,
// read_and_execute and add_line): line by line; a line that starts a
// statement may be a client command; outside strings and /* */ comments, a
// backslash introduces a one-letter client command (\! is system, \. source,
// \T tee, \P pager, \e edit), ';' ends a statement and "#" or "-- " end the
// line. Whether a backslash inside a string escapes depends on the server's
// NO_BACKSLASH_ESCAPES, which the client learns only after connecting:
// callers read the input both ways.
func mysqlClient(text string, escapes bool) mysqlClientInput {
	var in mysqlClientInput
	var buf strings.Builder
	var quote byte // the open quote, or 0
	comment, needSpace := false, false
	flush := func() bool {
		s := strings.TrimSpace(buf.String())
		buf.Reset()
		if s == "" {
			return true
		}
		if cmd, ok := mysqlStatementCommand(s); ok {
			in.command = cmd
			return false
		}
		in.statements = append(in.statements, s)
		return true
	}
	for _, line := range strings.Split(text, "\n") {
		// A line that starts a statement is a command if its first word
		// names one, unless it holds a ';' or \g: then the statement it
		// ends is looked up instead, below.
		if buf.Len() == 0 && !comment && quote == 0 && !strings.Contains(line, ";") && !strings.Contains(line, `\g`) {
			if cmd, ok := mysqlStatementCommand(line); ok {
				in.command = cmd
				return in
			}
		}
	scan:
		for i := 0; i < len(line); i++ {
			ch := line[i]
			switch {
			case buf.Len() == 0 && quote == 0 && !comment && mysqlSpace(ch):
				// white space before a statement is dropped
			case !comment && ch == '\\' && (quote == 0 || escapes):
				if i+1 == len(line) {
					break scan
				}
				i++
				next := line[i]
				if quote != 0 || next == 'N' {
					buf.WriteByte('\\')
					buf.WriteByte(next)
					continue
				}
				if next != 'g' && next != 'G' {
					in.command = `\` + string(next)
					return in
				}
				if !flush() {
					return in
				}
			case !comment && quote == 0 && ch == ';':
				if !flush() {
					return in
				}
			case !comment && quote == 0 && (ch == '#' || ch == '-' && strings.HasPrefix(line[i:], "--") &&
				(i+2 == len(line) || mysqlSpace(line[i+2]))):
				break scan
			case !comment && quote == 0 && strings.HasPrefix(line[i:], "/*") && !strings.HasPrefix(line[i:], "/*!") &&
				!strings.HasPrefix(line[i:], "/*M!"):
				// mysql drops comments; /*! and MariaDB's /*M! are sent.
				comment = true
				i++
			case comment && strings.HasPrefix(line[i:], "*/"):
				comment = false
				i++
				needSpace = true
			case comment:
			default:
				if ch == quote {
					quote = 0
				} else if quote == 0 && (ch == '\'' || ch == '"' || ch == '`') {
					quote = ch
				}
				if needSpace && !mysqlSpace(ch) {
					buf.WriteByte(' ') // a comment separates what it stood between
				}
				needSpace = false
				buf.WriteByte(ch)
			}
		}
		if buf.Len() > 0 {
			buf.WriteByte('\n')
		}
	}
	flush()
	return in
}

func mysqlSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v'
}

// mysqlStatementCommand reports whether text, at the start of a statement,
// is a client command: its first word names one. "use NAME" is allowed: it
// only picks the default database.
func mysqlStatementCommand(text string) (string, bool) {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return "", false
	}
	name := strings.ToLower(strings.TrimRight(fields[0], ";"))
	if !mysqlClientCommands[name] {
		return "", false
	}
	if name == "use" && len(fields) == 2 && literalWord(strings.TrimRight(fields[1], ";")) {
		return "", false
	}
	return name, true
}

// literalWord reports whether s is a plain name: letters, digits and _ . -
func literalWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '.' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// psqlReadMeta are psql meta-commands that only describe the database or
// show help, named without their S (system objects) and + (more detail)
// modifiers.
var psqlReadMeta = wordSet(`d da db dc dC dd dD ddp dE des det deu dew df dfa dfn dfp dft dfw
	dF dFd dFp dFt dg di dl dL dm dn do dO dp dP dPi dPn dPt drds drg dRp dRs ds dt dT du dv
	dx dX dy dA dAc dAf dAo dAp dconfig l list lo_list z conninfo encoding sf sv copyright
	errverbose h help ?`)

// psqlMeta decides a -c string that is one psql meta-command: a listed
// command whose arguments are literal words. psql runs text in backticks in
// a shell and replaces :var, :'var' and :"var" with variables, so neither a
// backtick nor a colon may appear; quotes and backslashes (another command)
// may not either.
func psqlMeta(s string) (name string, ok bool) {
	body := s[1:]
	end := strings.IndexAny(body, " \t")
	if end < 0 {
		end = len(body)
	}
	name = `\` + body[:end]
	base := strings.TrimRight(body[:end], "S+")
	if !psqlReadMeta[base] || base == "encoding" && strings.TrimSpace(body[end:]) != "" {
		return name, false
	}
	for i := end; i < len(body); i++ {
		c := body[i]
		if !(c == ' ' || c == '\t' || c == '"' || c == '*' || c == '?' || c == '+' || c == '^' || c == '$' ||
			c == '(' || c == ')' || c == ',' || literalWord(string(c))) {
			return name, false
		}
	}
	return name, true
}

// sqliteReadDot are sqlite3 dot-commands that only show the database or
// set how results print.
var sqliteReadDot = wordSet(`.tables .table .schema .fullschema .indexes .indices .databases
	.dbinfo .headers .header .mode .show .help .print .width .separator .nullvalue .timer
	.eqp .changes .dump .lint .version .sha3sum .timeout .echo .bail .limit .vfsinfo
	.vfslist .vfsname .dbtotxt .stats`)

// sqliteDot decides a dot-command argument: a listed command whose
// arguments hold no control character (a newline would start another
// command) and no "|" (which pipes to a program in the commands that write).
func sqliteDot(s string) (name string, ok bool) {
	name = s
	if i := strings.IndexFunc(s, func(r rune) bool { return r <= ' ' }); i >= 0 {
		name = s[:i]
	}
	if !sqliteReadDot[name] {
		return name, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 && s[i] != '\t' || s[i] == 0x7f || s[i] == '|' {
			return name, false
		}
	}
	return name, true
}
