package sqlcheck

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	// The parser needs a value-expression implementation; test_driver is the
	// one the parser ships for use without TiDB's executor.
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// mysqlModes are the SQL modes text is read under. The server's mode is
// unknown and two of its flags change where strings and statements end:
// NO_BACKSLASH_ESCAPES makes 'a\' a whole string, ANSI_QUOTES makes "..." an
// identifier. Text is read-only only if it is read-only in every reading.
var mysqlModes = []mysql.SQLMode{
	0,
	mysql.ModeNoBackslashEscapes,
	mysql.ModeANSIQuotes,
	mysql.ModeNoBackslashEscapes | mysql.ModeANSIQuotes,
}

// mysqlParsers pools parsers: a parser is not safe for concurrent use.
var mysqlParsers = sync.Pool{New: func() any { return parser.New() }}

// checkMySQL parses sql with the MySQL grammar under every SQL mode and
// decides every statement from its syntax tree.
func checkMySQL(sql string, mariaDB bool) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			res = unparseable(fmt.Sprint("parser failed: ", p))
		}
	}()
	if r, bad := mysqlLexicalRisks(sql); bad {
		return r
	}
	if mysqlExtraShows[strings.ToUpper(strings.Join(strings.Fields(strings.TrimRight(sql, "; \t\n\r")), " "))] {
		return reads([]string{"SHOW"}, 1)
	}
	p := mysqlParsers.Get().(*parser.Parser)
	defer mysqlParsers.Put(p)
	p.SetMariaDB(mariaDB)
	var kinds []string
	n := 0
	for _, mode := range mysqlModes {
		// A mode flag changes nothing in text without the character it is
		// about: read such text once, not four times.
		if mode.HasNoBackslashEscapesMode() && strings.IndexByte(sql, '\\') < 0 ||
			mode.HasANSIQuotesMode() && strings.IndexByte(sql, '"') < 0 {
			continue
		}
		p.SetSQLMode(mode)
		stmts, _, err := p.Parse(sql, "utf8mb4", "")
		if err != nil {
			return unparseable(firstLine(err.Error()))
		}
		if len(stmts) == 0 {
			return unknown("no SQL statement (only comments)")
		}
		for _, stmt := range stmts {
			w := mysqlWalker{}
			stmt.Accept(&w)
			if w.res != nil {
				return *w.res
			}
			kinds = addKind(kinds, mysqlStatementName(stmt))
		}
		n = max(n, len(stmts))
	}
	return reads(kinds, n)
}

// mysqlExtraShows are whole statements, words only, that MySQL and
// MariaDB run as reports but TiDB's grammar does not parse. Text matches
// only if it is exactly one of them (white space and a final ";" aside).
var mysqlExtraShows = withPhrases(map[string]bool{},
	"SHOW ENGINE INNODB STATUS", "SHOW ENGINE INNODB MUTEX", "SHOW ENGINE PERFORMANCE_SCHEMA STATUS",
	"SHOW BINARY LOGS", "SHOW MASTER LOGS", "SHOW SLAVE HOSTS", "SHOW REPLICAS",
	"SHOW BINLOG EVENTS", "SHOW RELAYLOG EVENTS", "SHOW BINARY LOG STATUS", "SHOW ALL SLAVES STATUS",
	"SHOW ALL REPLICAS STATUS")

// mysqlLexicalRisks refuses text whose tokens the server could split
// differently from the grammar here:
//   - MariaDB's executable comments /*M! ... */ run on MariaDB but are plain
//     comments to this grammar;
//   - control characters: MySQL ends a "-- " comment at any control
//     character, this grammar only at white space;
//   - a non-ASCII byte right before a backslash or backtick: in a multi-byte
//     client character set (GBK, Big5, SJIS) the pair can be one character,
//     so the backslash no longer escapes or the backtick no longer quotes.
func mysqlLexicalRisks(sql string) (Result, bool) {
	if strings.Contains(sql, "/*M!") || strings.Contains(sql, "/*m!") {
		return unknown("MariaDB executable comment /*M! runs hidden SQL"), true
	}
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v', c == 0x7f:
			return unknown(fmt.Sprintf("control character %#02x in SQL", c)), true
		case c >= 0x80 && i+1 < len(sql) && (sql[i+1] == '\\' || sql[i+1] == '`'):
			return unknown("multi-byte character before " + string(sql[i+1]) + ": its meaning depends on the client character set"), true
		}
	}
	return Result{}, false
}

// mysqlWalker decides every node of one statement; ast's Accept visits all
// children generically.
type mysqlWalker struct {
	res *Result
}

func (w *mysqlWalker) fail(r Result) {
	if w.res == nil {
		w.res = &r
	}
}

func (w *mysqlWalker) Leave(n ast.Node) (ast.Node, bool) { return n, w.res == nil }

