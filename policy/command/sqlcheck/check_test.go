package sqlcheck

import (
	"strings"
	"testing"
)

// checkCase is one statement and what Check must say about it: read-only or
// not, and a piece of the reason, which must name what decided.
type checkCase struct {
	sql    string
	read   bool
	reason string
}

func runCases(t *testing.T, d Dialect, cases []checkCase) {
	t.Helper()
	for _, c := range cases {
		r := Check(c.sql, d)
		if r.ReadOnly != c.read || !strings.Contains(r.Reason, c.reason) {
			t.Errorf("Check(%q, %s) = read %v %q, want read %v with reason containing %q", c.sql, d, r.ReadOnly, r.Reason, c.read, c.reason)
		}
		if r.ReadOnly != (r.Severity == None) {
			t.Errorf("Check(%q, %s): read %v but severity %d", c.sql, d, r.ReadOnly, r.Severity)
		}
	}
}

func TestPostgres(t *testing.T) {
	runCases(t, PostgreSQL, []checkCase{
		// Daily reads.
		{"SELECT 1", true, "SELECT is read-only"},
		{"select pid, state, query from pg_stat_activity where state <> 'idle'", true, "SELECT"},
		{"SELECT pg_size_pretty(pg_database_size('app'))", true, "SELECT"},
		{"SELECT pg_catalog.pg_size_pretty(pg_catalog.pg_total_relation_size('t'::regclass))", true, "SELECT"},
		{"SHOW max_connections; SELECT version()", true, "SHOW, SELECT are read-only"},
		{"SHOW ALL", true, "SHOW"},
		{"EXPLAIN SELECT * FROM t WHERE id = 1", true, "EXPLAIN"},
		{"EXPLAIN (COSTS off, FORMAT json) SELECT 1", true, "EXPLAIN"},
		{"WITH x AS (SELECT 1 AS a) SELECT a FROM x", true, "SELECT"},
		{"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 5) SELECT sum(n) FROM r", true, "SELECT"},
		{"(SELECT 1) UNION (SELECT 2) ORDER BY 1", true, "SELECT"},
		{"SELECT count(*) FILTER (WHERE x > 1), rank() OVER (PARTITION BY a ORDER BY b) FROM t", true, "SELECT"},
		{"SELECT * FROM t, LATERAL (SELECT lower(name) FROM u WHERE u.id = t.id) s", true, "SELECT"},
		{"SELECT now() - interval '1 hour', current_setting('work_mem'), CURRENT_TIMESTAMP", true, "SELECT"},
		{"SELECT relname, n_dead_tup FROM pg_stat_user_tables ORDER BY n_dead_tup DESC LIMIT 10", true, "SELECT"},
		{"SELECT * FROM generate_series(1, 3) AS g(n)", true, "SELECT"},
		{"TABLE pg_settings", true, "SELECT"},
		{"VALUES (1, 'a'), (2, 'b')", true, "SELECT"},
		{"SELECT 'a;b', \"weird;name\" FROM \"t;DROP\"", true, "SELECT"},
		{"SELECT $$;DROP TABLE t;$$", true, "SELECT"},
		{"SELECT $tag$ pg_terminate_backend(1) $tag$", true, "SELECT"},
		{"SELECT E'it\\'s'", true, "SELECT"},
		{"SELECT U&'d\\0061t\\+000061'", true, "SELECT"},
		{"SELECT 1 /* outer /* nested */ still comment; DROP TABLE t */", true, "SELECT"},
		{"SELECT\f1\v", true, "SELECT"},
		{"BEGIN READ ONLY; SELECT 1; COMMIT", true, "transaction control, SELECT"},
		{"SET statement_timeout = '5s'; SELECT 1", true, "SET"},
		{"SELECT x::int, y::text, z::timestamptz, CAST(w AS numeric(10,2)) FROM t", true, "SELECT"},
		{"SELECT a FROM t WHERE b ~* '^x' AND c @> ARRAY[1] AND d IS DISTINCT FROM 2", true, "SELECT"},

		// Writes and unknowns.
		{"UPDATE users SET admin = true", false, "statement UPDATE writes"},
		{"DELETE FROM t", false, "statement DELETE writes"},
		{"DROP TABLE t", false, "statement DROP writes"},
		{"SELECT 1; DROP TABLE t", false, "statement DROP writes"},
		{"SELECT pg_terminate_backend(123)", false, "function pg_terminate_backend is not on the read-only list"},
		{"SELECT pg_catalog.pg_terminate_backend(123)", false, "function pg_catalog.pg_terminate_backend"},
		{"SELECT pg_terminate_backend/**/(123)", false, "function pg_terminate_backend"},
		{"SELECT pg_terminate_backend\f(123)", false, "function pg_terminate_backend"},
		{"SELECT \"pg_terminate_backend\"(123)", false, "function pg_terminate_backend"},
		{"SELECT U&\"\\0070g_cancel_backend\"(1)", false, "function pg_cancel_backend"},
		{"SELECT nextval('s')", false, "function nextval"},
		{"SELECT setval('s', 1)", false, "function setval"},
		{"SELECT lo_unlink(1234)", false, "function lo_unlink"},
		{"SELECT pg_reload_conf()", false, "function pg_reload_conf"},
		{"SELECT pg_read_file('/etc/passwd')", false, "function pg_read_file"},
		{"SELECT pg_sleep(3600)", false, "function pg_sleep"},
		{"SELECT dblink_exec('host=x', 'DROP TABLE t')", false, "function dblink_exec"},
		{"SELECT query_to_xml('DELETE FROM t RETURNING 1', true, true, '')", false, "function query_to_xml"},
		{"SELECT public.cleanup()", false, "function public.cleanup"},
		{"SELECT my_cleanup()", false, "function my_cleanup"},
		{"SELECT * FROM t ORDER BY pg_cancel_backend(pid)", false, "function pg_cancel_backend"},
		{"SELECT * FROM t WHERE id IN (SELECT setval('s', 9))", false, "function setval"},
		{"SELECT * FROM t, LATERAL (SELECT evil(t.id)) x", false, "function evil"},
		{"SELECT sum(x) OVER (ORDER BY evil(x)) FROM t", false, "function evil"},
		{"SELECT * FROM evil_srf()", false, "function evil_srf"},
		{"SELECT * INTO new_table FROM t", false, "SELECT ... INTO creates a table"},
		{"SELECT * FROM t FOR UPDATE", false, "FOR UPDATE/SHARE locks rows"},
		{"SELECT * FROM t FOR SHARE SKIP LOCKED", false, "locks rows"},
		{"WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", false, "statement DELETE writes"},
		{"WITH u AS (UPDATE t SET a = 1 RETURNING a) SELECT 1", false, "statement UPDATE writes"},
		{"EXPLAIN ANALYZE DELETE FROM t", false, "EXPLAIN ANALYZE executes"},
		{"EXPLAIN (ANALYZE, BUFFERS) SELECT 1", false, "EXPLAIN ANALYZE executes"},
		{"EXPLAIN DELETE FROM t", false, "statement DELETE writes"},
		{"EXPLAIN SELECT nextval('s')", false, "function nextval"},
		{"COPY t TO '/tmp/x'", false, "statement COPY writes"},
		{"COPY (SELECT 1) TO PROGRAM 'rm -rf /'", false, "statement COPY writes"},
		{"CALL do_things()", false, "statement CALL writes"},
		{"DO $$BEGIN DELETE FROM t; END$$", false, "statement DO writes"},
		{"NOTIFY ch, 'x'", false, "statement NOTIFY writes"},
		{"LISTEN ch", false, "statement LISTEN writes"},
		{"LOCK TABLE t", false, "statement LOCK writes"},
		{"VACUUM FULL t", false, "statement VACUUM writes"},
		{"PREPARE p AS SELECT 1", false, "statement PREPARE writes"},
		{"EXECUTE p", false, "statement EXECUTE writes"},
		{"SET search_path = evil, pg_catalog", false, "SET search_path"},
		{"SET ROLE postgres", false, "SET role"},
		{"PREPARE TRANSACTION 'x'", false, "PREPARE is not read-only"},
		{"COMMIT PREPARED 'x'", false, "COMMIT_PREPARED"},
		{"SELECT 'x\\'; DROP TABLE t; --'", false, "standard_conforming_strings"},
		{"SELECT 1 === 2", false, "operator ==="},
		{"SELECT 1 OPERATOR(evil.+) 2", false, "operator evil.+"},
		{"SELECT a FROM t ORDER BY a USING ===", false, "operator ==="},
		{"SELECT a FROM t WHERE a === ANY (SELECT b FROM u)", false, "operator ==="},
		{"SELECT a FROM t WHERE a = ANY (SELECT b FROM u) ORDER BY a USING <", true, "SELECT"},
		{"SELECT '1'::evil_type", false, "type evil_type"},
		{"SELECT * FROM t TABLESAMPLE evil_method(10)", false, "TABLESAMPLE method evil_method"},
		{"SELECT 1; INSERT INTO t VALUES (1)", false, "statement INSERT writes"},
		{"SELECT (", false, "unparseable SQL: syntax error"},
		{"-- only a comment", false, "no SQL statement"},
		{"", false, "empty SQL"},
		{"SELECT 1\x00; DROP TABLE t", false, "NUL byte"},
		{"SELECT '\xff'", false, "not valid UTF-8"},
		{"CREATE FUNCTION f() RETURNS int AS 'select 1' LANGUAGE sql", false, "CREATE FUNCTION"},
		{"TRUNCATE audit", false, "statement TRUNCATE writes"},
	})
}

