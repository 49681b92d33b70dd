package redis

import (
	"fmt"
	"sync"
	"testing"

	"github.com/vigilops/vigil/policy/audit"
)

// One replica under load appends audit records from hundreds of runs at
// once (a tool call each). Every record must make it into the chain: a
// record dropped for contention is a decision with no audit trail.
func TestAuditManyConcurrentAppendersOneReplica(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	const writers = 1000
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, writers)
	for i := range writers {
		wg.Go(func() {
			<-start
			if _, err := s.AppendAudit(ctx, audit.Record{Actor: fmt.Sprint("U", i), Action: audit.Allow}); err != nil {
				errs <- err
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	failed := 0
	var first error
	for err := range errs {
		if first == nil {
			first = err
		}
		failed++
	}
	if failed > 0 {
		t.Fatalf("%d of %d audit appends failed (first: %v)", failed, writers, first)
	}
	recs, err := s.RecentAudit(ctx, writers+1)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != writers {
		t.Fatalf("%d records, want %d", len(recs), writers)
	}
	if err := audit.VerifyChain(recs); err != nil {
		t.Fatal(err)
	}
}
