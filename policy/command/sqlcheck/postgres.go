package sqlcheck

import (
	"fmt"
	"strings"
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"
	pgquery "github.com/wasilibs/go-pgquery"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// pgParse and pgScan are the PostgreSQL grammar: libpg_query run as
// WebAssembly. The library compiles the module afresh for every instance it
// adds to its pool, which costs seconds of CPU and tens of megabytes each,
// so every use goes through pgMu: one instance per process, compiled once,
// reused by every call. A parse takes well under a millisecond, far less
// than a second compile would. The instance is replaced after
// pgRecycleAfter syntax errors (see pgrecycle.go).
var (
	pgMu    sync.Mutex
	pgParse = func(sql string) (*pg.ParseResult, error) {
		pgMu.Lock()
		defer pgMu.Unlock()
		tree, err := pgquery.Parse(sql)
		if err != nil {
			pgNoteError()
		}
		return tree, err
	}
	pgScan = func(sql string) (*pg.ScanResult, error) {
		pgMu.Lock()
		defer pgMu.Unlock()
		scan, err := pgquery.Scan(sql)
		if err != nil {
			pgNoteError()
		}
		return scan, err
	}
)

// Warm compiles the PostgreSQL grammar now, so that the first psql command
// a person asks about does not wait for it. A server calls it in the
// background at start; it is safe to call at any time.
func Warm() {
	_, _ = pgParse("SELECT 1")
}

// checkPostgres decides sql with the quick path when it is written in the
// quick path's subset, or else parses it with the PostgreSQL grammar.
func checkPostgres(sql string) Result {
	if r, ok := pgQuick(sql); ok {
		return r
	}
	return checkPostgresParsed(sql)
}

// checkPostgresParsed parses sql with the PostgreSQL grammar and decides
// every statement from its syntax tree.
func checkPostgresParsed(sql string) (res Result) {
	defer func() {
		// The parser runs as WebAssembly; a trap in it surfaces as a panic.
		if p := recover(); p != nil {
			res = unparseable(fmt.Sprint("parser failed: ", p))
		}
	}()
	if r, bad := pgEscapes(sql); bad {
		return r
	}
	tree, err := pgParse(sql)
	if err != nil {
		return unparseable(err.Error())
	}
	if len(tree.Stmts) == 0 {
		return unknown("no SQL statement (only comments)")
	}
	var kinds []string
	for _, raw := range tree.Stmts {
		if raw.Stmt == nil {
			return unknown("empty statement")
		}
		w := pgWalker{}
		w.walk(raw.Stmt.ProtoReflect())
		if w.res != nil {
			return *w.res
		}
		kinds = addKind(kinds, w.kind)
	}
	return reads(kinds, len(tree.Stmts))
}

// pgEscapes refuses a plain string literal that contains a backslash: what
// it means depends on the server's standard_conforming_strings. With the
// setting off, 'a\'; DROP TABLE t; --' is two statements, not one string, and
// the grammar here reads with it on. Text without backslashes reads the same
// either way, so only text with one pays for the scan.
func pgEscapes(sql string) (Result, bool) {
	if strings.IndexByte(sql, '\\') < 0 {
		return Result{}, false
	}
	scan, err := pgScan(sql)
	if err != nil {
		return unparseable(err.Error()), true
	}
	for _, tok := range scan.Tokens {
		if tok.Token != pg.Token_SCONST || tok.Start < 0 || int(tok.End) > len(sql) || tok.Start > tok.End {
			continue
		}
		text := sql[tok.Start:tok.End]
		if strings.HasPrefix(text, "'") && strings.IndexByte(text, '\\') >= 0 {
			return unknown("backslash in a string literal: its meaning depends on standard_conforming_strings"), true
		}
	}
	return Result{}, false
}

// pgWalker walks one statement's tree generically, through protobuf
// reflection, so that every node is visited whatever its type: a node type
// the walker does not know is not read-only.
type pgWalker struct {
	res  *Result
	kind string // the statement's kind, for a read verdict
}

func (w *pgWalker) fail(r Result) {
	if w.res == nil {
		w.res = &r
	}
}

func (w *pgWalker) walk(m protoreflect.Message) {
	if w.res != nil {
		return
	}
	w.node(m)
	if w.res != nil {
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			w.fail(unknown("unexpected map in the syntax tree"))
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len() && w.res == nil; i++ {
				w.walk(l.Get(i).Message())
			}
		case fd.Message() != nil:
			w.walk(v.Message())
		}
		return w.res == nil
	})
}