func TestPostgresSeverity(t *testing.T) {
	for sql, want := range map[string]Severity{
		"SELECT 1":                           None,
		"DROP TABLE t":                       High,
		"TRUNCATE t":                         High,
		"DELETE FROM t":                      High,
		"ALTER TABLE t ADD COLUMN x int":     High,
		"UPDATE t SET a = 1":                 Medium,
		"SELECT pg_terminate_backend(1)":     Medium,
		"WITH d AS (DELETE FROM t) SELECT 1": High,
	} {
		if got := Check(sql, PostgreSQL).Severity; got != want {
			t.Errorf("Check(%q).Severity = %d, want %d", sql, got, want)
		}
	}
}

func TestMySQL(t *testing.T) {
	cases := []checkCase{
		{"SELECT 1", true, "SELECT is read-only"},
		{"SELECT user, host FROM mysql.user", true, "SELECT"},
		{"SHOW PROCESSLIST", true, "SHOW"},
		{"SHOW CREATE TABLE users", true, "SHOW"},
		{"SHOW SLAVE STATUS", true, "SHOW"},
		{"SHOW ENGINE INNODB STATUS", true, "SHOW"},
		{"show  engine innodb\nstatus;", true, "SHOW"},
		{"SHOW ENGINE INNODB STATUS; DROP TABLE t", false, "unparseable"},
		{"SHOW BINARY LOGS", true, "SHOW"},
		{"DESCRIBE users", true, "DESCRIBE"},
		{"DESC users", true, "DESCRIBE"},
		{"EXPLAIN SELECT * FROM t WHERE id = 1", true, "EXPLAIN"},
		{"SELECT COUNT(*) FROM orders WHERE created_at > NOW() - INTERVAL 1 HOUR", true, "SELECT"},
		{"SELECT table_schema, SUM(data_length + index_length) / 1024 / 1024 FROM information_schema.tables GROUP BY table_schema", true, "SELECT"},
		{"WITH x AS (SELECT 1 AS a) SELECT a FROM x", true, "SELECT"},
		{"SELECT 1 UNION SELECT 2", true, "SELECT"},
		{"SELECT `weird;name`, 'a;b' FROM `t;x`", true, "SELECT"},
		{"SELECT 1 -- ; DROP TABLE t", true, "SELECT"},
		{"SELECT 1 # ; DROP TABLE t", true, "SELECT"},
		{"SELECT @@global.max_connections, @@version", true, "SELECT"},
		{"SELECT CAST(x AS CHAR), CONVERT(y, SIGNED), DATE_FORMAT(NOW(), '%Y') FROM t", true, "SELECT"},
		{"SELECT LAST_INSERT_ID()", true, "SELECT"},
		{"SELECT DATE '2020-01-01', TIME '10:00:00', INSERT('abc', 1, 1, 'x'), CHAR(65 USING utf8mb4)", true, "SELECT"},
		{"SELECT TRIM(LEADING 'x' FROM a), POSITION('a' IN b), JSON_ARRAYAGG(a), NTH_VALUE(a, 2) OVER w FROM t WINDOW w AS (ORDER BY a)", true, "SELECT"},
		{"SELECT /*+ MAX_EXECUTION_TIME(1000) */ * FROM t1 NATURAL JOIN t2 USE INDEX (i)", true, "SELECT"},
		{"BEGIN; SELECT 1; COMMIT", true, "BEGIN, SELECT, COMMIT"},
		{"SET SESSION max_execution_time = 1000; SELECT 1", true, "SET"},
		{"USE app", true, "USE"},

		{"DROP DATABASE prod", false, "writes"},
		{"SELECT 1; DELETE FROM users", false, "statement DELETE writes"},
		{"SELECT * FROM t INTO OUTFILE '/tmp/x'", false, "SELECT ... INTO"},
		{"SELECT * INTO OUTFILE '/tmp/x' FROM t", false, "unparseable"},
		{"SELECT a FROM t INTO DUMPFILE '/tmp/x'", false, "unparseable"},
		{"SELECT 1 FROM t INTO @a", false, ""},
		{"SELECT * FROM t FOR UPDATE", false, "locks rows"},
		{"SELECT * FROM t LOCK IN SHARE MODE", false, "locks rows"},
		{"/*!50000 DROP TABLE t */", false, "DROP TABLE"},
		{"SELECT 1 /*!, sleep(10) */", false, "function sleep"},
		{"SELECT 1 /*M!, sleep(10) */", false, "MariaDB executable comment"},
		{"SELECT 1--1; DELETE FROM t", false, "statement DELETE writes"},
		{"SELECT get_lock('x', 10)", false, "function get_lock"},
		{"SELECT GET_LOCK/**/('x', 10)", false, "function get_lock"},
		{"SELECT release_lock('x')", false, "function release_lock"},
		{"SELECT load_file('/etc/passwd')", false, "function load_file"},
		{"SELECT sleep(100)", false, "function sleep"},
		{"SELECT benchmark(100000000, md5('x'))", false, "function benchmark"},
		{"SELECT sys_exec('rm -rf /')", false, "function sys_exec"},
		{"SELECT app.cleanup()", false, "function app.cleanup"},
		{"SELECT * FROM t ORDER BY sleep(1)", false, "function sleep"},
		{"SELECT (SELECT get_lock('a', 1)) FROM t", false, "function get_lock"},
		{"SELECT LAST_INSERT_ID(42)", false, "last_insert_id with an argument"},
		{"SELECT @a := 1", false, "assignment to variable"},
		{"EXPLAIN ANALYZE SELECT 1", false, "EXPLAIN ANALYZE executes"},
		{"EXPLAIN DELETE FROM t", false, "statement DELETE writes"},
		{"CALL cleanup()", false, "unparseable"},
		{"DO sleep(5)", false, "statement DO writes"},
		{"LOAD DATA INFILE '/tmp/x' INTO TABLE t", false, "LOAD DATA"},
		{"LOCK TABLES t READ", false, "LOCK TABLES"},
		{"PREPARE s FROM 'DELETE FROM t'", false, "PREPARE"},
		{"SET GLOBAL max_connections = 1", false, "SET max_connections"},
		{"SET sql_mode = ''", false, "SET sql_mode"},
		{"SET NAMES gbk", false, "SET"},
		{"KILL 42", false, "KILL"},
		{"FLUSH PRIVILEGES", false, "FLUSH"},
		{"SHUTDOWN", false, "SHUTDOWN"},
		{"TRUNCATE audit", false, "TRUNCATE"},
		{"GRANT ALL ON *.* TO x", false, "GRANT"},
		{"ROLLBACK TO SAVEPOINT a", false, "ROLLBACK TO SAVEPOINT"},
		{"SELECT 'a\\'; DROP TABLE t; -- '", false, "statement DROP"},
		{"SELECT \"a\\\"; DROP TABLE t; -- \"", false, "statement DROP"},
		{"SELECT 1 --\x01 x", false, "control character"},
		{"SELECT 'é\\'; DROP TABLE t; -- '", false, "multi-byte character before \\"},
		{"SELECT (", false, "unparseable SQL"},
		{"/* nothing */", false, "no SQL statement"},
	}
	runCases(t, MySQL, cases)
	runCases(t, MariaDB, cases)
}

