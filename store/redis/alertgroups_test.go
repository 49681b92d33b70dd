package redis

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/vigilops/vigil/bot"
)

// The due index and the records live in different hash slots and are
// written by separate commands, so the index can disagree with a record
// (a save that wrote the record and failed before the index). DueAlertGroups
// trusts the record: an entry whose record is claimed or gone is pruned, an
// entry with a stale score is re-scored, and neither is returned early.
func TestDueAlertGroupsRepairsAStaleIndex(t *testing.T) {
	requireRedis(t)
	s := newTestStore(t)
	ctx := t.Context()
	t0 := time.Date(2026, 11, 24, 21, 5, 0, 0, time.UTC)
	idx := s.keys.alertDue()
	group := func(key string, due time.Time) *bot.AlertGroup {
		return &bot.AlertGroup{Key: key, Source: "alertmanager", Investigate: true, CreatedAt: t0, UpdatedAt: t0, DueAt: due}
	}
	for _, g := range []*bot.AlertGroup{group("am:claimed", t0), group("am:gone", t0), group("am:moved", t0), group("am:ok", t0)} {
		if err := s.SaveAlertGroup(ctx, g, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	// Behind the index's back: one record claimed, one deleted, one moved
	// later (as a save whose index write failed would leave them).
	claimed := group("am:claimed", t0)
	claimed.Investigated = true
	raw, _ := json.Marshal(claimed)
	if err := s.rdb.Set(ctx, s.keys.alertGroup("am:claimed"), raw, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.rdb.Del(ctx, s.keys.alertGroup("am:gone")).Err(); err != nil {
		t.Fatal(err)
	}
	later := t0.Add(10 * time.Minute)
	raw, _ = json.Marshal(group("am:moved", later))
	if err := s.rdb.Set(ctx, s.keys.alertGroup("am:moved"), raw, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}

	got, err := s.DueAlertGroups(ctx, t0.Add(time.Minute), 10)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"am:ok"}) {
		t.Fatalf("due = %q, want only am:ok", got)
	}
	members, err := s.rdb.ZRangeWithScores(ctx, idx, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	want := []goredis.Z{{Score: float64(t0.UnixMilli()), Member: "am:ok"}, {Score: float64(later.UnixMilli()), Member: "am:moved"}}
	if !slices.Equal(members, want) {
		t.Fatalf("index after the sweep = %v, want %v (claimed and gone pruned, moved re-scored)", members, want)
	}
	if got, err := s.DueAlertGroups(ctx, later, 10); err != nil || !slices.Equal(got, []string{"am:ok", "am:moved"}) {
		t.Fatalf("due at the moved time = %q, %v", got, err)
	}
}
