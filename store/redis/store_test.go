package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/store/storetest"
	"github.com/vigilops/vigil/tools/builtin"
)

func TestConformance(t *testing.T) {
	requireRedis(t)
	storetest.Run(t, func(t *testing.T) bot.Stores { return newTestStore(t).Stores() })
}

func msg(role agent.Role, content string) agent.Message {
	return agent.Message{Role: role, Content: content}
}

func TestSessionHistoryAppendsAndRewrites(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	key := "slack:C1:1700000000.000100"
	hist := s.keys.sessionHistory(key)
	sess := &agent.Session{Key: key, History: []agent.Message{msg(agent.RoleUser, "one"), msg(agent.RoleAssistant, "two")}}
	if err := s.SaveSession(ctx, sess); err != nil {
		t.Fatal(err)
	}

	// Mark the stored first message behind the store's back. An append
	// leaves it alone; a rewrite replaces it. That tells the two paths
	// apart from outside.
	marker, _ := json.Marshal(msg(agent.RoleUser, "marker"))
	if err := s.rdb.LSet(ctx, hist, 0, marker).Err(); err != nil {
		t.Fatal(err)
	}
	sess.History = append(sess.History, msg(agent.RoleUser, "three"))
	if err := s.SaveSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	got := loadContents(t, s, key)
	if want := []string{"marker", "two", "three"}; !slices.Equal(got, want) {
		t.Fatalf("after a growing save: history %q, want %q (only the new message appended)", got, want)
	}

	// Compaction changes an old message in place: the list is rewritten.
	sess.History[1].Content = "two (compacted)"
	if err := s.SaveSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	if got, want := loadContents(t, s, key), []string{"one", "two (compacted)", "three"}; !slices.Equal(got, want) {
		t.Fatalf("after compaction: history %q, want %q", got, want)
	}

	// Both keys of the session expire.
	for _, k := range []string{s.keys.sessionMeta(key), hist} {
		if ttl := s.rdb.PTTL(ctx, k).Val(); ttl <= 0 || ttl > DefaultSessionTTL {
			t.Errorf("PTTL %s = %v, want within the session TTL", k, ttl)
		}
	}

	// A shorter history is rewritten too.
	sess.History = sess.History[:1]
	if err := s.SaveSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	if got, want := loadContents(t, s, key), []string{"one"}; !slices.Equal(got, want) {
		t.Fatalf("after shrinking: history %q, want %q", got, want)
	}

	// An empty history and a missing one both survive the round trip.
	for _, h := range [][]agent.Message{{}, nil} {
		sess.History = h
		if err := s.SaveSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
		back, err := s.LoadSession(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if (back.History == nil) != (h == nil) || len(back.History) != 0 {
			t.Errorf("saved history %#v, loaded %#v", h, back.History)
		}
	}
}

func loadContents(t *testing.T, s *Store, key string) []string {
	t.Helper()
	sess, err := s.LoadSession(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range sess.History {
		out = append(out, m.Content)
	}
	return out
}

// TestSessionConcurrentSavers checks that saves racing from two replicas
// leave a consistent session: the history matches its metadata and equals
// one of the saved versions.
func TestSessionConcurrentSavers(t *testing.T) {
	a := newTestStore(t)
	b := openStore(t, a.keys.prefix)
	ctx := t.Context()
	key := "matrix:!room:example.org:$root"
	base := &agent.Session{Key: key, History: []agent.Message{msg(agent.RoleUser, "q")}}
	if err := a.SaveSession(ctx, base); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i, st := range []*Store{a, b, a, b} {
		wg.Go(func() {
			s := &agent.Session{Key: key, History: slices.Clone(base.History)}
			for j := range 20 {
				s.History = append(s.History, msg(agent.RoleAssistant, fmt.Sprintf("w%d-%d", i, j)))
				if err := st.SaveSession(ctx, s); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got := loadContents(t, a, key)
	if len(got) != 21 || got[0] != "q" {
		t.Fatalf("history after racing saves = %q, want one writer's 21 messages", got)
	}
	writer := strings.Split(got[1], "-")[0]
	for j, c := range got[1:] {
		if c != fmt.Sprintf("%s-%d", writer, j) {
			t.Fatalf("history mixes writers: %q", got)
		}
	}
}

func TestApprovalTTLAndIndex(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	a := &policy.Approval{ID: "abcdefghij", Tool: "control", Status: policy.ApprovalPending, Channel: "slack:C1",
		CreatedAt: time.Now(), ExpiresAt: time.Now().Add(10 * time.Minute)}
	if err := s.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	ttl := s.rdb.PTTL(ctx, s.keys.approval(a.ID)).Val()
	want := 10*time.Minute + DefaultApprovalRetention
	if ttl < want-time.Minute || ttl > want {
		t.Errorf("approval PTTL = %v, want about %v (expiry plus retention)", ttl, want)
	}
	if n := s.rdb.ZCard(ctx, s.keys.approvalsPending()).Val(); n != 1 {
		t.Errorf("pending index has %d entries, want 1", n)
	}
	if _, err := s.UpdateApproval(ctx, a.ID, policy.Decide(storetest.Decision("U_BOSS", false), time.Now())); err != nil {
		t.Fatal(err)
	}
	if n := s.rdb.ZCard(ctx, s.keys.approvalsPending()).Val(); n != 0 {
		t.Errorf("pending index has %d entries after a denial, want 0", n)
	}

	// A pending approval whose record expired out of Redis is pruned from
	// the index, not returned.
	b := &policy.Approval{ID: "bbbbbbbbbb", Status: policy.ApprovalPending, ExpiresAt: time.Now().Add(time.Minute)}
	if err := s.CreateApproval(ctx, b); err != nil {
		t.Fatal(err)
	}
	s.rdb.Del(ctx, s.keys.approval(b.ID))
	got, err := s.ListPending(ctx)
	if err != nil || len(got) != 0 {
		t.Errorf("ListPending = %v, %v; want nothing", got, err)
	}
	if n := s.rdb.ZCard(ctx, s.keys.approvalsPending()).Val(); n != 0 {
		t.Errorf("stale index entry kept")
	}
}

// TestApprovalDecidedOnceAcrossReplicas: two replicas race to approve and
// then to claim execution; each transition is won exactly once.
func TestApprovalDecidedOnceAcrossReplicas(t *testing.T) {
	a := newTestStore(t)
	b := openStore(t, a.keys.prefix)
	ctx := t.Context()
	ap := &policy.Approval{ID: "k3xq7m2a9p", Status: policy.ApprovalPending, Channel: "slack:C1", ExpiresAt: time.Now().Add(time.Minute)}
	if err := a.CreateApproval(ctx, ap); err != nil {
		t.Fatal(err)
	}
	for _, step := range []func(i int) policy.Transition{
		func(i int) policy.Transition {
			return policy.Decide(storetest.Decision(fmt.Sprint("U", i), true), time.Now())
		},
		func(int) policy.Transition { return policy.ClaimExecution(time.Now()) },
	} {
		var mu sync.Mutex
		won, lost := 0, 0
		var wg sync.WaitGroup
		for i := range 16 {
			st := []*Store{a, b}[i%2]
			wg.Go(func() {
				_, err := st.UpdateApproval(ctx, ap.ID, step(i))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case errors.Is(err, bot.ErrStatusConflict):
					lost++
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if won != 1 || lost != 15 {
			t.Errorf("%s: %d won, %d conflicts; want 1 and 15", step(0).Step(), won, lost)
		}
	}
}

func TestAuditChainAcrossReplicas(t *testing.T) {
	a := newTestStore(t)
	b := openStore(t, a.keys.prefix)
	ctx := t.Context()
	var wg sync.WaitGroup
	for i := range 8 {
		st := []*Store{a, b}[i%2]
		wg.Go(func() {
			for j := range 10 {
				if _, err := st.AppendAudit(ctx, audit.Record{Actor: fmt.Sprint("U", i), Action: audit.Allow, Outcome: fmt.Sprint(j)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	recs, err := b.RecentAudit(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 80 {
		t.Fatalf("%d records, want 80", len(recs))
	}
	if err := audit.VerifyChain(recs); err != nil {
		t.Fatalf("chain written by two replicas: %v", err)
	}
}

// TestAuditAfterScriptFlush: the append goes as EVALSHA (with its WAIT in
// the same pipeline); a Redis that lost its scripts (a restart) gets the
// script loaded again and the record appended once.
func TestAuditAfterScriptFlush(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	if _, err := s.AppendAudit(ctx, audit.Record{Actor: "U1", Action: audit.Allow, Outcome: "before"}); err != nil {
		t.Fatal(err)
	}
	if err := s.rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	rec, err := s.AppendAudit(ctx, audit.Record{Actor: "U1", Action: audit.Allow, Outcome: "after"})
	if err != nil {
		t.Fatalf("append after SCRIPT FLUSH: %v", err)
	}
	recs, err := s.RecentAudit(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || rec.Seq != 2 || recs[1].Outcome != "after" {
		t.Fatalf("chain after SCRIPT FLUSH: %+v (appended %+v), want two records", recs, rec)
	}
	if err := audit.VerifyChain(recs); err != nil {
		t.Fatal(err)
	}
}

func TestAuditTrimKeepsChainHead(t *testing.T) {
	requireRedis(t)
	s, err := New(t.Context(), Options{Addr: redisAddr(), KeyPrefix: testPrefix(t), AuditLimit: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = deletePrefix(context.Background(), s); _ = s.Close() })
	ctx := t.Context()
	for i := range 12 {
		if _, err := s.AppendAudit(ctx, audit.Record{Actor: "vigil", Action: audit.Expired, Outcome: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.RecentAudit(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || recs[0].Seq != 8 || recs[4].Seq != 12 {
		t.Fatalf("kept seqs %v, want 8..12", seqs(recs))
	}
	for i := 1; i < len(recs); i++ {
		if recs[i].PrevHash != recs[i-1].Hash || recs[i].Hash != recs[i].ComputeHash() {
			t.Fatalf("trimmed chain broken at seq %d", recs[i].Seq)
		}
	}
	next, err := s.AppendAudit(ctx, audit.Record{Actor: "vigil", Action: audit.Allow})
	if err != nil || next.Seq != 13 || next.PrevHash != recs[4].Hash {
		t.Fatalf("append after trim: seq %d prev %q, %v; want 13 linked to 12", next.Seq, next.PrevHash, err)
	}
}

func seqs(recs []audit.Record) []int64 {
	var out []int64
	for _, r := range recs {
		out = append(out, r.Seq)
	}
	return out
}

func TestLockLostReturnsErrLocked(t *testing.T) {
	a := newTestStore(t)
	b := openStore(t, a.keys.prefix)
	ctx := t.Context()
	l, err := a.Lock(ctx, "thread:slack:C1:1", 80*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(ctx, "thread:slack:C1:1", time.Second); !errors.Is(err, bot.ErrLocked) {
		t.Fatalf("second replica took a held lock: %v", err)
	}
	time.Sleep(150 * time.Millisecond)
	l2, err := b.Lock(ctx, "thread:slack:C1:1", time.Second)
	if err != nil {
		t.Fatalf("lock not free after its ttl: %v", err)
	}
	if err := l.Renew(ctx); !errors.Is(err, bot.ErrLocked) {
		t.Errorf("Renew of a lost lock = %v, want ErrLocked", err)
	}
	if err := l.Unlock(ctx); !errors.Is(err, bot.ErrLocked) {
		t.Errorf("Unlock of a lost lock = %v, want ErrLocked", err)
	}
	// The new holder keeps it.
	if err := l2.Renew(ctx); err != nil {
		t.Errorf("new holder's Renew = %v", err)
	}
	if err := l2.Unlock(ctx); err != nil {
		t.Errorf("new holder's Unlock = %v", err)
	}
}

func TestDedupOnceAcrossReplicas(t *testing.T) {
	a := newTestStore(t)
	b := openStore(t, a.keys.prefix)
	ctx := t.Context()
	var mu sync.Mutex
	firsts := 0
	var wg sync.WaitGroup
	for i := range 10 {
		st := []*Store{a, b}[i%2]
		wg.Go(func() {
			first, err := st.FirstSeen(ctx, "event:slack:Ev42", time.Minute)
			if err != nil {
				t.Error(err)
			}
			if first {
				mu.Lock()
				firsts++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firsts != 1 {
		t.Errorf("%d replicas handled the event, want 1", firsts)
	}
}

func TestRateLimitAndBudget(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	allowed := 0
	for range 5 {
		ok, err := s.Allow(ctx, "user:U1", 3, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			allowed++
		}
	}
	if allowed != 3 {
		t.Errorf("allowed %d of 5 in one window, want 3", allowed)
	}
	if ok, _ := s.Allow(ctx, "user:U2", 3, time.Hour); !ok {
		t.Error("another key shares the first key's window")
	}

	budget := s.DailyBudget(100)
	if out, err := budget.Spend(ctx, 60); err != nil || out {
		t.Fatalf("Spend(60) of 100 = %v, %v; want not exhausted", out, err)
	}
	other := openStore(t, s.keys.prefix).DailyBudget(100)
	if out, err := other.Spend(ctx, 40); err != nil || !out {
		t.Fatalf("second replica's Spend(40) = %v, %v; want exhausted at 100", out, err)
	}
	if n, err := budget.Spent(ctx); err != nil || n != 100 {
		t.Errorf("Spent = %d, %v; want 100", n, err)
	}
	if out, _ := s.DailyBudget(0).Spend(ctx, 1_000_000); out {
		t.Error("an unlimited budget reported exhaustion")
	}
}

func TestMemories(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	base := time.Now().Add(-time.Hour)
	for i, m := range []builtin.Memory{
		{Key: "nginx-restart", Content: "restart nginx on web1 after cert renewal", Tags: []string{"nginx", "web1"}},
		{Key: "disk-full", Content: "clean journal on delly when / is full", Tags: []string{"disk"}},
		{Key: "nginx-restart", Content: "reload, not restart, nginx on web1", Tags: []string{"nginx"}},
	} {
		m.At = base.Add(time.Duration(i) * time.Minute)
		if err := s.Remember(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Search(ctx, "nginx web1", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Key != "nginx-restart" || !strings.HasPrefix(got[0].Content, "reload") {
		t.Errorf("Search(nginx web1) = %+v, want the replaced nginx memory only", got)
	}
	recent, err := s.Search(ctx, "", 1)
	if err != nil || len(recent) != 1 || recent[0].Key != "nginx-restart" {
		t.Errorf("Search(\"\", 1) = %+v, %v; want the most recent", recent, err)
	}
}

func TestPluginKV(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	gh, err := s.PluginKV("github")
	if err != nil {
		t.Fatal(err)
	}
	pd, err := s.PluginKV("pagerduty")
	if err != nil {
		t.Fatal(err)
	}
	if err := gh.Set(ctx, "cursor", []byte("42")); err != nil {
		t.Fatal(err)
	}
	if v, err := gh.Get(ctx, "cursor"); err != nil || string(v) != "42" {
		t.Errorf("Get = %q, %v", v, err)
	}
	if _, err := pd.Get(ctx, "cursor"); !errors.Is(err, bot.ErrNotFound) {
		t.Errorf("another plugin read github's key: %v", err)
	}
	if ks, _ := pd.Keys(ctx); len(ks) != 0 {
		t.Errorf("pagerduty sees keys %q", ks)
	}
	if err := gh.Set(ctx, "big", make([]byte, PluginMaxValueLen+1)); !errors.Is(err, ErrQuota) {
		t.Errorf("oversized value: %v, want ErrQuota", err)
	}
	for i := range PluginMaxEntries - 1 {
		if err := gh.Set(ctx, fmt.Sprint("k", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := gh.Set(ctx, "one-too-many", nil); !errors.Is(err, ErrQuota) {
		t.Errorf("entry past the limit: %v, want ErrQuota", err)
	}
	if err := gh.Set(ctx, "cursor", []byte("43")); err != nil {
		t.Errorf("overwriting an existing key when full: %v", err)
	}
	if err := gh.Delete(ctx, "cursor"); err != nil {
		t.Fatal(err)
	}
	if _, err := gh.Get(ctx, "cursor"); !errors.Is(err, bot.ErrNotFound) {
		t.Errorf("Get after Delete: %v", err)
	}
	for _, bad := range []string{"", "a{b}", "../x", "has space"} {
		if _, err := s.PluginKV(bad); err == nil {
			t.Errorf("PluginKV(%q) accepted", bad)
		}
	}
}

// TestKeyLayout checks keys.go's promises on real keys: everything lives
// under the prefix, every key without a TTL is one of the documented
// exceptions, and a session's keys share one hash tag.
func TestKeyLayout(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	thread := "slack:C1:1700000000.000100"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.SaveSession(ctx, &agent.Session{Key: thread, History: []agent.Message{msg(agent.RoleUser, "hi")}}))
	must(s.CreateApproval(ctx, &policy.Approval{ID: "abcdefghij", Status: policy.ApprovalPending, ExpiresAt: time.Now().Add(time.Minute)}))
	_, err := s.AppendAudit(ctx, audit.Record{Actor: "U1", Action: audit.Allow})
	must(err)
	_, err = s.FirstSeen(ctx, "event:slack:Ev1", time.Minute)
	must(err)
	_, err = s.Lock(ctx, "thread:"+thread, time.Minute)
	must(err)
	_, err = s.Allow(ctx, "user:U1", 10, time.Minute)
	must(err)
	_, err = s.DailyBudget(10).Spend(ctx, 1)
	must(err)
	must(s.Remember(ctx, builtin.Memory{Key: "k", Content: "c"}))
	kv, err := s.PluginKV("github")
	must(err)
	must(kv.Set(ctx, "a", []byte("b")))

	noTTL := map[string]bool{
		"{approvals}:pending": true, "{audit}:log": true, "{audit}:head": true,
		"{memory}:items": true, "{memory}:recent": true, "plugin:{github}:kv": true,
	}
	got := prefixKeys(t, s)
	if len(got) != 13 {
		t.Errorf("keys %q, want 13", got)
	}
	for _, k := range got {
		ttl := s.rdb.PTTL(ctx, s.keys.prefix+k).Val()
		switch {
		case noTTL[k] && ttl != -1:
			t.Errorf("%s has TTL %v, documented as none", k, ttl)
		case !noTTL[k] && ttl <= 0:
			t.Errorf("%s has no TTL", k)
		}
	}
	tag := func(k string) string {
		i := strings.IndexByte(k, '{')
		j := strings.IndexByte(k[i+1:], '}')
		return k[i+1 : i+1+j]
	}
	if tag(s.keys.sessionMeta(thread)) != thread || tag(s.keys.sessionHistory(thread)) != thread {
		t.Errorf("session keys %s, %s do not share the hash tag {%s}", s.keys.sessionMeta(thread), s.keys.sessionHistory(thread), thread)
	}
}

func TestNewValidates(t *testing.T) {
	ctx := t.Context()
	for _, o := range []Options{
		{},
		{Addr: "no-port"},
		{Addr: "127.0.0.1:6379", KeyPrefix: "a{b}:"},
		{Addr: "127.0.0.1:6379", DB: -1},
		{Addr: "127.0.0.1:6379", Addrs: []string{"127.0.0.1:7000", "127.0.0.1:7001"}},
		{Addrs: []string{"127.0.0.1:7000", "nope"}},
		{Addrs: []string{"127.0.0.1:7000", "127.0.0.1:7001"}, DB: 1},
	} {
		if s, err := New(ctx, o); err == nil {
			s.Close()
			t.Errorf("New(%+v) accepted", o)
		}
	}
	for o, want := range map[*Options]string{
		{Addr: "a:1"}:                                    "single",
		{Addrs: []string{"a:1"}}:                         "single",
		{Addrs: []string{"a:1", "b:1"}}:                  "cluster",
		{Addrs: []string{"a:1"}, MasterName: "m"}:        "sentinel",
		{Addrs: []string{"a:1", "b:1"}, MasterName: "m"}: "sentinel",
	} {
		if got := o.Topology(); got != want {
			t.Errorf("%+v is %s, want %s (go-redis's UniversalClient rule)", *o, got, want)
		}
	}
}

// TestRedisDown points a Store at a closed port: every operation fails
// fast with an error naming the cause, none panics or hangs, and none
// pretends to be a normal outcome (not found, locked).
func TestRedisDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens here now

	s, err := New(t.Context(), Options{Addr: addr, KeyPrefix: "down:"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	kv, _ := s.PluginKV("p")
	ops := map[string]func() error{
		"Ping":        func() error { return s.Ping(ctx) },
		"LoadSession": func() error { _, err := s.LoadSession(ctx, "k"); return err },
		"SaveSession": func() error { return s.SaveSession(ctx, &agent.Session{Key: "k"}) },
		"CreateApproval": func() error {
			return s.CreateApproval(ctx, &policy.Approval{ID: "abcdefghij", Status: policy.ApprovalPending})
		},
		"GetApproval": func() error { _, err := s.GetApproval(ctx, "abcdefghij"); return err },
		"UpdateApproval": func() error {
			_, err := s.UpdateApproval(ctx, "abcdefghij", policy.AttachCard(nil))
			return err
		},
		"ListPending":   func() error { _, err := s.ListPending(ctx); return err },
		"ListExecuting": func() error { _, err := s.ListExecuting(ctx); return err },
		"AppendAudit":   func() error { _, err := s.AppendAudit(ctx, audit.Record{Actor: "x"}); return err },
		"RecentAudit":   func() error { _, err := s.RecentAudit(ctx, 10); return err },
		"FirstSeen":     func() error { _, err := s.FirstSeen(ctx, "e", time.Minute); return err },
		"Lock":          func() error { _, err := s.Lock(ctx, "l", time.Minute); return err },
		"Allow":         func() error { _, err := s.Allow(ctx, "u", 1, time.Minute); return err },
		"Spend":         func() error { _, err := s.DailyBudget(1).Spend(ctx, 1); return err },
		"Remember":      func() error { return s.Remember(ctx, builtin.Memory{Key: "k"}) },
		"Search":        func() error { _, err := s.Search(ctx, "q", 1); return err },
		"PluginGet":     func() error { _, err := kv.Get(ctx, "k"); return err },
	}
	for name, op := range ops {
		began := time.Now()
		err := op()
		took := time.Since(began)
		switch {
		case err == nil:
			t.Errorf("%s succeeded against a closed port", name)
		case errors.Is(err, bot.ErrNotFound) || errors.Is(err, bot.ErrLocked):
			t.Errorf("%s = %v: an outage must not look like a normal outcome", name, err)
		case !strings.Contains(err.Error(), "connection refused"):
			t.Errorf("%s = %v, want the cause (connection refused)", name, err)
		case !strings.HasPrefix(err.Error(), "redis: "):
			t.Errorf("%s = %v, want an error that names redis", name, err)
		}
		if took > 2*time.Second {
			t.Errorf("%s took %v against a closed port, want a fast failure", name, took)
		}
	}
}

// TestSessionStaleHint checks the history hint a replica keeps to append
// without reading: after another replica saved the session, a save from
// the first one, plain or under the lock, finds its hint stale and stores
// exactly its own history.
func TestSessionStaleHint(t *testing.T) {
	a := newTestStore(t)
	b := openStore(t, a.keys.prefix)
	ctx := t.Context()
	key := "slack:C1:stale-hint"
	mine := &agent.Session{Key: key, History: []agent.Message{msg(agent.RoleUser, "one"), msg(agent.RoleAssistant, "two")}}
	if err := a.SaveSession(ctx, mine); err != nil {
		t.Fatal(err)
	}
	for i, fenced := range []bool{false, true} {
		theirs, err := b.LoadSession(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		theirs.History = append(theirs.History, msg(agent.RoleUser, fmt.Sprintf("b%d", i)))
		if err := b.SaveSession(ctx, theirs); err != nil {
			t.Fatal(err)
		}
		// a's hint still says its own last save: a prefix of its history.
		mine.History = append(mine.History, msg(agent.RoleAssistant, fmt.Sprintf("a%d", i)))
		if fenced {
			l, err := a.Lock(ctx, "thread:"+key, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.(bot.FencedLock).RenewAndSave(ctx, mine); err != nil {
				t.Fatal(err)
			}
		} else if err := a.SaveSession(ctx, mine); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, m := range mine.History {
			want = append(want, m.Content)
		}
		if got := loadContents(t, b, key); !slices.Equal(got, want) {
			t.Fatalf("fenced=%v: history %q after a save with a stale hint, want %q", fenced, got, want)
		}
	}
}

// TestBatchedWrites drives the group-committed writes (run index, lock
// release) from many goroutines at once, with the release script unknown
// to Redis at first (SCRIPT FLUSH): every write lands, each caller gets
// its own reply.
// TestDedupCrowd checks the group-committed dedup marks: a crowd of
// events at once, each claimed twice (as by two replicas), is handled once
// each, and takes a connection or two rather than the pool.
func TestDedupCrowd(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	const n = 500
	var firsts [n]atomic.Int32
	var wg sync.WaitGroup
	for i := range 2 * n {
		wg.Go(func() {
			first, err := s.FirstSeen(ctx, fmt.Sprintf("event:slack:crowd%d", i%n), time.Minute)
			if err != nil {
				t.Error(err)
			}
			if first {
				firsts[i%n].Add(1)
			}
		})
	}
	wg.Wait()
	for i := range n {
		if got := firsts[i].Load(); got != 1 {
			t.Errorf("event %d handled %d times, want once", i, got)
		}
	}
	// Each mark on a connection of its own took the whole pool (20 here).
	if conns := s.single.PoolStats().TotalConns; conns > 3 {
		t.Errorf("a crowd of %d marks opened %d connections; group-committed, it needs one or two", 2*n, conns)
	}
	// A mark whose caller gave up before its batch left is not sent, and
	// one sent anyway is taken back: the event stays new.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.FirstSeen(gone, "event:slack:gaveup", time.Minute); err == nil {
		t.Fatal("FirstSeen with an ended context succeeded")
	}
	if first, err := s.FirstSeen(ctx, "event:slack:gaveup", time.Minute); err != nil || !first {
		t.Fatalf("an event whose dedup was given up: first=%v, %v; want it new", first, err)
	}
}

func TestBatchedWrites(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	if err := s.rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	const n = 300
	runs := runIndex{s}
	locks := make([]bot.Lock, n)
	for i := range n {
		l, err := s.Lock(ctx, fmt.Sprintf("thread:batch:%d", i), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		locks[i] = l
	}
	ref := func(i int) bot.ThreadRef {
		return bot.ThreadRef{Platform: "slack", Channel: "C1", Thread: strconv.Itoa(i)}
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := runs.MarkActive(ctx, ref(i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got, err := runs.ActiveRuns(ctx); err != nil || len(got) != n {
		t.Fatalf("%d active runs (%v), want %d", len(got), err, n)
	}
	for i := range n {
		wg.Go(func() {
			if i%2 == 0 {
				if err := runs.MarkIdle(ctx, ref(i).Key()); err != nil {
					t.Error(err)
				}
			}
			if err := locks[i].Unlock(ctx); err != nil {
				t.Errorf("unlock %d: %v", i, err)
			}
			// Released once: the second release is refused.
			if err := locks[i].Unlock(ctx); !errors.Is(err, bot.ErrLocked) {
				t.Errorf("second unlock %d = %v, want ErrLocked", i, err)
			}
		})
	}
	wg.Wait()
	if got, err := runs.ActiveRuns(ctx); err != nil || len(got) != n/2 {
		t.Fatalf("%d active runs after idling half (%v), want %d", len(got), err, n/2)
	}
	for i := range n {
		l, err := s.Lock(ctx, fmt.Sprintf("thread:batch:%d", i), time.Minute)
		if err != nil {
			t.Fatalf("lock %d after its release: %v", i, err)
		}
		_ = l.Unlock(ctx)
	}
}

// TestRunIndexEntryGoesWithFirstSave checks the deferred index entry: the
// run's first save under the same key has sent it, before the save.
func TestRunIndexEntryGoesWithFirstSave(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	ref := bot.ThreadRef{Platform: "slack", Channel: "C1", Thread: "deferred"}
	if err := (runIndex{s}).MarkActive(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveSession(ctx, &agent.Session{Key: ref.Key()}); err != nil {
		t.Fatal(err)
	}
	// Read around the queue: the save itself must have sent the entry.
	if ok, err := s.rdb.HExists(ctx, s.keys.runsActive(), ref.Key()).Result(); err != nil || !ok {
		t.Fatalf("index entry after the run's first save: %v, %v; want it stored", ok, err)
	}
	if err := (runIndex{s}).MarkIdle(ctx, ref.Key()); err != nil {
		t.Fatal(err)
	}
	if got, err := (runIndex{s}).ActiveRuns(ctx); err != nil || len(got) != 0 {
		t.Fatalf("active runs after idling: %v, %v", got, err)
	}
}
