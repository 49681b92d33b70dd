package command

import (
	"reflect"
	"strings"
	"testing"
)

// TestMySQLClient checks the model of how the mysql client reads an -e
// string (mysql.cc read_and_execute/add_line): which statements reach the
// server, and which client commands it would run itself.
func TestMySQLClient(t *testing.T) {
	tests := []struct {
		text       string
		escapes    bool
		statements []string
		command    string
	}{
		{"SELECT 1", true, []string{"SELECT 1"}, ""},
		{"SELECT 1; SELECT 2;", true, []string{"SELECT 1", "SELECT 2"}, ""},
		{"SHOW SLAVE STATUS\\G", true, []string{"SHOW SLAVE STATUS"}, ""},
		{"SELECT 1\\gSELECT 2", true, []string{"SELECT 1", "SELECT 2"}, ""},
		{"SELECT 'a;b', \"c;d\", `e;f`", true, []string{"SELECT 'a;b', \"c;d\", `e;f`"}, ""},
		{"SELECT 1 -- ; system id", true, []string{"SELECT 1"}, ""},
		{"SELECT 1 # ; system id", true, []string{"SELECT 1"}, ""},
		{"SELECT 1 /* ; system id */ + 1", true, []string{"SELECT 1  + 1"}, ""},
		{"SELECT 1--1; SELECT 2", true, []string{"SELECT 1--1", "SELECT 2"}, ""},
		{"SELECT '\\N', \\N", true, []string{"SELECT '\\N', \\N"}, ""},
		{"use shop; SELECT 1", true, []string{"use shop", "SELECT 1"}, ""},
		// Client commands, at a statement's start or after a backslash.
		{"system id", true, nil, "system"},
		{"  SYSTEM id", true, nil, "system"},
		{"SELECT 1; system id", true, []string{"SELECT 1"}, "system"},
		{"SELECT 1;\nsource /tmp/x.sql", true, []string{"SELECT 1"}, "source"},
		{"/* c */ system id;", true, nil, "system"},
		{"SELECT 1 /*! ; system id */", true, []string{"SELECT 1 /*!"}, "system"},
		{"SELECT 1 \\! id", true, nil, `\!`},
		{"SELECT 1 \\. /tmp/x", true, nil, `\.`},
		{"SELECT 1 \\T /tmp/x", true, nil, `\T`},
		{"SELECT 1 \\P id", true, nil, `\P`},
		{"SELECT 1 \\e", true, nil, `\e`},
		{"delimiter //", true, nil, "delimiter"},
		{"tee /tmp/x", true, nil, "tee"},
		{"pager id", true, nil, "pager"},
		{"connect", true, nil, "connect"},
		{"use `x`; SELECT 1", true, nil, "use"},
		// Backslashes in strings escape only without NO_BACKSLASH_ESCAPES.
		{"SELECT 'a\\'; system id; '", true, []string{"SELECT 'a\\'; system id; '"}, ""},
		{"SELECT 'a\\'; system id; '", false, []string{"SELECT 'a\\'"}, "system"},
		{"SELECT 'a\\!'", false, []string{"SELECT 'a\\!'"}, ""},
		// A line that continues a statement is not a command.
		{"SELECT id,\nstatus FROM t", true, []string{"SELECT id,\nstatus FROM t"}, ""},
		// MariaDB's executable comments reach the server.
		{"SELECT 1 /*M!, sleep(1) */", true, []string{"SELECT 1 /*M!, sleep(1) */"}, ""},
	}
	for _, tt := range tests {
		got := mysqlClient(tt.text, tt.escapes)
		if got.command != tt.command || !reflect.DeepEqual(got.statements, tt.statements) {
			t.Errorf("mysqlClient(%q, escapes=%v) = %q %q, want %q %q", tt.text, tt.escapes, got.statements, got.command, tt.statements, tt.command)
		}
	}
}

