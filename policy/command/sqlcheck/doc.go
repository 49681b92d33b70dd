// Package sqlcheck decides whether SQL text is provably read-only, reading
// it with a real grammar of the server that will run it (SPEC P1, content
// inspection). It does no I/O: callers hand it the text a client would send
// and map the Result onto their own risk scale.
//
// Every dialect errs one way. A statement is read-only only when its whole
// syntax tree is made of constructs known to read (SELECT without INTO or a
// locking clause, SHOW, EXPLAIN without ANALYZE, DESCRIBE, plain
// transaction control, a few session settings) and every function it calls
// is on the dialect's explicit list of side-effect-free functions. Anything
// else, including text the grammar cannot parse, is write-or-unknown, and the
// Result's reason names the statement, function or feature that decided.
//
// The grammars:
//
//   - PostgreSQL: libpg_query (the PostgreSQL server's own parser) compiled
//     to WebAssembly and run by wazero, through github.com/wasilibs/go-pgquery:
//     pure Go, so the static CGO_ENABLED=0 build keeps working. Its first use
//     in a process compiles the module (about 1.5 s); each statement after
//     that costs about 60-250 µs, four to five times the cgo build's cost.
//     Short statements in a small subset of the grammar (SELECT of columns
//     and calls from tables, SHOW, a plain DROP, TRUNCATE, DELETE, UPDATE,
//     INSERT or VACUUM, EXPLAIN of one of them, WITH of them) are decided without it by pgQuick, with the verdict
//     the parser path gives, which tests compare on generated statements.
//     Every syntax error leaves the parser instance's stack larger, so the
//     instance is replaced after pgRecycleAfter of them (pgrecycle.go).
//   - MySQL and MariaDB: TiDB's MySQL parser (github.com/pingcap/tidb/pkg/parser),
//     read under every SQL mode that changes how text splits into tokens
//     (NO_BACKSLASH_ESCAPES, ANSI_QUOTES), since the server's mode is unknown.
//   - SQLite: a strict recogniser written here, following SQLite's tokenizer
//     exactly and accepting only the read-only subset (see sqlite.go).
package sqlcheck
