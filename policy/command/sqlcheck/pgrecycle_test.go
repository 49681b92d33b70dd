//go:build !tinygo && !pgquery_cgo

package sqlcheck

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// pgBytesPerParse is the bytes allocated per parse of a valid statement
// that the quick path does not decide, so that it reaches the parser.
func pgBytesPerParse(t *testing.T) uint64 {
	t.Helper()
	const stmt = "SELECT a FROM t WHERE b ~ 'x'"
	if _, ok := pgQuick(stmt); ok {
		t.Fatalf("%q is decided by the quick path; the test needs one that reaches the parser", stmt)
	}
	const n = 50
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		if r := checkPostgresParsed(stmt); !r.ReadOnly {
			t.Fatalf("%q: %+v, want read-only", stmt, r)
		}
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / n
}

// TestPgParseCostBounded checks that syntax errors do not make every later
// parse dearer without bound. Each error unwinds the parser with longjmp,
// which wazero implements by installing a clone of the WebAssembly stack 16
// bytes longer than the one it replaces, and every parse copies that stack:
// without recycling, 10,000 errors would add 160 KB to every parse for the life
// of the process. The parser instance is recycled every pgRecycleAfter
// errors, so the growth stays under pgRecycleAfter*16 bytes.
func TestPgParseCostBounded(t *testing.T) {
	if !pgRecycleEnabled() {
		t.Fatalf("parser recycling is off: %s", pgRecycleOff)
	}
	Warm()
	fresh := pgBytesPerParse(t)
	// More errors than one recycling period, and enough that without
	// recycling their growth (16 bytes each) would exceed the bound below:
	// at least one recycle happens whatever errors earlier tests left, and
	// the test costs one grammar compile, not several.
	const errs = pgRecycleAfter + 1000
	for i := range errs {
		if r := checkPostgresParsed("SELECT FROM WHERE"); r.ReadOnly || r.Reason == "" {
			t.Fatalf("error %d: %+v, want an unparseable verdict", i, r)
		}
	}
	after := pgBytesPerParse(t)
	bound := fresh + pgRecycleAfter*16 + 4096
	t.Logf("bytes per parse: fresh %d, after %d syntax errors %d (bound %d); recycled %d times",
		fresh, errs, after, bound, pgRecycles.Load())
	if after > bound {
		t.Errorf("after %d syntax errors a parse allocates %d bytes, fresh %d: over the bound %d", errs, after, fresh, bound)
	}
	if pgRecycles.Load() == 0 {
		t.Error("the parser instance was never recycled")
	}
}

// TestPgqueryVersionPinned checks that go.mod requires the go-pgquery
// version pgrecycle.go was written against: recycling reaches into its
// private pool, so an upgrade must be looked at again. (A test binary's
// build information lists no modules, so the run-time check cannot.)
func TestPgqueryVersionPinned(t *testing.T) {
	mod, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := pgqueryModule + " " + pgqueryVersion
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == pgqueryModule {
			if got := f[0] + " " + f[1]; got != want {
				t.Fatalf("go.mod requires %s; pgrecycle.go reaches into %s: check the pool is still abiPool, a *list.List guarded by abiPoolMu, and update pgqueryVersion", got, want)
			}
			return
		}
		if strings.Contains(line, "replace") && strings.Contains(line, pgqueryModule) {
			t.Fatalf("go.mod replaces go-pgquery: %s", line)
		}
	}
	t.Fatalf("go.mod does not require %s", pgqueryModule)
}