func TestSQLite(t *testing.T) {
	runCases(t, SQLite, []checkCase{
		{"SELECT count(*) FROM jobs", true, "SELECT is read-only"},
		{"select name from sqlite_master where type = 'table'", true, "SELECT"},
		{"SELECT * FROM t WHERE a IN (SELECT b FROM u) AND EXISTS (SELECT 1) ORDER BY (a)", true, "SELECT"},
		{"WITH x(a, b) AS (SELECT 1, 2) SELECT a + b FROM x", true, "SELECT"},
		{"WITH x AS MATERIALIZED (SELECT 1) SELECT * FROM x", true, "SELECT"},
		{"SELECT CAST(a AS VARCHAR(10)), CAST(b AS INTEGER) FROM t", true, "SELECT"},
		{"SELECT CAST(a AS UNSIGNED BIG INT(10)) FROM t", true, "SELECT"},
		{"SELECT sum(x) OVER (PARTITION BY (y) ORDER BY z), count(*) FILTER (WHERE x > 1) FROM t", true, "SELECT"},
		{"SELECT * FROM pragma_table_info('t')", true, "SELECT"},
		{"SELECT j.value FROM t, json_each(t.doc) AS j", true, "SELECT"},
		{"SELECT \"abs\"(-1), [abs](-2), `abs`(-3)", true, "SELECT"},
		{"SELECT 'a;b', \"x;y\" FROM [t;z]", true, "SELECT"},
		{"SELECT replace(a, 'x', 'y') FROM t", true, "SELECT"},
		{"VALUES (1), (2)", true, "VALUES"},
		{"EXPLAIN QUERY PLAN SELECT * FROM t WHERE a = 1", true, "EXPLAIN"},
		{"PRAGMA integrity_check", true, "PRAGMA"},
		{"PRAGMA table_info(users)", true, "PRAGMA"},
		{"PRAGMA main.index_list('users')", true, "PRAGMA"},
		{"SELECT 1; SELECT 2;", true, "SELECT"},
		{"SELECT 1 /* unterminated comment runs to the end; DROP TABLE t", true, "SELECT"},
		{"BEGIN; SELECT 1; COMMIT", true, "transaction control, SELECT"},
		{"SELECT\f1", true, "SELECT"},

		{"DROP TABLE t", false, "statement DROP writes"},
		{"SELECT 1; DELETE FROM t", false, "statement DELETE writes"},
		{"INSERT INTO t VALUES (1)", false, "statement INSERT writes"},
		{"WITH x AS (SELECT 1) DELETE FROM t", false, "statement DELETE writes"},
		{"WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", false, "statement INSERT writes"},
		{"REPLACE INTO t VALUES (1)", false, "statement REPLACE writes"},
		{"SELECT writefile('/tmp/x', 'y')", false, "function writefile is not on the read-only list"},
		{"SELECT writefile/**/('/tmp/x', 'y')", false, "function writefile"},
		{"SELECT writefile\f('/tmp/x', 'y')", false, "function writefile"},
		{"SELECT \"writefile\"('/tmp/x', 'y')", false, "function writefile"},
		{"SELECT [load_extension]('/tmp/evil.so')", false, "function load_extension"},
		{"SELECT edit('x', 'vi')", false, "function edit"},
		{"SELECT readfile('/etc/shadow')", false, "function readfile"},
		{"SELECT * FROM fsdir('/')", false, "function fsdir"},
		{"SELECT sha3_query('DELETE FROM t')", false, "function sha3_query"},
		{"SELECT * FROM t ORDER BY writefile('/tmp/x', a)", false, "function writefile"},
		{"SELECT (SELECT writefile('/x', 1))", false, "function writefile"},
		{"SELECT filter(1)", false, "function filter"},
		{"SELECT over(1)", false, "function over"},
		{"WITH x(a) AS (SELECT writefile('/x', 1)) SELECT * FROM x", false, "function writefile"},
		{"SELECT CAST(writefile('/x', 1) AS TEXT)", false, "function writefile"},
		{"SELECT CAST(x AS 0 writefile('/x', 1))", false, "function writefile"},
		{"SELECT 1\v", false, "unparseable"},
		{"SELECT 'unterminated", false, "unparseable"},
		{"SELECT ?1", false, "parameter ?1"},
		{"SELECT :name", false, "parameter :name"},
		{"EXPLAIN DELETE FROM t", false, "EXPLAIN of a statement that is not a query"},
		{"PRAGMA journal_mode = WAL", false, "PRAGMA journal_mode = sets a value"},
		{"PRAGMA journal_mode(WAL)", false, "sets a value"},
		{"PRAGMA optimize", false, "PRAGMA optimize is not on the read-only list"},
		{"PRAGMA wal_checkpoint(TRUNCATE)", false, "PRAGMA wal_checkpoint"},
		{"ATTACH '/tmp/new.db' AS n", false, "statement ATTACH writes"},
		{"VACUUM", false, "statement VACUUM writes"},
		{"VACUUM INTO '/tmp/copy.db'", false, "statement VACUUM writes"},
		{"BEGIN IMMEDIATE", false, "BEGIN IMMEDIATE is not read-only"},
		{"SELECT 1 RETURNING 1", false, "RETURNING"},
		{"(SELECT 1)", false, "unparseable"},
		{"-- comment only", false, "no SQL statement"},
	})
}

