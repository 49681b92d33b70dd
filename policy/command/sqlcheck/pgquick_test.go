package sqlcheck

import (
	"bufio"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pgQuickSeeds are statements near the edge of the quick path's subset:
// the PostgreSQL statements of the classifier's corpora, and forms whose
// tokens look alike but that the grammar reads differently.
var pgQuickSeeds = []string{
	"SELECT 1", "select 1;", "SELECT 1;;", ";", "SELECT 1; SELECT 2", "SELECT 1; SHOW x",
	"SHOW max_connections", "SHOW server_version", "SHOW a.b", "SHOW all", "SHOW time zone",
	"SELECT * FROM pg_stat_activity", "SELECT pid, state, query FROM pg_stat_activity WHERE state <> 'idle'",
	"SELECT pg_size_pretty(pg_database_size('app'))", "SELECT pg_terminate_backend(123)",
	"SELECT nextval('seq')", "SELECT my_cleanup()", "SELECT public.cleanup()",
	"SELECT pg_catalog.pg_terminate_backend(123)", "SELECT pg_catalog.lower('X')",
	"SELECT datname, pg_size_pretty(pg_database_size(datname)) FROM pg_database",
	"SELECT relname, n_live_tup, n_dead_tup FROM pg_stat_user_tables ORDER BY n_dead_tup DESC LIMIT 10",
	"SELECT pid, usename, state, now() - query_start AS age FROM pg_stat_activity WHERE state <> 'idle' ORDER BY age DESC LIMIT 20",
	"SELECT count(*) FROM t", "SELECT count(*) FROM t WHERE NOT a = 1 AND b <> 'x''y' OR c >= -2",
	"SELECT 'x\\'; DROP TABLE t; --'", "SELECT $$;$$; DROP TABLE t", "SELECT 1 /* c */", "SELECT 1 -- c",
	"SELECT a.b.c.d FROM t", "SELECT 1 FROM a.b.c.d", "SELECT a FROM t x", "SELECT a FROM t AS x",
	"SELECT a b", "SELECT a AS b", "SELECT a AS select", "SELECT a select", "SELECT 1x", "SELECT 1.5",
	"SELECT 1_000", "SELECT 0x1F", "SELECT 'a'\n'b'", "SELECT 'a' 'b'", "SELECT E'a'", "SELECT U&'a'",
	"SELECT x'1F'", "SELECT foo 'x'", "SELECT int '1'", "SELECT a=-1", "SELECT a = b = c",
	"SELECT a < b < c", "SELECT a = NOT b", "SELECT NOT NOT a", "SELECT - - 1", "SELECT +a", "SELECT *",
	"SELECT *, 1", "SELECT 1, *", "SELECT * AS x", "SELECT count(*, 1)", "SELECT f(*)", "SELECT f()",
	"SELECT (1)", "SELECT ((a))", "SELECT (a).b", "SELECT a . b", "SELECT t.*", "SELECT 'x'y",
	"SELECT a FROM t WHERE", "SELECT FROM t", "SELECT", "SELECT 1 LIMIT 5", "SELECT 1 LIMIT all",
	"SELECT 1 ORDER BY 1", "SELECT 1 ORDER a", "SELECT a<>b", "SELECT a< >b", "SELECT a!=b", "SELECT a||b",
	"SELECT user", "SELECT current_user", "SELECT name FROM user", "SELECT a FROM t WHERE a IS NULL",
	"SELECT lower(upper('x')), length(name) FROM public.users WHERE id = 42",
	"SELECT pg_sleep(86400)", "SELECT lower(pg_sleep(1))", "SELECT pg_sleep(1) FROM t WHERE lower(a) = 'b'",
	"SELECT a FROM t WHERE pg_sleep(1) = 1 ORDER BY lo_unlink(1)",
	"SELECT " + strings.Repeat("a", 64), "SELECT " + strings.Repeat("a", 63),
	"SELECT pg_terminate_backend/**/(123)", "SELECT \"pg_cancel_backend\"(123)",
	"EXPLAIN SELECT 1", "VACUUM FULL", "DROP TABLE users", "SELECT * FROM jobs FOR UPDATE",
	"SELECT * INTO backup FROM users", "UPDATE users SET admin=true", "TRUNCATE audit", "TRUNCATE TABLE a, b.c",
	"DROP TABLE IF EXISTS a, b CASCADE", "DROP TABLE", "DROP SCHEMA s", "DELETE FROM t WHERE id = 1", "DELETE t",
	"INSERT INTO t (a, b) VALUES (1, 'x'), (2, NULL)", "INSERT INTO t VALUES (DEFAULT)", "VACUUM", "VACUUM t",
	"SELECT 1; DROP TABLE t", "SELECT pg_sleep(1); DROP TABLE t", "DROP TABLE t; SELECT pg_sleep(1)",
	"UPDATE t SET a = pg_sleep(1) WHERE lower(b) = 'x'", "SELECT true, false, null", "SELECT 1; VACUUM FULL; SELECT",
	"SELECT 1\t\r\n", "SELECT\f1", "SELECT\v1", "SÉLECT 1",
	// EXPLAIN and its options.
	"EXPLAIN ANALYZE DELETE FROM t", "EXPLAIN ANALYSE SELECT 1", "EXPLAIN (ANALYZE) DELETE FROM t",
	"EXPLAIN (ANALYZE, VERBOSE) SELECT 1", "EXPLAIN (VERBOSE) SELECT pg_sleep(1)", "EXPLAIN (FORMAT JSON) SELECT 1",
	"EXPLAIN (format) SELECT 1", "EXPLAIN (costs, buffers) SELECT a FROM t", "EXPLAIN VERBOSE SELECT 1",
	"EXPLAIN VERBOSE ANALYZE SELECT 1", "EXPLAIN ANALYZE VERBOSE SELECT 1", "EXPLAIN DELETE FROM t",
	"EXPLAIN UPDATE t SET a = 1", "EXPLAIN INSERT INTO t VALUES (1)", "EXPLAIN SHOW x", "EXPLAIN DROP TABLE t",
	"EXPLAIN EXPLAIN SELECT 1", "EXPLAIN", "EXPLAIN ()", "EXPLAIN (ANALYZE true) SELECT 1",
	"EXPLAIN (ANALYZE) SELECT pg_sleep(1)", "EXPLAIN SELECT pg_sleep(1)", "EXPLAIN DELETE FROM t WHERE pg_sleep(1) = 1",
	"EXPLAIN ANALYZE SELECT 1; DROP TABLE t", "SELECT 1; EXPLAIN ANALYZE SELECT 1", "EXPLAIN (select) SELECT 1",
	"EXPLAIN (analyze, analyze) SELECT 1", "EXPLAIN VACUUM", "EXPLAIN TRUNCATE t", "EXPLAIN ANALYZE",
	"EXPLAIN (ANALYZE) UPDATE t SET a = lo_unlink(1)", "EXPLAIN (verbose, analyse) INSERT INTO t VALUES (pg_sleep(1))",
	"EXPLAIN (VERBOSE,) SELECT 1", "EXPLAIN (,VERBOSE) SELECT 1", "EXPLAIN (VERBOSE VERBOSE) SELECT 1",
	"EXPLAIN (user) SELECT 1", "EXPLAIN (\"analyze\") SELECT 1", "EXPLAIN SELECT 1 FOR UPDATE",
	// Dollar quotes.
	"SELECT $$x$$", "SELECT $a$x$a$", "SELECT $a$x$b$ $a$", "SELECT $a$x$ab$y$a$", "SELECT $$$$", "SELECT $$a$$b",
	"SELECT $$a$$ AS b", "SELECT $1", "SELECT $a", "SELECT $_1$x$_1$", "SELECT $1a$x$1a$", "SELECT a$$x$$",
	"SELECT $$it's$$", "SELECT $$a\\b$$", "SELECT $$unterminated", "SELECT $q$;$q$; DROP TABLE t",
	"SELECT $Tag$x$tag$ $Tag$", "SELECT $$a$$$$b$$", "SELECT $$ $ $$", "SELECT lower($$X$$)", "SELECT 'a' $$b$$",
	"SELECT $$a$$ || 'b'", "SELECT $a$$a$", "SELECT $ab$x$a$ab$", "SELECT $a$ $ab$ $a$", "SELECT 1$$x$$",
	"SELECT $$\n$$", "SELECT $$é$$", "SELECT x FROM t WHERE y = $$-- no comment$$", "SELECT $$/*$$",
	// WITH and RETURNING.
	"WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "WITH d AS (DELETE FROM t RETURNING *) SELECT count(*) FROM d",
	"WITH a AS (SELECT 1) SELECT * FROM a", "WITH a AS (SELECT pg_sleep(1)) SELECT * FROM a",
	"WITH a AS (SELECT pg_sleep(1)) SELECT lo_unlink(1) FROM a", "WITH a AS (SELECT 1), b AS (DELETE FROM t) SELECT 1",
	"WITH a AS (UPDATE t SET x = 1 RETURNING x), b AS (SELECT pg_sleep(1)) SELECT 1",
	"WITH a AS (SELECT pg_sleep(1)), b AS (DELETE FROM t) SELECT 1", "WITH a AS (SELECT 1) DELETE FROM t",
	"WITH a AS (DELETE FROM t) DELETE FROM u", "WITH a AS (SELECT 1) INSERT INTO t VALUES (1) RETURNING *",
	"WITH a AS (INSERT INTO t VALUES (1) RETURNING id) SELECT id FROM a", "WITH a AS (SELECT 1) SELECT 1; DROP TABLE t",
	"WITH a AS (SELECT 1)", "WITH AS (SELECT 1) SELECT 1", "WITH a (x) AS (SELECT 1) SELECT 1",
	"WITH a AS MATERIALIZED (SELECT 1) SELECT 1", "WITH RECURSIVE a AS (SELECT 1) SELECT 1",
	"WITH a AS (SELECT 1) WITH b AS (SELECT 1) SELECT 1", "WITH a AS (WITH b AS (SELECT 1) SELECT 1) SELECT 1",
	"WITH a AS (EXPLAIN SELECT 1) SELECT 1", "WITH a AS (SHOW x) SELECT 1", "EXPLAIN WITH a AS (SELECT 1) SELECT 1",
	"WITH a AS (SELECT 1) EXPLAIN SELECT 1", "DELETE FROM t RETURNING *", "DELETE FROM t RETURNING pg_sleep(1)",
	"UPDATE t SET a = 1 RETURNING a, b AS c", "INSERT INTO t VALUES (1) RETURNING", "DELETE FROM t RETURNING * , *",
	"WITH select AS (SELECT 1) SELECT 1", "WITH a AS (SELECT 1), a AS (SELECT 2) SELECT 1", "WITH a AS (SELECT 1) SELECT * FROM a, a",
	"WITH a AS (DELETE FROM t RETURNING WITH (OLD AS o) *) SELECT 1", "WITH a AS (SELECT 1) SELECT 1 FOR UPDATE",
	"WITH a AS (SELECT lower('x')), b AS (SELECT pg_sleep(1)), c AS (INSERT INTO t VALUES (1)) SELECT upper('y') FROM a",
	"EXPLAIN ANALYZE DELETE FROM t RETURNING *", "EXPLAIN UPDATE t SET a = 1 RETURNING pg_sleep(1)",
}

// TestPgQuickMatchesParser proves the quick path against the parser: on
// every statement the quick path decides, its result must be the parser
// path's, field for field. It checks the seeds, every PostgreSQL keyword
// in every place the subset takes a name, and statements generated from
// the subset's grammar with mistakes mixed in.
func TestPgQuickMatchesParser(t *testing.T) {
	var cases []string
	cases = append(cases, pgQuickSeeds...)
	for kw := range pgKeywords {
		for _, tmpl := range []string{"SELECT %", "SELECT a FROM %", "SELECT %.a FROM t", "SELECT a.% FROM t",
			"SELECT %(1)", "SELECT pg_catalog.%(1)", "SELECT a %", "SELECT a FROM t %", "SHOW %",
			"SELECT a FROM t WHERE a = % ORDER BY 1", "SELECT 1 %",
			"DROP TABLE %", "TRUNCATE %", "DELETE FROM %", "UPDATE t SET % = 1", "INSERT INTO t (%) VALUES (1)",
			"VACUUM %", "VACUUM FULL %", "UPDATE t SET a = %", "UPDATE % SET a = 1", "INSERT INTO % VALUES (1)",
			"SELECT %(1) FROM t", "SELECT a FROM t WHERE % = 1", "SELECT a FROM t AS %", "SELECT a AS %",
			"SELECT a FROM %.b", "SHOW %.a", "SELECT a FROM t ORDER BY %", "SELECT % FROM t", "SELECT %, a",
			"SELECT a FROM t WHERE a = 1 %", "SELECT count(*) % FROM t", "DROP TABLE a, %", "TRUNCATE a.%",
			"SELECT a.b.% FROM t", "SELECT -% FROM t", "SELECT a FROM t WHERE NOT %", "SELECT 1 FROM t ORDER BY a %",
			"EXPLAIN (%) SELECT 1", "EXPLAIN % SELECT 1", "EXPLAIN (verbose, %) DELETE FROM t", "EXPLAIN %",
			"SELECT $%$x$%$", "WITH % AS (SELECT 1) SELECT 1", "WITH a AS (SELECT 1) SELECT % FROM a",
			"DELETE FROM t RETURNING %", "WITH a AS (SELECT %) SELECT 1", "WITH a AS (SELECT 1) % SELECT 1"} {
			cases = append(cases, strings.ReplaceAll(tmpl, "%", kw))
		}
	}
	rng := rand.New(rand.NewPCG(28, 1))
	n := 3000
	if testing.Short() {
		n = 500
	}
	for range n {
		cases = append(cases, pgGenerate(rng))
	}
	decided := 0
	for i, sql := range cases {
		if pgCompareQuick(t, sql) && i >= len(cases)-n {
			decided++
		}
	}
	// A quick path that decides nothing would pass the comparison
	// trivially; the generated statements are mostly in the subset.
	if decided < n/4 {
		t.Fatalf("the quick path decided only %d of %d generated statements", decided, n)
	}
	t.Logf("the quick path decided %d of %d generated statements", decided, n)
	for _, sql := range []string{"SELECT 1", "SHOW max_connections", "SELECT pg_terminate_backend(123)",
		"SELECT relname, n_live_tup FROM pg_stat_user_tables ORDER BY n_dead_tup DESC LIMIT 10"} {
		if _, ok := pgQuick(sql); !ok {
			t.Errorf("pgQuick(%q) went to the parser; it is in the subset", sql)
		}
	}
}

// pgCompareQuick fails t if the quick path decides sql differently from
// the parser, and reports whether the quick path decided it.
func pgCompareQuick(t testing.TB, sql string) bool {
	t.Helper()
	quick, ok := pgQuick(sql)
	if !ok {
		return false
	}
	if r, bad := precheck(sql); bad {
		t.Fatalf("pgQuick(%q) decided text precheck refuses (%+v)", sql, r)
	}
	if parsed := checkPostgresParsed(sql); quick != parsed {
		t.Errorf("pgQuick(%q) = %+v, the parser path says %+v", sql, quick, parsed)
	}
	return true
}

func FuzzPgQuickMatchesParser(f *testing.F) {
	for _, s := range pgQuickSeeds {
		f.Add(s)
	}
	rng := rand.New(rand.NewPCG(28, 2))
	for range 50 {
		f.Add(pgGenerate(rng))
	}
	f.Fuzz(func(t *testing.T, sql string) {
		if _, bad := precheck(sql); bad {
			return
		}
		pgCompareQuick(t, sql)
	})
}

// pgGenerate writes one statement of the quick path's subset, with
// occasional mistakes and near misses: keywords where names go, operators
// and literals outside the subset, missing or doubled spaces.
func pgGenerate(rng *rand.Rand) string {
	g := pgGen{rng: rng}
	n := 1 + g.n(3)/2
	for i := range n {
		if i > 0 {
			g.w(";")
		}
		switch g.n(12) {
		case 0, 1:
			g.w("SHOW")
			g.qname()
		case 2, 3, 4:
			g.writeStmt()
		case 5:
			g.explain()
		case 6:
			g.with()
		default:
			g.selectStmt()
		}
	}
	if g.n(4) == 0 {
		g.w(";")
	}
	return g.b.String()
}

type pgGen struct {
	rng   *rand.Rand
	b     strings.Builder
	depth int
}

func (g *pgGen) n(k int) int { return g.rng.IntN(k) }

// w writes a token, usually after a space, sometimes in another case.
func (g *pgGen) w(tok string) {
	if g.b.Len() > 0 && g.n(40) != 0 {
		g.b.WriteString([]string{" ", " ", " ", "\n", "\t", "  "}[g.n(6)])
	}
	switch g.n(6) {
	case 0:
		tok = strings.ToUpper(tok)
	case 1:
		tok = strings.ToLower(tok)
	}
	g.b.WriteString(tok)
}

var (
	pgGenNames = []string{"a", "b", "t", "x1", "pid", "state", "query", "relname", "pg_stat_activity",
		"public", "pg_catalog", "n_dead_tup", "_x", "usename", "datname", "name", "value", "type", "admin"}
	// pgGenUnreserved are unreserved keywords that continue an expression
	// or a clause when they follow one.
	pgGenUnreserved = []string{"version", "day", "at", "filter", "over", "set", "if", "session", "current",
		"operator", "nulls", "first", "restart", "cascade", "full", "name"}
	pgGenFuncs = []string{"lower", "upper", "now", "count", "length", "pg_size_pretty", "pg_database_size",
		"pg_terminate_backend", "pg_sleep", "nextval", "my_cleanup", "lo_unlink", "coalesce", "format", "max"}
	pgGenOps   = []string{"=", "<>", "!=", "<", ">", "<=", ">=", "+", "-", "*", "/"}
	pgGenOdd   = []string{"%", "||", "::", "=>", "^", "~", "@", "!", "[", "]", ".", "$1", "?", "#", "<->", "=-", "*-"}
	pgGenWords = []string{"and", "or", "not", "as", "from", "where", "is", "null", "in", "like", "between",
		"order", "by", "limit", "select", "user", "true", "interval", "int", "current_date", "all", "distinct",
		"group", "asc", "desc", "offset", "join", "on", "filter", "over", "within", "escape", "collate", "at"}
)

// name writes a plain name, or now and then a keyword or something odd.
func (g *pgGen) name() {
	switch g.n(60) {
	case 0, 1:
		g.w(pgGenWords[g.n(len(pgGenWords))])
	case 3, 4, 5:
		g.w(pgGenUnreserved[g.n(len(pgGenUnreserved))])
	case 2:
		g.w(pgGenOdd[g.n(len(pgGenOdd))])
	default:
		g.w(pgGenNames[g.n(len(pgGenNames))])
	}
}

func (g *pgGen) qname() {
	g.name()
	for range g.n(7) / 3 {
		g.b.WriteString(".")
		if g.n(40) == 0 {
			g.b.WriteString(" ")
		}
		g.b.WriteString(pgGenNames[g.n(len(pgGenNames))])
	}
}

func (g *pgGen) selectStmt() {
	g.w("SELECT")
	g.list(g.target)
	if g.n(2) == 0 {
		g.w("FROM")
		g.list(func() { g.qname(); g.alias() })
	}
	if g.n(2) == 0 {
		g.w("WHERE")
		g.expr()
	}
	if g.n(3) == 0 {
		g.w("ORDER")
		g.w("BY")
		g.list(func() {
			g.expr()
			if g.n(2) == 0 {
				g.w([]string{"ASC", "DESC", "ASC", "DESC", "NULLS FIRST"}[g.n(5)])
			}
		})
	}
	if g.n(3) == 0 {
		g.w("LIMIT")
		g.w([]string{"10", "0", "20", "5", "10", "0", "all", "1.5", "a"}[g.n(9)])
	}
}

// writeStmt writes one of the writing statements of the subset, or a
// near miss.
func (g *pgGen) writeStmt() {
	where := func() {
		if g.n(2) == 0 {
			g.w("WHERE")
			g.expr()
		}
	}
	switch g.n(7) {
	case 0:
		g.w("DROP")
		g.w([]string{"TABLE", "VIEW", "INDEX", "TABLE", "SCHEMA", "INDEX CONCURRENTLY"}[g.n(6)])
		if g.n(3) == 0 {
			g.w([]string{"IF EXISTS", "IF EXISTS", "IF"}[g.n(3)])
		}
		g.list(g.qname)
		if g.n(3) == 0 {
			g.w([]string{"CASCADE", "RESTRICT", "CASCADE RESTRICT"}[g.n(3)])
		}
	case 1:
		g.w("TRUNCATE")
		if g.n(2) == 0 {
			g.w([]string{"TABLE", "TABLE", "ONLY"}[g.n(3)])
		}
		g.list(g.qname)
	case 2:
		g.w("DELETE")
		if g.n(10) != 0 {
			g.w("FROM")
		}
		g.qname()
		where()
	case 3:
		g.w("UPDATE")
		g.qname()
		g.w("SET")
		g.list(func() {
			g.name()
			g.w([]string{"=", "=", "=", "<>"}[g.n(4)])
			g.expr()
		})
		where()
	case 4:
		g.w("INSERT")
		g.w("INTO")
		g.qname()
		if g.n(2) == 0 {
			g.w("(")
			g.list(g.name)
			g.w(")")
		}
		g.w("VALUES")
		g.list(func() {
			g.w("(")
			g.list(g.expr)
			g.w(")")
		})
	default:
		g.w("VACUUM")
		if g.n(2) == 0 {
			g.w([]string{"FULL", "FULL", "FREEZE", "VERBOSE"}[g.n(4)])
		}
		if g.n(2) == 0 {
			g.list(g.qname)
		}
	}
}

// with writes a statement with common table expressions, or a near miss.
func (g *pgGen) with() {
	g.w("WITH")
	if g.n(20) == 0 {
		g.w("RECURSIVE")
	}
	g.list(func() {
		g.name()
		if g.n(20) == 0 {
			g.w("(a)")
		}
		g.w("AS")
		if g.n(20) == 0 {
			g.w("MATERIALIZED")
		}
		g.w("(")
		g.dml()
		g.w(")")
	})
	g.dml()
}

// dml writes a SELECT, or a writing statement ending in RETURNING now and
// then.
func (g *pgGen) dml() {
	if g.n(2) == 0 {
		g.selectStmt()
		return
	}
	g.writeStmt()
	if g.n(2) == 0 {
		g.w("RETURNING")
		g.list(g.target)
	}
}

// explain writes an EXPLAIN of a SELECT or a writing statement, or a near
// miss.
func (g *pgGen) explain() {
	g.w("EXPLAIN")
	switch g.n(6) {
	case 0:
		g.w([]string{"ANALYZE", "ANALYSE", "ANALYZE VERBOSE", "VERBOSE", "VERBOSE ANALYZE"}[g.n(5)])
	case 1, 2:
		g.w("(")
		g.list(func() {
			g.w([]string{"ANALYZE", "VERBOSE", "costs", "buffers", "format", "ANALYSE", "settings", "FORMAT JSON", "analyze false", ""}[g.n(10)])
		})
		g.w(")")
	}
	if g.n(2) == 0 {
		g.selectStmt()
	} else {
		g.writeStmt()
	}
}

func (g *pgGen) list(item func()) {
	item()
	for range g.n(5) / 2 {
		g.w(",")
		item()
	}
}

func (g *pgGen) target() {
	if g.n(8) == 0 {
		g.w("*")
		return
	}
	g.expr()
	g.alias()
}

func (g *pgGen) alias() {
	switch g.n(4) {
	case 0:
		g.w("AS")
		g.name()
	case 1:
		g.name()
	}
}

func (g *pgGen) expr() {
	g.depth++
	defer func() { g.depth-- }()
	for range g.n(5) / 4 {
		g.w("NOT")
	}
	g.arith()
	if g.n(3) == 0 {
		g.w(pgGenOps[g.n(7)])
		g.arith()
	}
	if g.n(5) == 0 && g.depth < 3 {
		g.w([]string{"AND", "OR"}[g.n(2)])
		g.expr()
	}
}

func (g *pgGen) arith() {
	g.unary()
	for range g.n(6) / 4 {
		g.w(pgGenOps[7+g.n(4)])
		g.unary()
	}
}

func (g *pgGen) unary() {
	for range g.n(10) / 8 {
		g.w([]string{"-", "+"}[g.n(2)])
	}
	switch k := g.n(14); {
	case k < 3:
		if g.n(15) == 0 {
			g.w([]string{"1.5", "1e3", "1x", "0x10", "1_0", ".5"}[g.n(6)])
		} else {
			g.w([]string{"1", "42", "0", "007", "99999999999999999999", "true", "FALSE", "null"}[g.n(8)])
		}
	case k < 5:
		if g.n(15) == 0 {
			g.w([]string{"E'x'", "$$x$$", "'x'  'y'", "'x'\n'y'", "'a\\b'", "'open"}[g.n(6)])
		} else {
			g.w([]string{"'idle'", "'it''s'", "''", "'a;b'", "'--'", "'/*'", "$$x$$", "$q$a;b$q$", "$$$$", "$a$$$a$"}[g.n(10)])
		}
	case k < 8 && g.depth < 3:
		g.qname()
		g.b.WriteString("(")
		switch g.n(5) {
		case 0:
		case 1:
			g.b.WriteString("*")
		case 2:
			g.list(g.expr)
		default:
			g.w(pgGenNames[g.n(len(pgGenNames))])
		}
		g.b.WriteString(")")
	case k < 9 && g.depth < 3:
		g.w("(")
		g.expr()
		g.w(")")
	case k < 11:
		g.w(pgGenFuncs[g.n(len(pgGenFuncs))] + "(" + pgGenNames[g.n(len(pgGenNames))] + ")")
	default:
		g.qname()
	}
}

// TestPgKeywordsMatchGrammar compares pgKeywords and pgUnreserved with kwlist.h of the
// libpg_query sources in pg_query_go's module, from which the list was
// taken: a word the grammar treats specially must never pass for a name.
func TestPgKeywordsMatchGrammar(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/pganalyze/pg_query_go/v6").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/pganalyze/pg_query_go/v6: %v (the go command and the module cache are needed; run `go mod download`)", err)
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "parser", "include", "postgres", "parser", "kwlist.h")
	file, err := os.Open(path)
	if err != nil {
		t.Fatalf("PostgreSQL keyword list: %v", err)
	}
	defer file.Close()
	re := regexp.MustCompile(`^PG_KEYWORD\("([a-z_]+)", *[A-Z_]+, *([A-Z_]+)`)
	grammar, unreserved := map[string]bool{}, map[string]bool{}
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			grammar[m[1]] = true
			unreserved[m[1]] = m[2] == "UNRESERVED_KEYWORD"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(grammar) < 400 {
		t.Fatalf("%s: only %d keywords read", path, len(grammar))
	}
	for w := range grammar {
		if !pgKeywords[w] {
			t.Errorf("keyword %q of %s is missing from pgKeywords", w, path)
		}
	}
	for w := range pgKeywords {
		if !grammar[w] {
			t.Errorf("pgKeywords has %q, which %s does not list", w, path)
		}
	}
	for w := range grammar {
		if unreserved[w] != pgUnreserved[w] {
			t.Errorf("keyword %q: unreserved in %s is %v, in pgUnreserved %v", w, path, unreserved[w], pgUnreserved[w])
		}
	}
	for w := range pgUnreserved {
		if !grammar[w] {
			t.Errorf("pgUnreserved has %q, which %s does not list", w, path)
		}
	}
}
