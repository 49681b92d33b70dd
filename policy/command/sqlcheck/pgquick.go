package sqlcheck

import "strings"

// pgQuick decides text written in a small subset of PostgreSQL's grammar
// without running the parser, and reports false for anything else, which
// then goes to the parser as before. The parser runs as WebAssembly and
// every call copies its whole stack (BENCHMARKS.md, "Issue 28"), while the
// statements people and the model write most (SELECT 1, SHOW x, a SELECT
// of columns and listed functions from a table, a plain DROP, TRUNCATE,
// DELETE, UPDATE, INSERT or VACUUM) need none of its generality.
//
// The subset, with names that are not PostgreSQL keywords (or unreserved
// ones, except as an alias without AS), ASCII, unquoted, outside comments:
//
//	text   = stmt { ";" [ stmt ] }
//	stmt   = "SHOW" qname
//	       | "SELECT" target { "," target } [ "FROM" table { "," table } ]
//	         [ "WHERE" expr ] [ "ORDER" "BY" sort { "," sort } ] [ "LIMIT" integer ]
//	       | "DROP" ( "TABLE" | "VIEW" | "INDEX" ) [ "IF" "EXISTS" ] qname { "," qname } [ "CASCADE" | "RESTRICT" ]
//	       | "TRUNCATE" [ "TABLE" ] qname { "," qname }
//	       | "DELETE" "FROM" qname [ "WHERE" expr ]
//	       | "UPDATE" qname "SET" name "=" expr { "," name "=" expr } [ "WHERE" expr ]
//	       | "INSERT" "INTO" qname [ "(" name { "," name } ")" ] "VALUES" row { "," row }
//	       | "VACUUM" [ "FULL" ] [ qname { "," qname } ]
//	       | "EXPLAIN" [ ( "ANALYZE" | "ANALYSE" ) [ "VERBOSE" ] | "VERBOSE" | "(" option { "," option } ")" ]
//	         ( select | delete | update | insert )
//	       | "WITH" name "AS" "(" dml ")" { "," name "AS" "(" dml ")" } dml
//	dml    = select | delete | update | insert
//	option = name | "ANALYZE" | "ANALYSE" | "VERBOSE"
//	row    = "(" expr { "," expr } ")"
//	target = "*" | expr [ [ "AS" ] name ]
//	table  = qname [ [ "AS" ] name ]
//	sort   = expr [ "ASC" | "DESC" ]
//	expr   = not { ( "AND" | "OR" ) not }
//	not    = { "NOT" } cmp
//	cmp    = arith [ ( "=" | "<>" | "!=" | "<" | ">" | "<=" | ">=" ) arith ]
//	arith  = unary { ( "+" | "-" | "*" | "/" ) unary }
//	unary  = { "+" | "-" } ( integer | string | "TRUE" | "FALSE" | "NULL" | "(" expr ")"
//	         | qname [ "(" [ "*" | expr { "," expr } ] ")" ] )
//	qname  = name [ "." name [ "." name ] ]
//
// Strings are single-quoted without backslashes, or dollar-quoted ($$...$$,
// $tag$...$tag$) of printable ASCII without backslashes.
//
// Every node a SELECT or SHOW of the subset parses to is one the tree walk
// reads, except a call of a function that is not on the list; the other
// statements are refused by their own node, before the walk reaches any
// other. EXPLAIN is refused by its own node when an option is ANALYZE
// (EXPLAIN ANALYZE runs the statement), before the statement it explains;
// otherwise that statement decides as it would alone, EXPLAIN naming the
// kind when it reads. WITH's statements come after the main one's own
// clauses in the walk: a writing main statement decides first, then an
// unlisted call in the main SELECT, then the common table expressions in
// order, each as it would alone. DELETE, UPDATE and INSERT may end in
// RETURNING with a SELECT's targets. The verdict is therefore the walk's: the first statement that is
// not read-only decides, with the first unlisted call in its text or its
// kind, or else the statements read. It is exactly what the parser path
// returns, never more permissive: TestPgQuickMatchesParser and
// FuzzPgQuickMatchesParser compare the two on generated statements, every
// keyword and the corpus.
func pgQuick(sql string) (Result, bool) {
	toks, ok := pgLex(sql)
	if !ok || len(toks) > pgQuickMaxTokens {
		return Result{}, false
	}
	p := pgQuickParser{toks: toks}
	var (
		kinds []string
		first *Result // the first statement that is not read-only
	)
	n := 0
	for {
		for p.punct(";") {
		}
		if p.done() {
			break
		}
		p.unlisted, p.res = "", nil
		kind, isRead, ok := p.stmt()
		if !ok {
			return Result{}, false
		}
		n++
		switch {
		case first != nil:
		case p.res != nil:
			first = p.res
		case !isRead:
			r := writes(kind)
			first = &r
		case p.unlisted != "":
			r := notListed(p.unlisted)
			first = &r
		}
		kinds = addKind(kinds, kind)
		if !p.done() && !p.punct(";") {
			return Result{}, false
		}
	}
	switch {
	case n == 0:
		return Result{}, false
	case first != nil:
		return *first, true
	}
	return reads(kinds, n), true
}

