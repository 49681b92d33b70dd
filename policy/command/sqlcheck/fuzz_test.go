package sqlcheck

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	pgquery "github.com/wasilibs/go-pgquery"
)

// The fuzz targets check two properties for every input: Check does not
// panic (a parser's panic is recovered and is never read-only), and an input the
// grammar reads as calling a function that is not on the list is never
// read-only. The calls are found independently of Check's walkers: in
// libpg_query's JSON output, by reflection over TiDB's structs, and by a
// deliberately simple token scan for SQLite.

// seeds are inputs shared by the three targets.
var seeds = []string{
	"SELECT 1", "SELECT pg_terminate_backend(1)", "SELECT f/**/(x) FROM t",
	"WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "SELECT 'a;b', \"c;d\"",
	"SELECT $$x$$, E'\\'', U&'\\0061'", "SELECT 1 /* a /* b */ c */", "EXPLAIN ANALYZE SELECT 1",
	"SELECT * FROM t ORDER BY evil(a)", "SELECT GET_LOCK('a', 1)", "SELECT 1 /*! , sleep(1) */",
	"SELECT `a;b` FROM `t`", "SHOW PROCESSLIST", "SELECT writefile('/x', 1)",
	"SELECT [abs](-1), \"abs\"(1)", "PRAGMA table_info(t)", "WITH x(a) AS (SELECT 1) SELECT a FROM x",
	"SELECT CAST(a AS VARCHAR(10)) FROM t", "SELECT count(*) FILTER (WHERE a) OVER (PARTITION BY (b))",
}

func addSeeds(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	for _, c := range fuzzCorpusCases() {
		f.Add(c)
	}
}

// fuzzCorpusCases are the statements of the table tests.
func fuzzCorpusCases() []string {
	return []string{
		"SELECT now() - interval '1 hour', current_setting('work_mem')",
		"SELECT * FROM t, LATERAL (SELECT lower(name) FROM u) s",
		"SELECT sum(x) OVER (ORDER BY evil(x)) FROM t",
		"SELECT * FROM t FOR UPDATE", "SELECT * INTO x FROM t",
		"SELECT 'a\\'; DROP TABLE t; -- '", "SELECT \"a\\\"; DROP TABLE t; -- \"",
		"SELECT 1 # ; DROP TABLE t", "SELECT 1--1; DELETE FROM t",
	}
}

func checkCommon(t *testing.T, sql string, d Dialect) Result {
	t.Helper()
	r := Check(sql, d)
	if r.Reason == "" {
		t.Fatalf("Check(%q, %s) gave no reason", sql, d)
	}
	if r.ReadOnly != (r.Severity == None) {
		t.Fatalf("Check(%q, %s): read-only %v with severity %d", sql, d, r.ReadOnly, r.Severity)
	}
	// A parser that panics (TiDB's value driver refuses some decimals) is
	// recovered into an unparseable verdict: never read-only.
	if r.ReadOnly && strings.Contains(r.Reason, "parser failed") {
		t.Fatalf("Check(%q, %s): read-only after %s", sql, d, r.Reason)
	}
	return r
}

func FuzzPostgres(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, sql string) {
		r := checkCommon(t, sql, PostgreSQL)
		if !r.ReadOnly {
			return
		}
		js, err := pgquery.ParseToJSON(sql)
		if err != nil {
			t.Fatalf("Check(%q) is read-only but the grammar rejects it: %v", sql, err)
		}
		var tree any
		if err := json.Unmarshal([]byte(js), &tree); err != nil {
			t.Fatalf("parse tree JSON: %v", err)
		}
		for _, name := range pgJSONCalls(tree, nil) {
			t.Fatalf("Check(%q) is read-only but it calls %s, which is not on the list", sql, name)
		}
	})
}

// pgJSONCalls returns the names of unlisted functions called anywhere in
// a libpg_query JSON tree.
func pgJSONCalls(v any, out []string) []string {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if k == "FuncCall" {
				call, _ := child.(map[string]any)
				var parts []string
				names, _ := call["funcname"].([]any)
				for _, n := range names {
					s, _ := n.(map[string]any)["String"].(map[string]any)
					sval, _ := s["sval"].(string)
					parts = append(parts, sval)
				}
				ok := len(parts) == 1 && pgReadFunctions[parts[0]] ||
					len(parts) == 2 && parts[0] == "pg_catalog" && pgReadFunctions[parts[1]]
				if !ok {
					out = append(out, strings.Join(parts, "."))
				}
			}
			out = pgJSONCalls(child, out)
		}
	case []any:
		for _, child := range x {
			out = pgJSONCalls(child, out)
		}
	}
	return out
}