func TestPsqlMeta(t *testing.T) {
	tests := []struct {
		cmd  string
		name string
		ok   bool
	}{
		{`\d`, `\d`, true},
		{`\d+ users`, `\d+`, true},
		{`\dtS+ public.*`, `\dtS+`, true},
		{`\d "My Table"`, `\d`, true},
		{`\l`, `\l`, true},
		{`\conninfo`, `\conninfo`, true},
		{`\sf my_func(int, text)`, `\sf`, true},
		{`\encoding`, `\encoding`, true},
		{`\encoding SJIS`, `\encoding`, false},
		{`\! id`, `\!`, false},
		{`\dt ` + "`id`", `\dt`, false},
		{`\d :var`, `\d`, false},
		{`\d :'var'`, `\d`, false},
		{`\d 'x'`, `\d`, false},
		{`\d x \\ \! id`, `\d`, false},
		{`\o /tmp/x`, `\o`, false},
		{`\w /tmp/x`, `\w`, false},
		{`\g /tmp/x`, `\g`, false},
		{`\copy t to /tmp/x`, `\copy`, false},
		{`\i x.sql`, `\i`, false},
		{`\ir x.sql`, `\ir`, false},
		{`\e`, `\e`, false},
		{`\set ECHO all`, `\set`, false},
		{`\gexec`, `\gexec`, false},
		{"\\d\nx", "\\d\nx", false},
		{`\d x|y`, `\d`, false},
	}
	for _, tt := range tests {
		name, ok := psqlMeta(tt.cmd)
		if name != tt.name || ok != tt.ok {
			t.Errorf("psqlMeta(%q) = %q %v, want %q %v", tt.cmd, name, ok, tt.name, tt.ok)
		}
	}
}

func TestSQLiteDot(t *testing.T) {
	tests := []struct {
		cmd  string
		name string
		ok   bool
	}{
		{".tables", ".tables", true},
		{".schema users", ".schema", true},
		{".dump 'user%'", ".dump", true},
		{".mode csv", ".mode", true},
		{".headers on", ".headers", true},
		{".shell id", ".shell", false},
		{".system id", ".system", false},
		{".output /tmp/x", ".output", false},
		{".once /tmp/x", ".once", false},
		{".import x t", ".import", false},
		{".save /tmp/x", ".save", false},
		{".backup /tmp/x", ".backup", false},
		{".load x.so", ".load", false},
		{".open /tmp/x", ".open", false},
		{".read x.sql", ".read", false},
		{".excel", ".excel", false},
		{".tables\n.shell id", ".tables", false},
		{".print a | b", ".print", false},
	}
	for _, tt := range tests {
		name, ok := sqliteDot(tt.cmd)
		if name != tt.name || ok != tt.ok {
			t.Errorf("sqliteDot(%q) = %q %v, want %q %v", tt.cmd, name, ok, tt.name, tt.ok)
		}
	}
}

// TestSQLClientReasons: verdicts name the function, statement, client
// command or option that decided.
func TestSQLClientReasons(t *testing.T) {
	for cmd, want := range map[string]string{
		`psql -c 'SELECT pg_terminate_backend(1)'`:            "psql: function pg_terminate_backend",
		`psql -c 'DROP TABLE t'`:                              "psql: statement DROP writes",
		`psql -c '\! id'`:                                     `meta-command \!`,
		`mysql -e 'system id'`:                                "client command system",
		`mysql -e "SELECT get_lock('a', 1)"`:                  "function get_lock",
		`mysql -e "SELECT 1" --init-command='SET GLOBAL x=1'`: "SET x",
		`sqlite3 db "SELECT writefile('/x', 1)"`:              "function writefile",
		`sqlite3 db .shell id`:                                "dot-command .shell",
		`psql -v PROMPT1=x -c 'SELECT 1'`:                     "psql -v PROMPT1",
	} {
		v := Classify(cmd)
		if v.ReadOnly() || !strings.Contains(strings.Join(v.Reasons, "; "), want) {
			t.Errorf("Classify(%q) = %s %q, want write-or-unknown naming %q", cmd, v.Intent, v.Reasons, want)
		}
	}
}
