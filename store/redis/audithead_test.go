package redis

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/store/storetest"
)

func auditKey(t *testing.T, seed string) *audit.Key {
	t.Helper()
	k, err := audit.ParseKey([]byte(strings.Repeat(seed, 64)[:64]))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestAuditHeadConformance(t *testing.T) {
	requireRedis(t)
	storetest.RunAuditHead(t, func(t *testing.T, keys *audit.Keyring) storetest.AuditHeadStore {
		return openStoreWith(t, Options{Addr: redisAddr(), KeyPrefix: testPrefix(t), AuditKeys: keys})
	})
}

// Records cut off the log behind vigil's back (RPOP) are detected against
// the sealed head, which names the last record known to exist.
func TestAuditTruncationDetected(t *testing.T) {
	requireRedis(t)
	keys := audit.NewKeyring(auditKey(t, "t"))
	s := openStoreWith(t, Options{Addr: redisAddr(), KeyPrefix: testPrefix(t), AuditKeys: keys})
	ctx := t.Context()
	for i := range 6 {
		if _, err := s.AppendAudit(ctx, audit.Record{Time: time.Now().UTC(), Actor: "U1", Action: audit.Allow, Command: "uptime", Outcome: string(rune('a' + i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.rdb.RPop(ctx, s.keys.auditLog()).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.rdb.RPop(ctx, s.keys.auditLog()).Err(); err != nil {
		t.Fatal(err)
	}
	recs, err := s.RecentAudit(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	h, ok, err := s.AuditHead(ctx)
	if err != nil || !ok {
		t.Fatalf("AuditHead: %v %v", ok, err)
	}
	_, err = audit.Verify(recs, audit.VerifyOptions{Keys: keys, FromStart: true, Head: &h, RequireHead: true})
	var he *audit.HeadError
	if !errors.As(err, &he) || he.LastKnown != 6 || !strings.Contains(err.Error(), "records 5 to 6 were cut off") {
		t.Fatalf("Verify after RPOP: %v", err)
	}
	// Rewriting the head to match what is left takes the key.
	if err := s.rdb.HSet(ctx, s.keys.auditHead(), "seq", recs[3].Seq, "hash", recs[3].Hash).Err(); err != nil {
		t.Fatal(err)
	}
	h, _, _ = s.AuditHead(ctx)
	if _, err := audit.Verify(recs, audit.VerifyOptions{Keys: keys, FromStart: true, Head: &h, RequireHead: true}); err == nil ||
		!strings.Contains(err.Error(), "MAC does not match") {
		t.Fatalf("Verify against a rewritten head: %v", err)
	}
}

// A replica started with a new key moves the shared chain to it with one
// key_rotated record; replicas keep appending in order; verify needs both
// keys.
func TestAuditKeyRotationAcrossReplicas(t *testing.T) {
	requireRedis(t)
	prefix := testPrefix(t)
	oldKey, newKey := auditKey(t, "o"), auditKey(t, "n")
	a := openStoreWith(t, Options{Addr: redisAddr(), KeyPrefix: prefix, AuditKeys: audit.NewKeyring(oldKey)})
	ctx := t.Context()
	rec := func(actor string) audit.Record {
		return audit.Record{Time: time.Now().UTC(), Actor: actor, Action: audit.Allow}
	}
	for range 3 {
		if _, err := a.AppendAudit(ctx, rec("U_A")); err != nil {
			t.Fatal(err)
		}
	}
	b := openStoreWith(t, Options{Addr: redisAddr(), KeyPrefix: prefix, AuditKeys: audit.NewKeyring(newKey, oldKey)})
	got, err := b.AppendAudit(ctx, rec("U_B"))
	if err != nil || got.Seq != 5 || got.KeyID != newKey.ID {
		t.Fatalf("first append with the new key: %+v, %v; want record 5 after a rotation record", got, err)
	}
	recs, err := b.RecentAudit(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if recs[3].Action != audit.KeyRotated || recs[3].Reason != "audit key changed from "+oldKey.ID+" to "+newKey.ID {
		t.Fatalf("record 4 = %+v; want the key rotation", recs[3])
	}
	h, _, _ := b.AuditHead(ctx)
	both := audit.NewKeyring(newKey, oldKey)
	if _, err := audit.Verify(recs, audit.VerifyOptions{Keys: both, FromStart: true, Head: &h, RequireHead: true}); err != nil {
		t.Fatal(err)
	}
	// A replica still on the old key (during a rolling restart) does not
	// hold the new key: it must not move the chain back, so its append
	// fails (the bot keeps the record in its outbox) and says why.
	if _, err := a.AppendAudit(ctx, rec("U_A")); !errors.Is(err, audit.ErrUnknownKey) || !strings.Contains(err.Error(), newKey.ID) {
		t.Fatalf("append by a replica on the old key: %v; want ErrUnknownKey naming %s", err, newKey.ID)
	}
	if recs2, _ := b.RecentAudit(ctx, 100); len(recs2) != len(recs) {
		t.Fatalf("the old replica's record reached the chain: %d records, want %d", len(recs2), len(recs))
	}
}