func FuzzMySQL(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, sql string) {
		r := checkCommon(t, sql, MySQL)
		if !r.ReadOnly || mysqlExtraShows[strings.ToUpper(strings.Join(strings.Fields(strings.TrimRight(sql, "; \t\n\r")), " "))] {
			return
		}
		stmts, _, err := parser.New().Parse(sql, "utf8mb4", "")
		if err != nil {
			t.Fatalf("Check(%q) is read-only but the grammar rejects it: %v", sql, err)
		}
		for _, s := range stmts {
			for _, name := range mysqlReflectCalls(reflect.ValueOf(s), nil, map[uintptr]bool{}) {
				t.Fatalf("Check(%q) is read-only but it calls %s, which is not on the list", sql, name)
			}
		}
	})
}

// mysqlReflectCalls walks every exported and unexported field of TiDB's
// AST by reflection, not by its Accept methods, and returns the unlisted
// functions it finds.
func mysqlReflectCalls(v reflect.Value, out []string, seen map[uintptr]bool) []string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return out
		}
		if v.Kind() == reflect.Pointer {
			if seen[v.Pointer()] {
				return out
			}
			seen[v.Pointer()] = true
			if v.CanInterface() {
				switch x := v.Interface().(type) {
				case *ast.FuncCallExpr:
					if x.Schema.L != "" || !mysqlReadFunctions[x.FnName.L] && !mysqlNoArgFunctions[x.FnName.L] {
						out = append(out, x.FnName.L)
					}
				case *ast.AggregateFuncExpr:
					if !mysqlReadFunctions[strings.ToLower(x.F)] {
						out = append(out, x.F)
					}
				case *ast.WindowFuncExpr:
					if !mysqlReadFunctions[strings.ToLower(x.Name)] {
						out = append(out, x.Name)
					}
				}
			}
		}
		return mysqlReflectCalls(v.Elem(), out, seen)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			out = mysqlReflectCalls(v.Field(i), out, seen)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			out = mysqlReflectCalls(v.Index(i), out, seen)
		}
	}
	return out
}

func FuzzSQLite(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, sql string) {
		r := checkCommon(t, sql, SQLite)
		if !r.ReadOnly {
			return
		}
		toks, err := sqliteTokens(sql)
		if err != nil {
			t.Fatalf("Check(%q) is read-only but its tokens do not scan: %v", sql, err)
		}
		pragma := false // PRAGMA name(argument) is not a call
		for i := 0; i+1 < len(toks); i++ {
			if i == 0 || toks[i-1].kind == sqliteSemi {
				pragma = toks[i].word("PRAGMA")
			}
			if pragma {
				continue
			}
			if name, ok := sqliteOracleCall(toks, i); ok {
				t.Fatalf("Check(%q) is read-only but it calls %s, which is not on the list", sql, name)
			}
		}
	})
}

// sqliteOracleCall is a deliberately simpler rule than the recogniser's:
// a word or quoted name before "(" is a call of an unlisted function unless
// it is one of a few grammar words, follows AS and words only (a CAST
// type), or
// its parenthesis is followed by AS (a CTE column list).
func sqliteOracleCall(toks []sqliteTok, i int) (string, bool) {
	t := toks[i]
	if !toks[i+1].is("(") || t.kind != sqliteWord && t.kind != sqliteQuoted {
		return "", false
	}
	name := strings.ToLower(t.name)
	if t.kind == sqliteWord && oracleGrammar[t.name] || sqliteReadFunctions[name] {
		return "", false
	}
	for j := i - 1; j >= 0 && (toks[j].kind == sqliteWord || toks[j].kind == sqliteQuoted); j-- {
		if toks[j].word("AS") {
			return "", false // a type name: CAST(x AS UNSIGNED BIG INT(10))
		}
	}
	depth := 0
	for j := i + 1; j < len(toks); j++ {
		if toks[j].is("(") {
			depth++
		} else if toks[j].is(")") {
			depth--
			if depth == 0 {
				if j+1 < len(toks) && toks[j+1].word("AS") {
					return "", false
				}
				break
			}
		}
	}
	return name, true
}

var oracleGrammar = wordSet(`IN EXISTS VALUES AS FROM JOIN ON USING WHERE AND OR NOT SELECT CAST
	OVER FILTER BY WHEN THEN ELSE CASE BETWEEN IS HAVING UNION ALL INTERSECT EXCEPT DISTINCT
	LIMIT MATERIALIZED ESCAPE NULL ISNULL NOTNULL GROUP ORDER`)
