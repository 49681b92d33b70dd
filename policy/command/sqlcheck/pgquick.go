package sqlcheck

import "strings"

// pgQuick decides text written in a small subset of PostgreSQL's grammar
// without running the parser, and reports false for anything else, which
// then goes to the parser as before. The parser runs as WebAssembly and
// every call copies its whole stack (BENCHMARKS.md, "Issue 28"), while the
// diagnostic reads people ask for most (SELECT 1, SHOW x, a SELECT of
// columns and listed functions from a table) need none of its generality.
//
// The subset, with names that are never PostgreSQL keywords and only
// ASCII, unquoted, outside comments:
//
//	text   = stmt { ";" [ stmt ] }
//	stmt   = "SHOW" qname
//	       | "SELECT" target { "," target } [ "FROM" table { "," table } ]
//	         [ "WHERE" expr ] [ "ORDER" "BY" sort { "," sort } ] [ "LIMIT" integer ]
//	target = "*" | expr [ [ "AS" ] name ]
//	table  = qname [ [ "AS" ] name ]
//	sort   = expr [ "ASC" | "DESC" ]
//	expr   = not { ( "AND" | "OR" ) not }
//	not    = { "NOT" } cmp
//	cmp    = arith [ ( "=" | "<>" | "!=" | "<" | ">" | "<=" | ">=" ) arith ]
//	arith  = unary { ( "+" | "-" | "*" | "/" ) unary }
//	unary  = { "+" | "-" } ( integer | string | "(" expr ")" | qname [ "(" [ "*" | expr { "," expr } ] ")" ] )
//
// Every node such text parses to is one the tree walk reads, except a call
// of a function that is not on the list; the verdict is therefore the
// walk's: the first such call in the text decides, or else the statements
// read. The result is exactly what the parser path returns, never more
// permissive: TestPgQuickMatchesParser and FuzzPgQuickMatchesParser
// compare the two on generated statements, every keyword and the corpus.
func pgQuick(sql string) (Result, bool) {
	toks, ok := pgLex(sql)
	if !ok || len(toks) > pgQuickMaxTokens {
		return Result{}, false
	}
	p := pgQuickParser{toks: toks}
	var kinds []string
	n := 0
	for {
		for p.punct(";") {
		}
		if p.done() {
			break
		}
		kind, ok := p.stmt()
		if !ok {
			return Result{}, false
		}
		n++
		kinds = addKind(kinds, kind)
		if !p.done() && !p.punct(";") {
			return Result{}, false
		}
	}
	if n == 0 {
		return Result{}, false
	}
	if p.unlisted != "" {
		return notListed(p.unlisted), true
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
	kind byte // 'n' name, 'k' keyword, 'i' integer, 's' string, 'p' punctuation or operator
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
			if pgKeywords[w] {
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
	unlisted string // the first call of a function not on the list
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
	if t := p.peek(); t.kind == 'k' && t.text == w {
		p.pos++
		return true
	}
	return false
}

// name consumes a plain name.
func (p *pgQuickParser) name() (string, bool) {
	if t := p.peek(); t.kind == 'n' {
		p.pos++
		return t.text, true
	}
	return "", false
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

func (p *pgQuickParser) stmt() (string, bool) {
	switch {
	case p.keyword("show"):
		_, ok := p.qname()
		return "SHOW", ok
	case p.keyword("select"):
		return "SELECT", p.selectBody()
	}
	return "", false
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
	_, _ = p.name()
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
	case 'n':
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
