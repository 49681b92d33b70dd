//go:build !tinygo && !pgquery_cgo

package sqlcheck

import (
	"container/list"
	"runtime/debug"
	"sync"
	"sync/atomic"
	_ "unsafe" // go:linkname
)

// Recycling the PostgreSQL parser instance.
//
// libpg_query reports a syntax error by longjmp. go-pgquery runs it on
// wazero, which implements setjmp with a snapshot of the WebAssembly
// stack and longjmp by installing that snapshot; wazero v1.12.0 clones the
// stack for a snapshot at its length plus 16 bytes, so every syntax error
// leaves the instance's stack 16 bytes longer for good, and every later
// parse (each takes a snapshot) allocates and clears the longer stack. In a
// long-running bot the cost of a parse would grow without bound with the
// number of syntax errors it has ever seen.
//
// go-pgquery keeps its instances in an unexported pool and exports nothing
// that closes or replaces one. The pool is reached here by go:linkname:
// after pgRecycleAfter errors, sqlcheck empties it (under pgMu no instance
// is in use), the library's finalizer closes the dropped instance's
// runtime, and the next parse builds a fresh one. That reaches into the
// library's private state, so it is done only with the exact version it was
// written against (pgqueryVersion, checked from the build information);
// with any other version recycling is off and TestPgParseCostBounded
// fails, so an upgrade has to look again (ideally at an upstream fix that
// makes this unnecessary).

//go:linkname pgqueryPool github.com/wasilibs/go-pgquery/parser.abiPool
var pgqueryPool *list.List

//go:linkname pgqueryPoolMu github.com/wasilibs/go-pgquery/parser.abiPoolMu
var pgqueryPoolMu sync.Mutex

const (
	pgqueryModule  = "github.com/wasilibs/go-pgquery"
	pgqueryVersion = "v0.0.0-20260728010200-155ebad2880e"
)

// pgRecycleAfter is how many parser errors an instance sees before it is
// replaced: its stack grows by at most 64 KiB (16 bytes each), and the new
// instance's compile (about 1.5 s of CPU) is spread over 4,096 errors.
const pgRecycleAfter = 4096

var (
	// pgErrors counts errors since the instance was last replaced (pgMu).
	pgErrors int
	// pgRecycles counts replacements, for tests and the benchmarks.
	pgRecycles atomic.Int64
	// pgRecycleOff says why recycling is off, empty when it is on.
	pgRecycleOff = pgRecycleCheck()
)

func pgRecycleEnabled() bool { return pgRecycleOff == "" }

// pgRecycleCheck returns why recycling cannot be used in this build, or "".
// A test binary's build information lists no modules; there
// TestPgqueryVersionPinned checks go.mod instead.
func pgRecycleCheck() string {
	if pgqueryPool == nil {
		return "go-pgquery's instance pool is not there"
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "no build information to check the go-pgquery version against"
	}
	if len(info.Deps) == 0 {
		return "" // a test binary: TestPgqueryVersionPinned checked go.mod
	}
	for _, m := range info.Deps {
		if m.Path != pgqueryModule {
			continue
		}
		if m.Replace != nil {
			return "go-pgquery is replaced (" + m.Replace.Path + " " + m.Replace.Version + ")"
		}
		if m.Version != pgqueryVersion {
			return "go-pgquery is " + m.Version + ", recycling was written against " + pgqueryVersion
		}
		return ""
	}
	return "go-pgquery is not in the build information"
}

// pgNoteError counts a parser error and replaces the instance after
// pgRecycleAfter of them. The caller holds pgMu.
func pgNoteError() {
	pgErrors++
	if pgErrors >= pgRecycleAfter {
		pgRecycle()
	}
}

// pgRecycle drops every pooled parser instance, so that the next parse
// builds a fresh one. The caller holds pgMu, so none is in use.
func pgRecycle() {
	pgErrors = 0
	if !pgRecycleEnabled() {
		return
	}
	pgqueryPoolMu.Lock()
	pgqueryPool.Init()
	pgqueryPoolMu.Unlock()
	pgRecycles.Add(1)
}
