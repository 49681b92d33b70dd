package sqlcheck

import (
	"fmt"
	"strings"
)

// No maintained pure-Go SQLite grammar is served by the module proxy, and
// the real engine (modernc.org/sqlite) cannot prepare a statement without
// the database's schema. SQLite text is therefore read by a strict
// recogniser: a tokenizer that follows SQLite's own (tokenize.c: which bytes
// are white space, how comments, strings, quoted identifiers and blobs end)
// and a statement check that accepts only
//
//	SELECT ... | VALUES ... | WITH ... SELECT ...
//	EXPLAIN [QUERY PLAN] <one of those>
//	PRAGMA [schema.]name            for a listed read-only pragma
//	PRAGMA [schema.]name(argument)  for a listed pragma that describes an object
//	BEGIN [DEFERRED] [TRANSACTION] | COMMIT | END | ROLLBACK [TRANSACTION]
//
// Within a query, every word or quoted identifier followed by "(" is a
// function call unless the grammar makes it a keyword there, and it must be
// on the read-only list; a writing keyword anywhere (INSERT, UPDATE, DELETE,
// REPLACE, INTO, RETURNING, ...) makes the statement a write. Text SQLite
// would reject may be judged read-only: SQLite prepares a whole statement
// before running any of it, so a statement that does not prepare runs
// nothing.

// sqliteTokKind is the kind of one SQLite token.
type sqliteTokKind uint8

const (
	sqliteWord   sqliteTokKind = iota // a bare word: keyword or identifier
	sqliteQuoted                      // "x", [x] or `x`: an identifier
	sqliteString                      // 'x'
	sqliteNumber
	sqliteBlob  // x'00'
	sqliteVar   // ?1, :a, @a, $a
	sqliteOp    // operators and punctuation, including ( ) , .
	sqliteSemi  // ;
	sqliteSpace // never returned
)

type sqliteTok struct {
	kind sqliteTokKind
	text string // as written
	name string // a word in upper case; a quoted identifier unquoted
}

func (t sqliteTok) is(op string) bool { return t.kind == sqliteOp && t.text == op }

func (t sqliteTok) word(w string) bool { return t.kind == sqliteWord && t.name == w }

// sqliteSpaceByte reports SQLite's white space: tab, newline, form feed,
// carriage return and space. A vertical tab is not white space to SQLite's
// tokenizer (it is an illegal character).
func sqliteSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

func sqliteIDByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// sqliteTokens splits sql into tokens the way SQLite's tokenizer does,
// dropping white space and comments.
func sqliteTokens(sql string) ([]sqliteTok, error) {
	var toks []sqliteTok
	for i := 0; i < len(sql); {
		c := sql[i]
		start := i
		kind := sqliteOp
		switch {
		case sqliteSpaceByte(c):
			i++
			continue
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			// An unterminated comment runs to the end of the input.
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				i = len(sql)
			} else {
				i += end + 4
			}
			continue
		case c == '\'':
			n, err := sqliteQuotedLen(sql[i:], '\'')
			if err != nil {
				return nil, err
			}
			i += n
			kind = sqliteString
		case c == '"' || c == '`':
			n, err := sqliteQuotedLen(sql[i:], c)
			if err != nil {
				return nil, err
			}
			i += n
			kind = sqliteQuoted
		case c == '[':
			end := strings.IndexByte(sql[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("unterminated [identifier")
			}
			i += end + 1
			kind = sqliteQuoted
		case (c == 'x' || c == 'X') && i+1 < len(sql) && sql[i+1] == '\'':
			n, err := sqliteQuotedLen(sql[i+1:], '\'')
			if err != nil {
				return nil, err
			}
			i += 1 + n
			kind = sqliteBlob
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9':
			for i < len(sql) && (sqliteIDByte(sql[i]) || sql[i] == '.' ||
				(sql[i] == '+' || sql[i] == '-') && (sql[i-1] == 'e' || sql[i-1] == 'E')) {
				i++
			}
			kind = sqliteNumber
		case c == '?' || c == ':' || c == '@' || c == '$' || c == '#':
			i++
			for i < len(sql) && sqliteIDByte(sql[i]) {
				i++
			}
			kind = sqliteVar
		case sqliteIDByte(c):
			for i < len(sql) && sqliteIDByte(sql[i]) {
				i++
			}
			kind = sqliteWord
		case c == ';':
			i++
			kind = sqliteSemi
		default:
			n := sqliteOperator(sql[i:])
			if n == 0 {
				return nil, fmt.Errorf("unrecognized token %q", sql[i:i+1])
			}
			i += n
		}
		t := sqliteTok{kind: kind, text: sql[start:i]}
		switch kind {
		case sqliteWord:
			t.name = strings.ToUpper(t.text)
		case sqliteQuoted:
			t.name = sqliteUnquote(t.text)
		}
		toks = append(toks, t)
	}
	return toks, nil
}