func TestUnknownDialect(t *testing.T) {
	if r := Check("SELECT 1", Dialect(99)); r.ReadOnly || !strings.Contains(r.Reason, "dialect") {
		t.Errorf("Check with an unknown dialect = %+v, want write-or-unknown naming the dialect", r)
	}
}

func TestLongSQL(t *testing.T) {
	sql := "SELECT 1" + strings.Repeat(" ", MaxLen)
	for _, d := range []Dialect{PostgreSQL, MySQL, SQLite} {
		if r := Check(sql, d); r.ReadOnly || !strings.Contains(r.Reason, "longer") {
			t.Errorf("Check(long SQL, %s) = %+v, want write-or-unknown", d, r)
		}
	}
}

// TestDeepNesting: deeply nested input parses or fails cleanly, never
// crashes the parser.
func TestDeepNesting(t *testing.T) {
	sql := "SELECT " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000)
	for _, d := range []Dialect{PostgreSQL, MySQL, SQLite} {
		r := Check(sql, d)
		if r.Reason == "" {
			t.Errorf("Check(deep nesting, %s) gave no reason", d)
		}
	}
	// The PostgreSQL parser is still usable afterwards.
	if r := Check("SELECT 1", PostgreSQL); !r.ReadOnly {
		t.Errorf("after deep nesting, Check(SELECT 1) = %+v", r)
	}
}

