package bot_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
)

// A flood of distinct groups (a storm, a misbehaving sender, a leaked
// token) opens at most the route's open groups across replicas; the rest
// are refused with a LimitError the source hears as 429, the channel is
// told once, and a group that resolves frees its place.
func TestAlertFloodBoundedAcrossReplicas(t *testing.T) {
	stores := redisStores(t)
	a := newReplica(t, replicaOptions{stores: stores, alertDebounce: time.Hour})
	b := newReplica(t, replicaOptions{stores: stores, alertDebounce: time.Hour})
	rt := alertRoute
	rt.Limits = bot.AlertLimits{OpenGroups: 5, ThreadsPerMinute: 1000}
	ctx := context.Background()
	group := func(i int, status string) bot.AlertNotification {
		n := notification(status, latency(fmt.Sprintf("web-%d", i), status))
		n.GroupKey = fmt.Sprintf("flood-%d", i)
		return n
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		limited []*bot.AlertLimitError
	)
	for i := range 40 {
		r := a
		if i%2 == 1 {
			r = b
		}
		wg.Go(func() {
			err := r.bot.DeliverAlert(ctx, group(i, bot.AlertFiring), rt)
			var le *bot.AlertLimitError
			switch {
			case errors.As(err, &le):
				mu.Lock()
				limited = append(limited, le)
				mu.Unlock()
			case err != nil:
				t.Errorf("group %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	threads, notices := 0, 0
	for _, r := range []*replica{a, b} {
		for _, p := range r.chat.roots() {
			if strings.Contains(p.reply.Text, "over a limit") {
				notices++
				if !strings.Contains(p.reply.Text, "alerts.limits.open_groups") || !strings.Contains(p.reply.Text, "429") {
					t.Errorf("notice does not name the limit: %s", p.reply.Text)
				}
				continue
			}
			threads++
		}
	}
	if threads != 5 || len(limited) != 35 {
		t.Fatalf("%d threads opened and %d groups refused across two replicas, want 5 and 35", threads, len(limited))
	}
	if notices != 1 {
		t.Errorf("%d limit notices in the channel, want 1", notices)
	}
	if le := limited[0]; le.RetryAfter <= 0 || !strings.Contains(le.Limit, "5 open alert groups on route routes[0]") {
		t.Errorf("limit error = %+v", le)
	}

	// Repeats of an open group are updates, whatever the limit.
	opened := -1
	for i := range 40 {
		if err := a.bot.DeliverAlert(ctx, group(i, bot.AlertFiring), rt); err == nil {
			opened = i
			break
		}
	}
	if opened < 0 {
		t.Fatal("no open group's repeat was accepted")
	}
	// It resolves: its place goes to the next new group.
	if err := b.bot.DeliverAlert(ctx, group(opened, bot.AlertResolved), rt); err != nil {
		t.Fatal(err)
	}
	if err := a.bot.DeliverAlert(ctx, group(100, bot.AlertFiring), rt); err != nil {
		t.Fatalf("a new group after one resolved: %v", err)
	}
	if err := b.bot.DeliverAlert(ctx, group(101, bot.AlertFiring), rt); !errors.As(err, new(*bot.AlertLimitError)) {
		t.Fatalf("a sixth open group: err = %v, want a LimitError", err)
	}
}

// New threads a minute are bounded per route across replicas, resolved
// groups included; Retry-After points at the next minute.
func TestAlertNewThreadsPerMinute(t *testing.T) {
	stores := redisStores(t)
	a := newReplica(t, replicaOptions{stores: stores, alertDebounce: time.Hour})
	b := newReplica(t, replicaOptions{stores: stores, alertDebounce: time.Hour})
	rt := alertRoute
	rt.Limits = bot.AlertLimits{OpenGroups: 1000, ThreadsPerMinute: 3}
	other := rt
	other.Name = "routes[1]"
	ctx := context.Background()
	ok, refused := 0, 0
	for i := range 8 {
		r := []*replica{a, b}[i%2]
		status := bot.AlertFiring
		if i%3 == 0 {
			status = bot.AlertResolved
		}
		n := notification(status, latency("web-1", status))
		n.GroupKey = fmt.Sprintf("burst-%d", i)
		var le *bot.AlertLimitError
		switch err := r.bot.DeliverAlert(ctx, n, rt); {
		case err == nil:
			ok++
		case errors.As(err, &le):
			refused++
			if le.RetryAfter <= 0 || le.RetryAfter > time.Minute || !strings.Contains(le.Limit, "alerts.limits.new_threads_per_minute") {
				t.Errorf("limit error = %+v", le)
			}
		default:
			t.Fatal(err)
		}
	}
	// A window boundary may fall inside the burst: at most twice the limit.
	if ok < 3 || ok > 6 || ok+refused != 8 {
		t.Fatalf("%d threads opened, %d refused, want 3 a minute", ok, refused)
	}
	n := notification(bot.AlertFiring, latency("web-1", "firing"))
	n.GroupKey = "another route"
	if err := a.bot.DeliverAlert(ctx, n, other); err != nil {
		t.Fatalf("another route shares the count: %v", err)
	}
}

// A group's record and thread stay bounded whatever its source sends: at
// most 200 alerts kept (the oldest resolved give way, the rest counted),
// values cut, and one notification posts at most 10 replies and a summary.
func TestAlertGroupRecordBounded(t *testing.T) {
	stores := memStores(nil)
	r := newReplica(t, replicaOptions{stores: stores, alertDebounce: time.Hour})
	ctx := context.Background()
	big := strings.Repeat("x", 6000)
	mk := func(i int, status string) bot.Alert {
		a := latency(fmt.Sprintf("web-%d", i), status)
		a.Annotations = map[string]string{"summary": "slow", "description": big, "dump": big}
		for k := range 30 {
			a.Annotations[fmt.Sprintf("extra_%02d", k)] = "v"
		}
		return a
	}
	first := notification(bot.AlertFiring, mk(0, "firing"))
	if err := r.bot.DeliverAlert(ctx, first, alertRoute); err != nil {
		t.Fatal(err)
	}
	var batch []bot.Alert
	for i := range 300 {
		batch = append(batch, mk(i, "firing"))
	}
	if err := r.bot.DeliverAlert(ctx, notification(bot.AlertFiring, batch...), alertRoute); err != nil {
		t.Fatal(err)
	}
	g, err := stores.Alerts.LoadAlertGroup(ctx, first.Key())
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Alerts) != 200 || g.Untracked != 100 {
		t.Fatalf("record keeps %d alerts and counts %d untracked, want 200 and 100", len(g.Alerts), g.Untracked)
	}
	a := g.Alerts[1]
	if len(a.Annotations["description"]) > 2048 || len(a.Annotations) > 17 || !strings.HasPrefix(a.Annotations[bot.OmittedAnnotations], "17 more not kept") {
		t.Fatalf("annotations kept: %d, description %d bytes, omitted %q", len(a.Annotations), len(a.Annotations["description"]), a.Annotations[bot.OmittedAnnotations])
	}
	var replies []string
	for _, p := range r.chat.posts() {
		if !p.root && p.edit == "" {
			replies = append(replies, p.reply.Text)
		}
	}
	if len(replies) != 11 || !strings.Contains(replies[10], "…and 189 more alerts changed") {
		t.Fatalf("%d replies for one notification, want 10 and a summary; last: %q", len(replies), replies[len(replies)-1])
	}
	// Resolved alerts give way to new ones.
	var resolved []bot.Alert
	for i := range 50 {
		resolved = append(resolved, mk(i, "resolved"))
	}
	for i := 300; i < 330; i++ {
		resolved = append(resolved, mk(i, "firing"))
	}
	if err := r.bot.DeliverAlert(ctx, notification(bot.AlertFiring, resolved...), alertRoute); err != nil {
		t.Fatal(err)
	}
	g, _ = stores.Alerts.LoadAlertGroup(ctx, first.Key())
	if len(g.Alerts) != 200 || g.Untracked != 100 || g.Alerts[len(g.Alerts)-1].Labels["instance"] != "web-329:9100" {
		t.Fatalf("after resolutions: %d alerts kept, %d untracked, last %v", len(g.Alerts), g.Untracked, g.Alerts[len(g.Alerts)-1].Labels)
	}
	edits := r.chat.edits(g.Root.ID)
	if root := edits[len(edits)-1].reply.Text; !strings.Contains(root, "100 more alerts joined past the 200 a group keeps") {
		t.Fatalf("first message does not count the untracked alerts:\n%s", root)
	}
}