// sqliteQuotedLen returns the length of the quoted token at the start of s,
// where a doubled quote stands for one.
func sqliteQuotedLen(s string, q byte) (int, error) {
	for j := 1; j < len(s); j++ {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated %c", q)
}

func sqliteUnquote(s string) string {
	if s[0] == '[' {
		return s[1 : len(s)-1]
	}
	q := s[:1]
	return strings.ReplaceAll(s[1:len(s)-1], q+q, q)
}

// sqliteOperator returns the length of the operator at the start of s, or
// 0 for a character SQLite does not accept.
func sqliteOperator(s string) int {
	for _, op := range []string{"->>", "->", "||", "<=", ">=", "<>", "<<", ">>", "==", "!="} {
		if strings.HasPrefix(s, op) {
			return len(op)
		}
	}
	if strings.IndexByte("()+-*/%=<>,&|~.", s[0]) >= 0 {
		return 1
	}
	return 0
}

// checkSQLite decides every statement of sql.
func checkSQLite(sql string) Result {
	toks, err := sqliteTokens(sql)
	if err != nil {
		return unparseable(err.Error())
	}
	var kinds []string
	n := 0
	for len(toks) > 0 {
		end := 0
		for end < len(toks) && toks[end].kind != sqliteSemi {
			end++
		}
		stmt := toks[:end]
		if end < len(toks) {
			end++
		}
		toks = toks[end:]
		if len(stmt) == 0 {
			continue
		}
		kind, r := sqliteStatement(stmt)
		if r != nil {
			return *r
		}
		kinds = addKind(kinds, kind)
		n++
	}
	if n == 0 {
		return unknown("no SQL statement (only comments)")
	}
	return reads(kinds, n)
}

// sqliteStatement decides one statement.
func sqliteStatement(toks []sqliteTok) (string, *Result) {
	first := toks[0]
	if first.kind != sqliteWord {
		r := unparseable("statement starts with " + first.text)
		return "", &r
	}
	switch first.name {
	case "SELECT", "VALUES":
		return first.name, sqliteQuery(toks)
	case "WITH":
		return "SELECT", sqliteQuery(toks)
	case "EXPLAIN":
		rest := toks[1:]
		if len(rest) >= 2 && rest[0].word("QUERY") && rest[1].word("PLAN") {
			rest = rest[2:]
		}
		if len(rest) == 0 || !(rest[0].word("SELECT") || rest[0].word("VALUES") || rest[0].word("WITH")) {
			r := unknown("EXPLAIN of a statement that is not a query")
			return "", &r
		}
		return "EXPLAIN", sqliteQuery(rest)
	case "PRAGMA":
		return "PRAGMA", sqlitePragma(toks)
	case "BEGIN", "COMMIT", "END", "ROLLBACK":
		return "transaction control", sqliteTransaction(toks)
	}
	r := writes(first.name)
	return "", &r
}

// sqliteTransaction allows BEGIN [DEFERRED] [TRANSACTION], COMMIT/END
// [TRANSACTION] and ROLLBACK [TRANSACTION]: they change nothing alone, and
// every other statement beside them is checked. BEGIN IMMEDIATE and
// EXCLUSIVE take a write lock; ROLLBACK TO needs a savepoint.
func sqliteTransaction(toks []sqliteTok) *Result {
	rest := toks[1:]
	if toks[0].name == "BEGIN" && len(rest) > 0 && rest[0].word("DEFERRED") {
		rest = rest[1:]
	}
	if len(rest) > 0 && rest[0].word("TRANSACTION") {
		rest = rest[1:]
	}
	if len(rest) > 0 {
		r := unknown(toks[0].name + " " + rest[0].text + " is not read-only")
		return &r
	}
	return nil
}

// sqliteWriteWords make a query a write wherever they appear as bare words.
var sqliteWriteWords = wordSet(`INSERT UPDATE DELETE REPLACE UPSERT INTO RETURNING DROP CREATE
	ALTER ATTACH DETACH VACUUM REINDEX ANALYZE PRAGMA`)

// sqliteParenKeywords are reserved words (never read as a name) that may
// stand before "(" in a query without calling a function.
var sqliteParenKeywords = wordSet(`ALL AND AS BETWEEN CASE DISTINCT ELSE ESCAPE EXCEPT EXISTS
	FROM GROUP HAVING IN INTERSECT IS ISNULL JOIN LIMIT NOT NOTNULL NULL ON OR ORDER SELECT
	THEN UNION USING VALUES WHEN WHERE`)

// sqliteQuery checks a SELECT, VALUES or WITH statement.
func sqliteQuery(toks []sqliteTok) *Result {
	// casts holds, for each open CAST(, its depth and whether its AS was seen:
	// a name followed by "(" after that AS is a type such as VARCHAR(10).
	type cast struct {
		depth int
		as    int // index of the cast's AS, or 0
	}
	var casts []cast
	depth := 0
	for i, t := range toks {
		switch {
		case t.kind == sqliteVar:
			r := unknown("parameter " + t.text + " is not known to be read-only")
			return &r
		case t.is("("):
			depth++
			continue
		case t.is(")"):
			if len(casts) > 0 && casts[len(casts)-1].depth == depth {
				casts = casts[:len(casts)-1]
			}
			depth--
			continue
		case t.word("AS") && len(casts) > 0 && casts[len(casts)-1].depth == depth && casts[len(casts)-1].as == 0:
			casts[len(casts)-1].as = i
			continue
		}
		call := i+1 < len(toks) && toks[i+1].is("(")
		if t.kind == sqliteWord && sqliteWriteWords[t.name] && !(t.name == "REPLACE" && call) {
			r := writes(t.name)
			return &r
		}
		if !call {
			continue
		}
		switch t.kind {
		case sqliteString, sqliteNumber, sqliteBlob:
			r := unparseable(t.text + " before (")
			return &r
		case sqliteOp:
			continue
		}
		if sqliteNotCall(toks, i) {
			if t.word("CAST") {
				casts = append(casts, cast{depth: depth + 1})
			}
			continue
		}
		if len(casts) > 0 && casts[len(casts)-1].depth == depth && typeName(toks, casts[len(casts)-1].as, i) {
			continue // a type name with a size: CAST(x AS UNSIGNED BIG INT(10))
		}
		name := t.name
		if t.kind == sqliteWord {
			name = strings.ToLower(t.text)
		}
		if !sqliteReadFunctions[strings.ToLower(name)] {
			r := notListed(name)
			return &r
		}
	}
	return nil
}

// typeName reports whether toks[as+1 : i+1], between a cast's AS and a
// "(", are the words of a type name: SQLite's grammar puts nothing else
// there, and the parenthesis then holds the type's size.
func typeName(toks []sqliteTok, as, i int) bool {
	if as == 0 {
		return false
	}
	for j := as + 1; j <= i; j++ {
		if toks[j].kind != sqliteWord && toks[j].kind != sqliteQuoted {
			return false
		}
	}
	return true
}

// sqliteNotCall reports whether toks[i], followed by "(", is grammar rather
// than a function call: a reserved word, CAST, a window's OVER or an
// aggregate's FILTER right after ")", BY after ORDER, GROUP or PARTITION,
// MATERIALIZED after AS or NOT, or a common table expression's name with its
// column list (WITH x(a, b) AS (...)).
func sqliteNotCall(toks []sqliteTok, i int) bool {
	t := toks[i]
	var prev sqliteTok
	if i > 0 {
		prev = toks[i-1]
	}
	if t.kind == sqliteWord {
		switch {
		case sqliteParenKeywords[t.name], t.name == "CAST":
			return true
		case t.name == "OVER" || t.name == "FILTER":
			return prev.is(")")
		case t.name == "BY":
			return prev.word("ORDER") || prev.word("GROUP") || prev.word("PARTITION")
		case t.name == "MATERIALIZED":
			return prev.word("AS") || prev.word("NOT")
		}
	}
	// A CTE name: after WITH, RECURSIVE or a comma, and its ")" is followed
	// by AS. Anything else of that shape does not prepare.
	if !(prev.word("WITH") || prev.word("RECURSIVE") || prev.is(",")) {
		return false
	}
	depth := 0
	for j := i + 1; j < len(toks); j++ {
		switch {
		case toks[j].is("("):
			depth++
		case toks[j].is(")"):
			depth--
			if depth == 0 {
				return j+1 < len(toks) && toks[j+1].word("AS")
			}
		}
	}
	return false
}

// sqliteReadPragmas only report when given no argument.
var sqliteReadPragmas = wordSet(`table_info table_xinfo table_list index_list index_info
	index_xinfo foreign_key_list foreign_key_check integrity_check quick_check database_list
	compile_options page_count page_size freelist_count journal_mode user_version
	schema_version application_id encoding auto_vacuum cache_size collation_list
	function_list module_list pragma_list data_version synchronous foreign_keys busy_timeout
	max_page_count mmap_size temp_store wal_autocheckpoint locking_mode secure_delete
	recursive_triggers query_only trusted_schema cell_size_check defer_foreign_keys
	automatic_index analysis_limit threads soft_heap_limit hard_heap_limit`)

// sqliteArgPragmas stay read-only with an argument naming what to describe.
var sqliteArgPragmas = wordSet(`table_info table_xinfo table_list index_list index_info
	index_xinfo foreign_key_list foreign_key_check integrity_check quick_check`)

// sqlitePragma checks PRAGMA [schema.]name [(argument)]; "=" always sets.
func sqlitePragma(toks []sqliteTok) *Result {
	rest := toks[1:]
	if len(rest) >= 3 && rest[1].is(".") {
		rest = rest[2:]
	}
	if len(rest) == 0 || rest[0].kind != sqliteWord && rest[0].kind != sqliteQuoted {
		r := unparseable("PRAGMA without a name")
		return &r
	}
	name := strings.ToLower(rest[0].text)
	if rest[0].kind == sqliteQuoted {
		name = strings.ToLower(rest[0].name)
	}
	rest = rest[1:]
	switch {
	case !sqliteReadPragmas[name]:
		r := unknown("PRAGMA " + name + " is not on the read-only list")
		return &r
	case len(rest) == 0:
		return nil
	case len(rest) == 3 && rest[0].is("(") && rest[2].is(")") && sqliteArgPragmas[name] &&
		rest[1].kind != sqliteOp && rest[1].kind != sqliteVar:
		return nil
	}
	r := unknown("PRAGMA " + name + " " + rest[0].text + " sets a value")
	return &r
}