// pgQuickMaxTokens bounds the text the quick path reads: diagnostic reads
// are short, and a long chain of operators nests as deep in the parser's
// tree as it is long, where the parser, not this path, should meet any
// limit.
const pgQuickMaxTokens = 256

// pgTok is one token of the subset: a lower-cased name or keyword, an
// integer, a string constant, or punctuation and operators as written.
type pgTok struct {
	kind byte // 'n' name, 'u' unreserved keyword, 'k' other keyword, 'i' integer, 's' string, 'p' punctuation or operator
	text string
}

// pgOperators are the operator spellings of the subset. PostgreSQL reads
// the longest run of operator characters as one operator, so a run that is
// not one of these (and any comment opener, "--" or "/*") leaves the subset.
var pgOperators = wordSet("* = <> != < > <= >= + - /")

const pgOpChars = "~!@#^&|`?+-*/%<>="

// pgLex splits text into tokens, or reports false at anything outside the
// subset: quotes other than plain single-quoted strings, backslashes,
// dollar signs, comments, non-ASCII bytes, numbers other than plain
// integers, names longer than PostgreSQL keeps (63 bytes).
func pgLex(s string) ([]pgTok, bool) {
	var toks []pgTok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case pgNameStart(c):
			j := i + 1
			for j < len(s) && (pgNameStart(s[j]) || pgDigit(s[j])) {
				j++
			}
			if j-i > 63 || j < len(s) && (s[j] == '$' || s[j] == '\'' || s[j] == '"' || s[j] == '&') {
				return nil, false
			}
			w := strings.ToLower(s[i:j])
			kind := byte('n')
			switch {
			case pgUnreserved[w] && w != "operator": // OPERATOR(op) is syntax, not a call
				kind = 'u'
			case pgKeywords[w]:
				kind = 'k'
			}
			toks = append(toks, pgTok{kind, w})
			i = j
		case pgDigit(c):
			j := i + 1
			for j < len(s) && pgDigit(s[j]) {
				j++
			}
			if j < len(s) && (pgNameStart(s[j]) || s[j] == '.' || s[j] == '$') {
				return nil, false
			}
			toks = append(toks, pgTok{'i', s[i:j]})
			i = j
		case c == '\'':
			j := i + 1
			for {
				k := strings.IndexByte(s[j:], '\'')
				if k < 0 {
					return nil, false
				}
				j += k + 1
				if j < len(s) && s[j] == '\'' {
					j++
					continue
				}
				break
			}
			if strings.IndexByte(s[i:j], '\\') >= 0 {
				return nil, false
			}
			toks = append(toks, pgTok{'s', s[i:j]})
			i = j
		case c == '$':
			// A dollar-quoted string, $$...$$ or $tag$...$tag$ (a $ with
			// anything else, a parameter $1, leaves the subset). The
			// scanner ends it at the first copy of its opening delimiter.
			j := i + 1
			for j < len(s) && (pgNameStart(s[j]) || j > i+1 && pgDigit(s[j])) {
				j++
			}
			if j >= len(s) || s[j] != '$' {
				return nil, false
			}
			delim := s[i : j+1]
			k := strings.Index(s[j+1:], delim)
			if k < 0 {
				return nil, false
			}
			for _, b := range []byte(s[j+1 : j+1+k]) {
				if b == '\\' || b > 0x7e || b < 0x20 && b != '\t' && b != '\n' {
					return nil, false
				}
			}
			end := j + 1 + k + len(delim)
			toks = append(toks, pgTok{'s', s[i:end]})
			i = end
		case c == '.':
			// Only between two names written together: a.b.
			if i == 0 || !pgNameStart(s[i-1]) && !pgDigit(s[i-1]) || len(toks) == 0 || toks[len(toks)-1].kind != 'n' ||
				i+1 >= len(s) || !pgNameStart(s[i+1]) {
				return nil, false
			}
			toks = append(toks, pgTok{'p', "."})
			i++
		case c == '(' || c == ')' || c == ',' || c == ';':
			toks = append(toks, pgTok{'p', s[i : i+1]})
			i++
		case strings.IndexByte(pgOpChars, c) >= 0:
			j := i + 1
			for j < len(s) && strings.IndexByte(pgOpChars, s[j]) >= 0 {
				j++
			}
			if !pgOperators[s[i:j]] {
				return nil, false
			}
			toks = append(toks, pgTok{'p', s[i:j]})
			i = j
		default:
			return nil, false
		}
	}
	return toks, true
}

func pgNameStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func pgDigit(c byte) bool { return c >= '0' && c <= '9' }

// pgQuickParser reads the subset's grammar by recursive descent. Each
// method consumes what it recognises and reports false on anything else.
type pgQuickParser struct {
	toks     []pgTok
	pos      int
	unlisted string  // the first call of a function not on the list
	res      *Result // the statement's verdict when its kind does not give it (EXPLAIN)
	depth    int
}

func (p *pgQuickParser) done() bool { return p.pos >= len(p.toks) }

func (p *pgQuickParser) peek() pgTok {
	if p.done() {
		return pgTok{}
	}
	return p.toks[p.pos]
}

// punct consumes punctuation or an operator spelled s.
func (p *pgQuickParser) punct(s string) bool {
	if t := p.peek(); t.kind == 'p' && t.text == s {
		p.pos++
		return true
	}
	return false
}

// keyword consumes the keyword w.
func (p *pgQuickParser) keyword(w string) bool {
	if t := p.peek(); (t.kind == 'k' || t.kind == 'u') && t.text == w {
		p.pos++
		return true
	}
	return false
}

// name consumes a name where the grammar takes a column, table, function
// or setting name (ColId): a word that is no keyword, or an unreserved one.
func (p *pgQuickParser) name() (string, bool) {
	if t := p.peek(); t.kind == 'n' || t.kind == 'u' {
		p.pos++
		return t.text, true
	}
	return "", false
}

// bareName consumes a word that is no keyword at all, for an alias
// written without AS.
func (p *pgQuickParser) bareName() bool {
	if t := p.peek(); t.kind == 'n' {
		p.pos++
		return true
	}
	return false
}

// qname consumes a name and up to two qualifiers, a.b.c; a fourth part is
// an error for a table and stays outside the subset everywhere.
func (p *pgQuickParser) qname() ([]string, bool) {
	first, ok := p.name()
	if !ok {
		return nil, false
	}
	parts := []string{first}
	for len(parts) < 3 && p.punct(".") {
		next, ok := p.name()
		if !ok {
			return nil, false
		}
		parts = append(parts, next)
	}
	return parts, true
}