func (w *mysqlWalker) Enter(n ast.Node) (ast.Node, bool) {
	if w.res != nil {
		return n, true
	}
	switch x := n.(type) {
	case *ast.SelectStmt:
		if x.SelectIntoOpt != nil {
			w.fail(unknown("SELECT ... INTO writes a file or variables"))
		}
		if x.LockInfo != nil && x.LockInfo.LockType != ast.SelectLockNone {
			w.fail(unknown("SELECT ... " + x.LockInfo.LockType.String() + " locks rows"))
		}
	case *ast.FuncCallExpr:
		w.function(x.Schema.L, x.FnName.L, len(x.Args))
	case *ast.AggregateFuncExpr:
		w.function("", strings.ToLower(x.F), len(x.Args))
	case *ast.WindowFuncExpr:
		w.function("", strings.ToLower(x.Name), len(x.Args))
	case *ast.VariableExpr:
		if x.Value != nil {
			w.fail(unknown("assignment to variable @" + x.Name))
		}
	case *ast.ExplainStmt:
		if x.Analyze {
			w.fail(unknown("EXPLAIN ANALYZE executes the statement"))
		}
	case *ast.RollbackStmt:
		if x.SavepointName != "" {
			w.fail(unknown("ROLLBACK TO SAVEPOINT is not read-only"))
		}
	case *ast.BeginStmt:
		if x.AsOf != nil || x.CausalConsistencyOnly || x.Mode != "" {
			w.fail(unknown("BEGIN with options is not read-only"))
		}
	case *ast.SetStmt:
		for _, v := range x.Variables {
			w.setVariable(v)
		}
	case *ast.VariableAssignment:
		// decided with its SetStmt
	case ast.ValueExpr, ast.ParamMarkerExpr:
	case *ast.SetOprStmt, *ast.SetOprSelectList, *ast.FieldList, *ast.SelectField,
		*ast.TableRefsClause, *ast.Join, *ast.TableSource, *ast.TableName, *ast.OnCondition,
		*ast.ColumnNameExpr, *ast.ColumnName, *ast.BinaryOperationExpr,
		*ast.UnaryOperationExpr, *ast.BetweenExpr, *ast.CaseExpr, *ast.WhenClause,
		*ast.SubqueryExpr, *ast.CompareSubqueryExpr, *ast.ExistsSubqueryExpr,
		*ast.PatternInExpr, *ast.IsNullExpr, *ast.IsTruthExpr, *ast.PatternLikeOrIlikeExpr,
		*ast.PatternRegexpExpr, *ast.ParenthesesExpr, *ast.PositionExpr, *ast.RowExpr,
		*ast.ByItem, *ast.GroupByClause, *ast.HavingClause, *ast.OrderByClause, *ast.Limit,
		*ast.WithClause, *ast.CommonTableExpression, *ast.WindowSpec, *ast.PartitionByClause,
		*ast.FrameClause, *ast.FrameBound, *ast.SetCollationExpr, *ast.TimeUnitExpr,
		*ast.TrimDirectionExpr, *ast.GetFormatSelectorExpr, *ast.MaxValueExpr,
		*ast.DefaultExpr, *ast.MatchAgainst, *ast.FuncCastExpr, *ast.TableOptimizerHint,
		*ast.ShowStmt, *ast.ExplainForStmt, *ast.UseStmt, *ast.CommitStmt:
	default:
		name := mysqlNodeName(n)
		if _, ok := n.(ast.StmtNode); ok {
			w.fail(writes(name))
		} else {
			w.fail(unknown("construct " + name + " is not known to be read-only"))
		}
	}
	return n, w.res != nil
}

// function allows a call only of a listed built-in function; a
// database-qualified name is a stored function.
func (w *mysqlWalker) function(schema, name string, args int) {
	switch {
	case schema != "":
		w.fail(notListed(schema + "." + name))
	case mysqlInternalFunctions[name]:
	case mysqlNoArgFunctions[name]:
		if args > 0 {
			w.fail(unknown("function " + name + " with an argument sets a value"))
		}
	case !mysqlReadFunctions[name]:
		w.fail(notListed(name))
	}
}

// mysqlInternalFunctions are the names TiDB's grammar gives to literal and
// keyword syntax: DATE '...', TIME '...', TIMESTAMP '...', INSERT(),
// CHAR(... USING ...) and DEFAULT(col).
var mysqlInternalFunctions = map[string]bool{
	strings.ToLower(ast.DateLiteral): true, strings.ToLower(ast.TimeLiteral): true,
	strings.ToLower(ast.TimestampLiteral): true, ast.InsertFunc: true, ast.CharFunc: true,
	ast.DefaultFunc: true,
}

// mysqlSessionSettings may be SET (for the session only) within a read.
var mysqlSessionSettings = wordSet(`max_execution_time lock_wait_timeout time_zone
	group_concat_max_len net_read_timeout net_write_timeout`)

func (w *mysqlWalker) setVariable(v *ast.VariableAssignment) {
	name := strings.ToLower(v.Name)
	_, literal := v.Value.(ast.ValueExpr)
	if !v.IsSystem || v.IsGlobal || v.IsInstance || !literal || !mysqlSessionSettings[name] {
		w.fail(unknown("SET " + v.Name + " is not on the list of harmless session settings"))
	}
}

// mysqlStatementName names a statement for reasons: SelectStmt is SELECT,
// LoadDataStmt is LOAD DATA.
func mysqlStatementName(n ast.Node) string {
	switch x := n.(type) {
	case *ast.ExplainStmt:
		if s, ok := x.Stmt.(*ast.ShowStmt); ok && s.Tp == ast.ShowColumns {
			return "DESCRIBE"
		}
	case *ast.SetOprStmt:
		return "SELECT"
	}
	return mysqlNodeName(n)
}

// mysqlNodeName turns a node's Go type name into words: *ast.CreateTableStmt
// is "CREATE TABLE".
func mysqlNodeName(n ast.Node) string {
	t := reflect.TypeOf(n)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := strings.TrimSuffix(t.Name(), "Stmt")
	var b strings.Builder
	for i, r := range name {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