// pgReadNodes are node types that read, or only carry values, names and
// structure. Statements, clauses and expressions not listed here (INSERT,
// IntoClause, LockingClause, CurrentOfExpr, ...) are not read-only.
var pgReadNodes = wordSet(`Node List Integer Float Boolean String BitString A_Const
	Alias RangeVar ColumnRef ParamRef A_Star A_Indices A_Indirection A_ArrayExpr ResTarget
	SortBy WindowDef RangeSubselect RangeFunction RangeTableFunc RangeTableFuncCol ColumnDef
	CollateClause GroupingSet GroupingFunc WithClause CommonTableExpr CTESearchClause
	CTECycleClause JoinExpr BoolExpr NullTest BooleanTest SubLink CaseExpr CaseWhen RowExpr
	CoalesceExpr MinMaxExpr SQLValueFunction XmlExpr XmlSerialize NamedArgExpr
	JsonFormat JsonReturning JsonValueExpr JsonOutput JsonArgument JsonFuncExpr
	JsonTablePathSpec JsonTable JsonTableColumn JsonKeyValue JsonParseExpr JsonScalarExpr
	JsonSerializeExpr JsonObjectConstructor JsonArrayConstructor JsonArrayQueryConstructor
	JsonAggConstructor JsonObjectAgg JsonArrayAgg JsonIsPredicate JsonBehavior
	SelectStmt VariableShowStmt`)

// pgStatementNames name statement node types for reasons.
var pgStatementNames = map[string]string{
	"InsertStmt": "INSERT", "UpdateStmt": "UPDATE", "DeleteStmt": "DELETE", "MergeStmt": "MERGE",
	"TruncateStmt": "TRUNCATE", "DropStmt": "DROP", "DropdbStmt": "DROP DATABASE",
	"DropRoleStmt": "DROP ROLE", "DropTableSpaceStmt": "DROP TABLESPACE",
	"DropOwnedStmt": "DROP OWNED", "DropSubscriptionStmt": "DROP SUBSCRIPTION",
	"AlterTableStmt": "ALTER TABLE", "AlterSystemStmt": "ALTER SYSTEM", "AlterRoleStmt": "ALTER ROLE",
	"AlterDatabaseStmt": "ALTER DATABASE", "AlterDatabaseSetStmt": "ALTER DATABASE",
	"AlterRoleSetStmt": "ALTER ROLE", "AlterSeqStmt": "ALTER SEQUENCE", "AlterOwnerStmt": "ALTER OWNER",
	"RenameStmt": "ALTER ... RENAME", "CreateStmt": "CREATE TABLE", "CreateTableAsStmt": "CREATE TABLE AS",
	"CreateFunctionStmt": "CREATE FUNCTION", "CreateRoleStmt": "CREATE ROLE", "CreatedbStmt": "CREATE DATABASE",
	"CreateSchemaStmt": "CREATE SCHEMA", "CreateExtensionStmt": "CREATE EXTENSION", "IndexStmt": "CREATE INDEX",
	"ViewStmt": "CREATE VIEW", "CreateSeqStmt": "CREATE SEQUENCE", "CreateTrigStmt": "CREATE TRIGGER",
	"RuleStmt": "CREATE RULE", "CreatePolicyStmt": "CREATE POLICY", "DefineStmt": "CREATE",
	"GrantStmt": "GRANT", "GrantRoleStmt": "GRANT", "CopyStmt": "COPY", "CallStmt": "CALL", "DoStmt": "DO",
	"VariableSetStmt": "SET", "ListenStmt": "LISTEN", "NotifyStmt": "NOTIFY", "UnlistenStmt": "UNLISTEN",
	"LockStmt": "LOCK", "VacuumStmt": "VACUUM", "ClusterStmt": "CLUSTER", "ReindexStmt": "REINDEX",
	"CheckPointStmt": "CHECKPOINT", "RefreshMatViewStmt": "REFRESH MATERIALIZED VIEW",
	"PrepareStmt": "PREPARE", "ExecuteStmt": "EXECUTE", "DeallocateStmt": "DEALLOCATE",
	"DeclareCursorStmt": "DECLARE", "FetchStmt": "FETCH", "ClosePortalStmt": "CLOSE",
	"LoadStmt": "LOAD", "DiscardStmt": "DISCARD", "CommentStmt": "COMMENT", "SecLabelStmt": "SECURITY LABEL",
	"ReassignOwnedStmt": "REASSIGN OWNED", "ConstraintsSetStmt": "SET CONSTRAINTS",
	"ImportForeignSchemaStmt": "IMPORT FOREIGN SCHEMA", "CreateSubscriptionStmt": "CREATE SUBSCRIPTION",
	"AlterSubscriptionStmt": "ALTER SUBSCRIPTION", "CreatePublicationStmt": "CREATE PUBLICATION",
	"AlterPublicationStmt": "ALTER PUBLICATION", "TransactionStmt": "transaction control",
	"ExplainStmt": "EXPLAIN", "SelectStmt": "SELECT", "VariableShowStmt": "SHOW",
}

