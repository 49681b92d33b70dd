package redis

import (
	"fmt"
	"sync"
	"testing"

	"github.com/vigilops/vigil/policy/audit"
)

// testAuditCrowd: two replicas append a crowd of records at once, each
// group-committing its own and racing the other for the head. Every record is in the chain
// once, the chain verifies, and each caller got the record stored at its
// place.
func testAuditCrowd(t *testing.T, open func(prefix string) *Store) {
	prefix := testPrefix(t)
	stores := []*Store{open(prefix), open(prefix)}
	ctx := t.Context()
	const each = 300
	var wg sync.WaitGroup
	start := make(chan struct{})
	var mu sync.Mutex
	returned := map[string]audit.Record{}
	var failed []error
	for i := range 2 * each {
		st := stores[i%2]
		wg.Go(func() {
			<-start
			id := fmt.Sprintf("r%d-%d", i%2, i)
			r, err := st.AppendAudit(ctx, audit.Record{Actor: "U1", Action: audit.Allow, Outcome: id})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, err)
				return
			}
			returned[id] = r
		})
	}
	close(start)
	wg.Wait()
	if len(failed) > 0 {
		t.Fatalf("%d of %d appends failed (first: %v)", len(failed), 2*each, failed[0])
	}
	recs, err := stores[0].RecentAudit(ctx, 4*each)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2*each {
		t.Fatalf("%d records in the chain, want %d", len(recs), 2*each)
	}
	if err := audit.VerifyChain(recs); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, r := range recs {
		if seen[r.Outcome] {
			t.Fatalf("record %s is in the chain twice", r.Outcome)
		}
		seen[r.Outcome] = true
		got, ok := returned[r.Outcome]
		if !ok {
			t.Fatalf("record %d (%s) was appended by no caller", i+1, r.Outcome)
		}
		if got.Seq != r.Seq || got.Hash != r.Hash {
			t.Fatalf("caller of %s got record %d (%s), the chain has %d (%s)", r.Outcome, got.Seq, got.Hash, r.Seq, r.Hash)
		}
	}
}

func TestAuditCrowdTwoReplicas(t *testing.T) {
	requireRedis(t)
	testAuditCrowd(t, func(prefix string) *Store { return openStore(t, prefix) })
}
