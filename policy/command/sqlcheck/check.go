package sqlcheck

import (
	"strings"
	"unicode/utf8"
)

// Dialect is the SQL grammar text is read in.
type Dialect uint8

const (
	// PostgreSQL is read with the PostgreSQL server's own grammar.
	PostgreSQL Dialect = iota + 1
	// MySQL is read with TiDB's MySQL grammar.
	MySQL
	// MariaDB is MySQL's grammar with MariaDB's extensions.
	MariaDB
	// SQLite is read with a strict recogniser of SQLite's read-only subset.
	SQLite
)

// String names the dialect.
func (d Dialect) String() string {
	switch d {
	case PostgreSQL:
		return "PostgreSQL"
	case MySQL:
		return "MySQL"
	case MariaDB:
		return "MariaDB"
	case SQLite:
		return "SQLite"
	}
	return "unknown dialect"
}

// Severity grades what a statement that is not read-only could do, for the
// caller to map onto its own risk scale.
type Severity uint8

const (
	// None: the text is read-only.
	None Severity = iota
	// Medium: changes data or state, or could not be proven not to.
	Medium
	// High: destroys data or stops the server (DROP, TRUNCATE, DELETE,
	// ALTER, SHUTDOWN).
	High
)

// Result is the decision about one SQL text.
type Result struct {
	// ReadOnly reports that every statement was proven read-only.
	ReadOnly bool
	// Severity is None when ReadOnly, else how bad a write could be.
	Severity Severity
	// Reason names what decided: for a read, the kinds of statement
	// ("SELECT is read-only"); otherwise the statement, function or feature
	// that made the text write-or-unknown.
	Reason string
	// Statements is the number of statements read.
	Statements int
}

// MaxLen is the longest SQL text Check reads; longer text is
// write-or-unknown without parsing.
const MaxLen = 64 << 10

// Check decides whether sql, read in dialect d, is provably read-only. Each
// statement is decided on its own; one that is not read-only decides the
// whole text. It is safe for concurrent use.
func Check(sql string, d Dialect) Result {
	if r, bad := precheck(sql); bad {
		return r
	}
	switch d {
	case PostgreSQL:
		return checkPostgres(sql)
	case MySQL, MariaDB:
		return checkMySQL(sql, d == MariaDB)
	case SQLite:
		return checkSQLite(sql)
	}
	return unknown("SQL dialect " + d.String() + " is not one sqlcheck reads")
}

// precheck refuses text no grammar should be trusted with: too long, not
// UTF-8, with NUL bytes, or empty.
func precheck(sql string) (Result, bool) {
	switch {
	case len(sql) > MaxLen:
		return unknown("SQL longer than sqlcheck reads"), true
	case strings.IndexByte(sql, 0) >= 0:
		return unknown("SQL contains a NUL byte"), true
	case !utf8.ValidString(sql):
		return unknown("SQL is not valid UTF-8"), true
	case strings.TrimSpace(sql) == "":
		return unknown("empty SQL"), true
	}
	return Result{}, false
}

// unknown is a write-or-unknown result of medium severity.
func unknown(reason string) Result {
	return Result{Severity: Medium, Reason: reason}
}

// unparseable is the result for text the grammar rejects.
func unparseable(msg string) Result {
	return unknown("unparseable SQL: " + msg)
}

// writes is the result for a statement kind that is not read-only.
func writes(stmt string) Result {
	return Result{Severity: severityOf(stmt), Reason: "statement " + stmt + " writes"}
}

// notListed is the result for a function call that is not on the list.
func notListed(fn string) Result {
	return unknown("function " + fn + " is not on the read-only list")
}

// highWords are first words of statement kinds graded High.
var highWords = wordSet("DROP TRUNCATE DELETE ALTER SHUTDOWN")

func severityOf(stmt string) Severity {
	first, _, _ := strings.Cut(stmt, " ")
	if highWords[first] {
		return High
	}
	return Medium
}

// reads is the result for n read-only statements of the given kinds, in the
// order first seen.
func reads(kinds []string, n int) Result {
	verb := " is read-only"
	if len(kinds) > 1 {
		verb = " are read-only"
	}
	return Result{ReadOnly: true, Reason: strings.Join(kinds, ", ") + verb, Statements: n}
}

// addKind appends kind to kinds unless it is there already.
func addKind(kinds []string, kind string) []string {
	for _, k := range kinds {
		if k == kind {
			return kinds
		}
	}
	return append(kinds, kind)
}

// wordSet builds a set from space-separated words.
func wordSet(words string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// withPhrases adds phrases that contain spaces to a set.
func withPhrases(m map[string]bool, phrases ...string) map[string]bool {
	for _, p := range phrases {
		m[p] = true
	}
	return m
}