// TestConcurrent: Check is safe for concurrent use (run with -race): the
// MySQL parsers are pooled and each PostgreSQL call takes its own module
// instance.
func TestConcurrent(t *testing.T) {
	inputs := []struct {
		sql  string
		d    Dialect
		read bool
	}{
		{"SELECT count(*) FROM t", PostgreSQL, true},
		{"SELECT pg_terminate_backend(1)", PostgreSQL, false},
		{"SHOW PROCESSLIST", MySQL, true},
		{"SELECT sleep(1)", MySQL, false},
		{"SELECT 1", SQLite, true},
		{"SELECT writefile('x', 1)", SQLite, false},
	}
	errs := make(chan string, 64)
	done := make(chan struct{})
	for g := 0; g < 2; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 20; i++ {
				in := inputs[(g+i)%len(inputs)]
				if r := Check(in.sql, in.d); r.ReadOnly != in.read {
					errs <- in.sql + ": " + r.Reason
				}
			}
		}()
	}
	for g := 0; g < 2; g++ {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Errorf("concurrent Check: %s", e)
	}
}

// TestNoSQLTextFunctions: no function that takes SQL text (or a cursor or
// a whole table, schema or database to export) is on a read list: the
// text would run as a statement the checker never saw.
func TestNoSQLTextFunctions(t *testing.T) {
	for _, fn := range []string{"ts_rewrite", "ts_stat", "query_to_xml", "query_to_xmlschema",
		"query_to_xml_and_xmlschema", "cursor_to_xml", "cursor_to_xmlschema", "table_to_xml",
		"table_to_xmlschema", "schema_to_xml", "database_to_xml", "dblink", "dblink_exec",
		"dblink_open", "dblink_fetch", "dblink_send_query", "dblink_get_result"} {
		if pgReadFunctions[fn] {
			t.Errorf("PostgreSQL function %s takes SQL text or exports a table but is on the read list", fn)
		}
		sql := "SELECT " + fn + "('a', 'SELECT 1')"
		if r := Check(sql, PostgreSQL); r.ReadOnly {
			t.Errorf("Check(%q) is read-only", sql)
		}
	}
	if r := Check("SELECT ts_rewrite('a & b'::tsquery, 'SELECT t, s FROM aliases')", PostgreSQL); r.ReadOnly {
		t.Errorf("ts_rewrite with a query text is read-only")
	}
	for _, fn := range []string{"sha3_query"} {
		if sqliteReadFunctions[fn] {
			t.Errorf("SQLite function %s runs SQL text but is on the read list", fn)
		}
	}
}
