package sqlcheck

import "testing"

// Per-statement cost of each dialect, on a typical diagnostic query. The
// PostgreSQL benchmark excludes the one-time WebAssembly compilation, which
// BenchmarkPostgresFirstCall reports (run it with -benchtime=1x and
// -count=1: only the first call in a process pays it).
const benchQuery = `SELECT a.pid, a.usename, now() - a.query_start AS age, l.mode
	FROM pg_stat_activity a JOIN pg_locks l USING (pid)
	WHERE a.state <> 'idle' AND NOT l.granted ORDER BY age DESC LIMIT 20`

const benchMySQL = `SELECT table_schema, ROUND(SUM(data_length + index_length) / 1024 / 1024, 1)
	FROM information_schema.tables WHERE table_schema NOT IN ('mysql', 'sys')
	GROUP BY table_schema ORDER BY 2 DESC LIMIT 20`

const benchSQLite = `SELECT status, count(*), max(updated_at) FROM jobs
	WHERE created_at > datetime('now', '-1 hour') GROUP BY status ORDER BY 2 DESC LIMIT 20`

func benchCheck(b *testing.B, sql string, d Dialect) {
	if r := Check(sql, d); !r.ReadOnly {
		b.Fatalf("Check(%q, %s) = %+v, want read-only", sql, d, r)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = Check(sql, d)
	}
}

func BenchmarkPostgres(b *testing.B) { benchCheck(b, benchQuery, PostgreSQL) }
func BenchmarkMySQL(b *testing.B)    { benchCheck(b, benchMySQL, MySQL) }
func BenchmarkSQLite(b *testing.B)   { benchCheck(b, benchSQLite, SQLite) }

// BenchmarkPostgresFirstCall measures the first PostgreSQL check in a
// process, which compiles libpg_query's WebAssembly module.
func BenchmarkPostgresFirstCall(b *testing.B) {
	for b.Loop() {
		_ = Check("SELECT 1", PostgreSQL)
	}
}