// stmt reads one statement and returns its kind as the tree walk names it
// (pgStatementNames), and whether it is a kind that reads.
func (p *pgQuickParser) stmt() (kind string, reads, ok bool) {
	switch {
	case p.keyword("show"):
		_, ok := p.qname()
		return "SHOW", true, ok
	case p.keyword("select"):
		return "SELECT", true, p.selectBody()
	case p.keyword("drop"):
		ok := p.keyword("table") || p.keyword("view") || p.keyword("index")
		if ok && p.keyword("if") {
			ok = p.keyword("exists")
		}
		ok = ok && p.list(p.table0)
		if ok && !p.keyword("cascade") {
			p.keyword("restrict")
		}
		return "DROP", false, ok
	case p.keyword("truncate"):
		p.keyword("table")
		return "TRUNCATE", false, p.list(p.table0)
	case p.keyword("delete"):
		ok := p.keyword("from") && p.table0()
		if ok && p.keyword("where") {
			ok = p.expr()
		}
		return "DELETE", false, ok && p.returning()
	case p.keyword("update"):
		ok := p.table0() && p.keyword("set") && p.list(p.assign)
		if ok && p.keyword("where") {
			ok = p.expr()
		}
		return "UPDATE", false, ok && p.returning()
	case p.keyword("insert"):
		ok := p.keyword("into") && p.table0()
		if ok && p.punct("(") {
			ok = p.list(func() bool { _, ok := p.name(); return ok }) && p.punct(")")
		}
		ok = ok && p.keyword("values") && p.list(p.row)
		return "INSERT", false, ok && p.returning()
	case p.keyword("explain"):
		return p.explain()
	case p.keyword("with"):
		return p.with()
	case p.keyword("vacuum"):
		p.keyword("full")
		if t := p.peek(); t.kind == 'n' || t.kind == 'u' {
			return "VACUUM", false, p.list(p.table0)
		}
		return "VACUUM", false, true
	}
	return "", false, false
}

// returning reads an optional RETURNING clause.
func (p *pgQuickParser) returning() bool {
	return !p.keyword("returning") || p.list(p.target)
}

// dml reads a SELECT, DELETE, UPDATE or INSERT, the statements that may
// stand in a WITH and be explained (PreparableStmt, ExplainableStmt).
func (p *pgQuickParser) dml() (kind string, reads, ok bool) {
	if t := p.peek(); t.kind != 'k' && t.kind != 'u' ||
		t.text != "select" && t.text != "delete" && t.text != "update" && t.text != "insert" {
		return "", false, false
	}
	return p.stmt()
}

// with reads the rest of a statement with common table expressions.
func (p *pgQuickParser) with() (kind string, reads, ok bool) {
	var cte *Result // the first common table expression that does not read
	item := func() bool {
		if _, ok := p.name(); !ok || !p.keyword("as") || !p.punct("(") {
			return false
		}
		p.unlisted = ""
		inner, innerReads, ok := p.dml()
		if !ok || !p.punct(")") {
			return false
		}
		switch {
		case cte != nil:
		case !innerReads:
			r := writes(inner)
			cte = &r
		case p.unlisted != "":
			r := notListed(p.unlisted)
			cte = &r
		}
		return true
	}
	if !p.list(item) {
		return "", false, false
	}
	p.unlisted = ""
	kind, reads, ok = p.dml()
	if ok && reads && p.unlisted == "" && cte != nil {
		p.res = cte
	}
	return kind, reads, ok
}

// explain reads the rest of an EXPLAIN: its options and the statement it
// explains, one of those the grammar can explain (ExplainableStmt).
func (p *pgQuickParser) explain() (kind string, reads, ok bool) {
	analyze := false
	switch {
	case p.keyword("analyze") || p.keyword("analyse"):
		analyze = true
		p.keyword("verbose")
	case p.keyword("verbose"):
	case p.punct("("):
		option := func() bool {
			t := p.peek()
			switch {
			case t.kind == 'n' || t.kind == 'u':
			case t.kind == 'k' && (t.text == "analyze" || t.text == "analyse" || t.text == "verbose"):
				analyze = analyze || t.text != "verbose"
			default:
				return false
			}
			p.pos++
			return true
		}
		if !p.list(option) || !p.punct(")") {
			return "", false, false
		}
	}
	inner, innerReads, ok := p.dml()
	switch {
	case !ok:
		return "", false, false
	case analyze:
		r := unknown("EXPLAIN ANALYZE executes the statement")
		p.res = &r
	case !innerReads:
		r := writes(inner)
		p.res = &r
	}
	return "EXPLAIN", p.res == nil, true
}