// pgFeatureReasons explain nodes that make an otherwise reading statement
// write.
var pgFeatureReasons = map[string]Result{
	"IntoClause":       {Severity: Medium, Reason: "SELECT ... INTO creates a table"},
	"LockingClause":    {Severity: Medium, Reason: "SELECT ... FOR UPDATE/SHARE locks rows"},
	"OnConflictClause": {Severity: Medium, Reason: "statement INSERT writes"},
	"CurrentOfExpr":    {Severity: Medium, Reason: "WHERE CURRENT OF needs a cursor"},
	"SetToDefault":     {Severity: Medium, Reason: "DEFAULT belongs to a writing statement"},
	"MultiAssignRef":   {Severity: Medium, Reason: "statement UPDATE writes"},
}

// node decides one node of the tree; its children are walked after it.
func (w *pgWalker) node(m protoreflect.Message) {
	name := string(m.Descriptor().Name())
	if w.kind == "" && name != "Node" {
		w.kind = pgStatementNames[name]
		if w.kind == "" {
			w.kind = name
		}
	}
	switch x := m.Interface().(type) {
	case *pg.FuncCall:
		w.funcCall(x)
		return
	case *pg.TypeCast:
		return
	case *pg.TypeName:
		w.typeName(x)
		return
	case *pg.A_Expr:
		w.operator(x.Name)
		return
	case *pg.SortBy:
		if len(x.UseOp) > 0 { // ORDER BY a USING op
			w.operator(x.UseOp)
		}
		return
	case *pg.SubLink:
		if len(x.OperName) > 0 { // a op ANY (SELECT ...)
			w.operator(x.OperName)
		}
		return
	case *pg.ExplainStmt:
		for _, o := range x.Options {
			if d := o.GetDefElem(); d != nil && strings.EqualFold(d.Defname, "analyze") {
				w.fail(unknown("EXPLAIN ANALYZE executes the statement"))
				return
			}
		}
		return
	case *pg.DefElem:
		return // options of EXPLAIN and BEGIN; writing statements are refused whole
	case *pg.TransactionStmt:
		switch x.Kind {
		case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START,
			pg.TransactionStmtKind_TRANS_STMT_COMMIT, pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
			return
		}
		w.fail(unknown("transaction statement " + strings.TrimPrefix(x.Kind.String(), "TRANS_STMT_") + " is not read-only"))
		return
	case *pg.VariableSetStmt:
		if x.Kind == pg.VariableSetKind_VAR_SET_VALUE && pgSessionSettings[strings.ToLower(x.Name)] {
			return
		}
		w.fail(unknown("SET " + x.Name + " is not on the list of harmless session settings"))
		return
	case *pg.RangeTableSample:
		if len(x.Method) == 1 && pgSampleMethods[pgString(x.Method[0])] {
			return
		}
		w.fail(unknown("TABLESAMPLE method " + pgName(x.Method) + " is not on the read-only list"))
		return
	}
	if pgReadNodes[name] {
		return
	}
	if r, ok := pgFeatureReasons[name]; ok {
		w.fail(r)
		return
	}
	if stmt, ok := pgStatementNames[name]; ok {
		w.fail(writes(stmt))
		return
	}
	w.fail(unknown("construct " + name + " is not known to be read-only"))
}

// funcCall allows a call only of a listed function, unqualified or in
// pg_catalog.
func (w *pgWalker) funcCall(f *pg.FuncCall) {
	name := pgName(f.Funcname)
	fn, ok := pgCatalogName(f.Funcname)
	if !ok || !pgReadFunctions[fn] {
		w.fail(notListed(name))
	}
}

// typeName allows only built-in types: a cast to another type can run a
// user-defined cast or input function.
func (w *pgWalker) typeName(t *pg.TypeName) {
	if t.PctType {
		w.fail(unknown("%TYPE reference is not known to be read-only"))
		return
	}
	typ, ok := pgCatalogName(t.Names)
	if !ok || !pgReadTypes[typ] {
		w.fail(unknown("type " + pgName(t.Names) + " is not on the list of built-in types"))
	}
}

// operator allows only built-in operator symbols: a user-defined operator
// runs a user-defined function.
func (w *pgWalker) operator(names []*pg.Node) {
	op, ok := pgCatalogName(names)
	if !ok || !pgReadOperators[op] {
		w.fail(unknown("operator " + pgName(names) + " is not on the read-only list"))
	}
}

// pgCatalogName returns the last part of a qualified name, and false if it
// is qualified by a schema other than pg_catalog.
func pgCatalogName(names []*pg.Node) (string, bool) {
	switch len(names) {
	case 1:
		return pgString(names[0]), true
	case 2:
		if pgString(names[0]) == "pg_catalog" {
			return pgString(names[1]), true
		}
	}
	return "", false
}

// pgName is a qualified name as written, for reasons.
func pgName(names []*pg.Node) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = pgString(n)
	}
	return strings.Join(parts, ".")
}

func pgString(n *pg.Node) string {
	if s := n.GetString_(); s != nil {
		return s.Sval
	}
	return "?"
}

// pgSampleMethods are the built-in TABLESAMPLE methods.
var pgSampleMethods = wordSet("system bernoulli")

// pgSessionSettings may be SET within a read: they bound or label the
// session and cannot widen what it may do. search_path is not here: it
// decides which schema's function an unqualified name calls.
var pgSessionSettings = wordSet(`statement_timeout lock_timeout idle_in_transaction_session_timeout
	application_name timezone datestyle intervalstyle extra_float_digits bytea_output`)

// pgReadOperators are PostgreSQL's built-in operator symbols and the
// names the grammar gives to BETWEEN forms.
var pgReadOperators = withPhrases(wordSet(`= <> != < > <= >= + - * / % ^ |/ ||/ @ & | # ~ << >> ||
	~~ ~~* !~~ !~~* ~* !~ !~* @> <@ && ? ?| ?& -> ->> #> #>> #- @? @@ @@@ <-> -|- &< &> <<|
	|>> &<| |&> <^ >^ ?# ?- ?-| ?|| ## ~= <<= >>= ^@ !!
	BETWEEN`), "NOT BETWEEN", "BETWEEN SYMMETRIC", "NOT BETWEEN SYMMETRIC")