// table0 reads a table's name without an alias.
func (p *pgQuickParser) table0() bool {
	_, ok := p.qname()
	return ok
}

// assign reads name = expr of an UPDATE.
func (p *pgQuickParser) assign() bool {
	_, ok := p.name()
	return ok && p.punct("=") && p.expr()
}

// row reads a parenthesised list of values of an INSERT.
func (p *pgQuickParser) row() bool {
	return p.punct("(") && p.list(p.expr) && p.punct(")")
}

func (p *pgQuickParser) selectBody() bool {
	if !p.list(p.target) {
		return false
	}
	if p.keyword("from") && !p.list(p.table) {
		return false
	}
	if p.keyword("where") && !p.expr() {
		return false
	}
	if p.keyword("order") {
		if !p.keyword("by") || !p.list(p.sort) {
			return false
		}
	}
	if p.keyword("limit") {
		if t := p.peek(); t.kind != 'i' {
			return false
		}
		p.pos++
	}
	return true
}

// list reads one or more items separated by commas.
func (p *pgQuickParser) list(item func() bool) bool {
	if !item() {
		return false
	}
	for p.punct(",") {
		if !item() {
			return false
		}
	}
	return true
}

func (p *pgQuickParser) target() bool {
	if p.punct("*") {
		return true
	}
	return p.expr() && p.alias()
}

func (p *pgQuickParser) table() bool {
	_, ok := p.qname()
	return ok && p.alias()
}

// alias reads an optional [AS] name.
func (p *pgQuickParser) alias() bool {
	if p.keyword("as") {
		_, ok := p.name()
		return ok
	}
	p.bareName()
	return true
}

func (p *pgQuickParser) sort() bool {
	if !p.expr() {
		return false
	}
	if !p.keyword("asc") {
		p.keyword("desc")
	}
	return true
}

func (p *pgQuickParser) expr() bool {
	// Parentheses nest; a bound keeps the recursion shallow, and deeper
	// text goes to the parser, which has its own limit.
	if p.depth++; p.depth > 32 {
		return false
	}
	defer func() { p.depth-- }()
	if !p.not() {
		return false
	}
	for p.keyword("and") || p.keyword("or") {
		if !p.not() {
			return false
		}
	}
	return true
}

func (p *pgQuickParser) not() bool {
	for p.keyword("not") {
	}
	return p.cmp()
}

func (p *pgQuickParser) cmp() bool {
	if !p.arith() {
		return false
	}
	for _, op := range [...]string{"=", "<>", "!=", "<", ">", "<=", ">="} {
		if p.punct(op) {
			return p.arith()
		}
	}
	return true
}

func (p *pgQuickParser) arith() bool {
	if !p.unary() {
		return false
	}
	for p.punct("+") || p.punct("-") || p.punct("*") || p.punct("/") {
		if !p.unary() {
			return false
		}
	}
	return true
}

func (p *pgQuickParser) unary() bool {
	for p.punct("+") || p.punct("-") {
	}
	t := p.peek()
	switch t.kind {
	case 'i', 's':
		p.pos++
		return true
	case 'k':
		return p.keyword("true") || p.keyword("false") || p.keyword("null")
	case 'n', 'u':
		parts, ok := p.qname()
		if !ok {
			return false
		}
		if p.punct("(") {
			p.call(parts)
			if p.punct(")") {
				return true
			}
			if !p.punct("*") && !p.list(p.expr) {
				return false
			}
			return p.punct(")")
		}
		return true
	case 'p':
		if t.text == "(" {
			p.pos++
			return p.expr() && p.punct(")")
		}
	}
	return false
}

// call notes a call of the function named by parts when it is the first
// one not on the list, as the tree walk would: qualified only by
// pg_catalog, and listed.
func (p *pgQuickParser) call(parts []string) {
	if p.unlisted != "" {
		return
	}
	fn, ok := parts[len(parts)-1], len(parts) == 1 || len(parts) == 2 && parts[0] == "pg_catalog"
	if !ok || !pgReadFunctions[fn] {
		p.unlisted = strings.Join(parts, ".")
	}
}
