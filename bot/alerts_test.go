package bot_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/testenv/redistest"
	"github.com/vigilops/vigil/policy"
	redisstore "github.com/vigilops/vigil/store/redis"
)

var _ bot.ThreadOpener = (*recChat)(nil)

// fakeResolver knows web-1 and checkout.
type fakeResolver struct{}

func (fakeResolver) ResolveMention(name string) ([]policy.Resource, bool) {
	switch name {
	case "web-1":
		return []policy.Resource{{ID: "host/web-1", Kind: "host", Name: "web-1", Target: "web-1"}}, true
	case "checkout":
		return []policy.Resource{{ID: "service/checkout", Kind: "service", Name: "checkout", Target: "checkout"}}, true
	}
	return nil, false
}

var alertRoute = bot.AlertRoute{Name: "routes[0]", Platform: string(unit), Channel: "C1", Investigate: true,
	Prompt: "Check the checkout queue first."}

func notification(status string, alerts ...bot.Alert) bot.AlertNotification {
	return bot.AlertNotification{Source: "alertmanager", GroupKey: `{}:{alertname="HighLatency"}`,
		Status: status, CommonLabels: map[string]string{"alertname": "HighLatency", "service": "checkout"}, Alerts: alerts}
}

func latency(instance, status string) bot.Alert {
	return bot.Alert{ID: "fp-" + instance, Status: status,
		Labels:      map[string]string{"alertname": "HighLatency", "service": "checkout", "instance": instance + ":9100", "severity": "page"},
		Annotations: map[string]string{"summary": "Checkout latency above 2s", "runbook_url": "https://runbooks.example.org/hl"},
		StartsAt:    time.Date(2026, 11, 24, 21, 0, 0, 0, time.UTC),
		Links:       []bot.Link{{Text: "Runbook", URL: "https://runbooks.example.org/hl"}}}
}

func (c *recChat) roots() []posted {
	var out []posted
	for _, p := range c.posts() {
		if p.root {
			out = append(out, p)
		}
	}
	return out
}

func (c *recChat) edits(id string) []posted {
	var out []posted
	for _, p := range c.posts() {
		if p.edit == id {
			out = append(out, p)
		}
	}
	return out
}

// One thread per group: a repeated notification changes nothing, a new
// alert is a reply and an edit of the first message, and the group's
// resolution a final reply. The investigation is a run whose requester is
// the alert, never a person, with labels resolved as mentions and the
// route's prompt in its question.
func TestAlertGroupThreadAndInvestigation(t *testing.T) {
	runner := newRunner()
	r := newReplica(t, replicaOptions{runner: runner, resolver: fakeResolver{}})
	ctx := context.Background()
	first := notification(bot.AlertFiring, latency("web-1", "firing"), latency("web-2", "firing"))
	for range 3 {
		if err := r.bot.DeliverAlert(ctx, first, alertRoute); err != nil {
			t.Fatal(err)
		}
	}
	roots := r.chat.roots()
	if len(roots) != 1 {
		t.Fatalf("%d threads for one group, want 1", len(roots))
	}
	root := roots[0]
	for _, want := range []string{"FIRING: HighLatency (firing 2 / resolved 0)", "Severity: page", "Source: alertmanager",
		"Labels: service=checkout", "Summary: Checkout latency above 2s", "2026-11-24 21:00 UTC"} {
		if !strings.Contains(root.reply.Text, want) {
			t.Errorf("first message lacks %q:\n%s", want, root.reply.Text)
		}
	}
	if len(root.reply.Links) != 1 || root.reply.Links[0].URL != "https://runbooks.example.org/hl" {
		t.Errorf("first message links = %+v", root.reply.Links)
	}
	th := root.thread

	calls := runner.waitCalls(t, "start", 1)
	in := calls[0].in
	if !in.Role.System || in.Role.Operator || in.Requester != "alert:alertmanager/HighLatency" {
		t.Fatalf("investigation requester = %q role %+v, want a system requester naming the alert", in.Requester, in.Role)
	}
	for _, want := range []string{"HighLatency", "instance=web-1:9100", "runbook_url: https://runbooks.example.org/hl",
		"Check the checkout queue first.", "2 firing"} {
		if !strings.Contains(in.Text, want) {
			t.Errorf("question lacks %q:\n%s", want, in.Text)
		}
	}
	for _, want := range []string{"@web-1 is host/web-1", "@checkout is service/checkout"} {
		if !strings.Contains(in.Context, want) {
			t.Errorf("context lacks %q:\n%s", want, in.Context)
		}
	}
	if strings.Contains(in.Context, "web-2") {
		t.Errorf("a label naming nothing in the inventory became a mention:\n%s", in.Context)
	}
	r.chat.waitText(t, th, "answer to")
	r.idle(t)

	third := notification(bot.AlertFiring, latency("web-1", "firing"), latency("web-2", "firing"), latency("web-3", "firing"))
	if err := r.bot.DeliverAlert(ctx, third, alertRoute); err != nil {
		t.Fatal(err)
	}
	if !r.chat.has(th, "Firing: HighLatency") || r.chat.count(th, "Firing: HighLatency") != 1 {
		t.Errorf("the third alert's reply:\n%s", r.chat.transcript(th))
	}
	edits := r.chat.edits(root.thread.Thread)
	if len(edits) != 1 || !strings.Contains(edits[0].reply.Text, "firing 3 / resolved 0") {
		t.Fatalf("edits of the first message = %+v", edits)
	}

	resolved := notification(bot.AlertResolved, latency("web-1", "resolved"), latency("web-2", "resolved"), latency("web-3", "resolved"))
	for range 2 {
		if err := r.bot.DeliverAlert(ctx, resolved, alertRoute); err != nil {
			t.Fatal(err)
		}
	}
	if n := r.chat.count(th, "All 3 alerts of this group have resolved"); n != 1 {
		t.Errorf("final resolution posted %d times:\n%s", n, r.chat.transcript(th))
	}
	if n := r.chat.count(th, "Resolved: HighLatency"); n != 3 {
		t.Errorf("%d resolution replies, want 3:\n%s", n, r.chat.transcript(th))
	}
	edits = r.chat.edits(root.thread.Thread)
	if last := edits[len(edits)-1].reply.Text; !strings.Contains(last, "RESOLVED") || !strings.Contains(last, "firing 0 / resolved 3") {
		t.Errorf("last edit = %q", last)
	}
	if n := len(runner.of("start")); n != 1 {
		t.Errorf("%d investigations, want 1", n)
	}
}

// A group that resolves while its investigation runs stops the run.
func TestAlertResolvedStopsItsInvestigation(t *testing.T) {
	runner := newRunner()
	runner.start = func(ctx context.Context, s *agent.Session, in agent.Input, env agent.RunEnv) agent.Outcome {
		if err := begin(ctx, s, in, env); err != nil {
			return stopped(ctx, s, env, err)
		}
		<-ctx.Done()
		return stopped(ctx, s, env, ctx.Err())
	}
	r := newReplica(t, replicaOptions{runner: runner})
	ctx := context.Background()
	if err := r.bot.DeliverAlert(ctx, notification(bot.AlertFiring, latency("web-1", "firing")), alertRoute); err != nil {
		t.Fatal(err)
	}
	recv(t, runner.entered, "the investigation")
	if err := r.bot.DeliverAlert(ctx, notification(bot.AlertResolved, latency("web-1", "resolved")), alertRoute); err != nil {
		t.Fatal(err)
	}
	calls := runner.waitCalls(t, "start", 1)
	if !errors.Is(calls[0].err, context.Canceled) {
		t.Fatalf("the investigation ended with %v, want cancelled", calls[0].err)
	}
	th := r.chat.roots()[0].thread
	if !r.chat.has(th, "The investigation is told so") {
		t.Errorf("thread:\n%s", r.chat.transcript(th))
	}
	r.idle(t)
}

// Investigations beyond max_concurrent_investigations wait for a slot.
func TestAlertInvestigationsQueue(t *testing.T) {
	release := make(chan struct{})
	runner := newRunner()
	runner.start = func(ctx context.Context, s *agent.Session, in agent.Input, env agent.RunEnv) agent.Outcome {
		if err := begin(ctx, s, in, env); err != nil {
			return stopped(ctx, s, env, err)
		}
		<-release
		return answer(ctx, s, env, "done")
	}
	r := newReplica(t, replicaOptions{runner: runner, alertSlots: 1})
	ctx := context.Background()
	for _, g := range []string{"A", "B"} {
		n := notification(bot.AlertFiring, latency("web-1", "firing"))
		n.GroupKey = g
		if err := r.bot.DeliverAlert(ctx, n, alertRoute); err != nil {
			t.Fatal(err)
		}
	}
	recv(t, runner.entered, "the first investigation")
	select {
	case <-runner.entered:
		t.Fatal("a second investigation started while the only slot was taken")
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	recv(t, runner.entered, "the second investigation, once the slot is free")
	r.idle(t)
}

// A route to a platform without the power to open threads is an error the
// source hears (it retries), not a silent drop.
func TestAlertRouteToUnknownPlatform(t *testing.T) {
	r := newReplica(t, replicaOptions{})
	rt := alertRoute
	rt.Platform = "matrix"
	err := r.bot.DeliverAlert(context.Background(), notification(bot.AlertFiring, latency("web-1", "firing")), rt)
	if err == nil || !strings.Contains(err.Error(), "not enabled") {
		t.Fatalf("err = %v", err)
	}
}

// The investigation waits until the group has been quiet for the
// debounce, so it sees every alert Alertmanager sent over the first
// group intervals.
func TestAlertInvestigationWaitsForTheGroupToSettle(t *testing.T) {
	runner := newRunner()
	const debounce = 400 * time.Millisecond
	clk := newFakeClock()
	r := newReplica(t, replicaOptions{runner: runner, alertDebounce: debounce, clock: clk})
	ctx := context.Background()
	if err := r.bot.DeliverAlert(ctx, notification(bot.AlertFiring, latency("web-1", "firing")), alertRoute); err != nil {
		t.Fatal(err)
	}
	clk.advance(debounce / 2)
	if err := r.bot.DeliverAlert(ctx, notification(bot.AlertFiring, latency("web-1", "firing"), latency("web-2", "firing")), alertRoute); err != nil {
		t.Fatal(err)
	}
	// A debounce after the group opened, but half of one after it last
	// changed: not settled yet.
	clk.advance(debounce / 2)
	r.bot.SweepAlertsOnce(ctx)
	r.idle(t)
	if n := len(runner.of("start")); n != 0 {
		t.Fatalf("the investigation started half a debounce after the group last changed (%d runs)", n)
	}
	clk.advance(debounce / 2)
	c := recv(t, runner.entered, "the investigation")
	if !strings.Contains(c.in.Text, "2 firing") || !strings.Contains(c.in.Text, "web-2") {
		t.Errorf("the question does not cover the settled group:\n%s", c.in.Text)
	}
	r.idle(t)
}

// Every replica that sees a group schedules its investigation and exactly
// one runs it; when the replica that opened the thread stops before the
// group settled, another one that receives the group's notifications
// still investigates.
func TestAlertInvestigationRunsOnceAcrossReplicasAndSurvivesTheOpener(t *testing.T) {
	const debounce = 300 * time.Millisecond
	ctx := context.Background()
	n := notification(bot.AlertFiring, latency("web-1", "firing"))

	clk := newFakeClock()
	stores := memStores(nil)
	a := newReplica(t, replicaOptions{stores: stores, alertDebounce: debounce, clock: clk})
	b := newReplica(t, replicaOptions{stores: stores, alertDebounce: debounce, clock: clk})
	for _, r := range []*replica{a, b, a, b} {
		if err := r.bot.DeliverAlert(ctx, n, alertRoute); err != nil {
			t.Fatal(err)
		}
	}
	clk.advance(debounce)
	oneInvestigation(t, clk, a, b)
	if len(a.chat.roots())+len(b.chat.roots()) != 1 {
		t.Fatalf("threads: %d + %d, want 1", len(a.chat.roots()), len(b.chat.roots()))
	}

	// The opener stops before the next group settles.
	stores2 := memStores(nil)
	opener := newReplica(t, replicaOptions{stores: stores2, alertDebounce: debounce, clock: clk})
	other := newReplica(t, replicaOptions{stores: stores2, alertDebounce: debounce, clock: clk})
	n.GroupKey = "another group"
	if err := opener.bot.DeliverAlert(ctx, n, alertRoute); err != nil {
		t.Fatal(err)
	}
	opener.halt(t)
	if err := other.bot.DeliverAlert(ctx, n, alertRoute); err != nil {
		t.Fatal(err)
	}
	clk.advance(debounce)
	c := recv(t, other.runner.entered, "the investigation on the surviving replica")
	if !c.in.Role.System {
		t.Fatalf("investigation role = %+v", c.in.Role)
	}
	if len(opener.runner.of("start")) != 0 {
		t.Fatal("the stopped replica investigated")
	}
	other.idle(t)
}

// The replica running the investigation stops it even when another
// replica recorded the resolution first (its own copy of the notification
// then changes nothing in the store).
func TestAlertResolvedOnAnotherReplicaStopsTheInvestigation(t *testing.T) {
	blocking := func() *fakeRunner {
		r := newRunner()
		r.start = func(ctx context.Context, s *agent.Session, in agent.Input, env agent.RunEnv) agent.Outcome {
			if err := begin(ctx, s, in, env); err != nil {
				return stopped(ctx, s, env, err)
			}
			<-ctx.Done()
			return stopped(ctx, s, env, ctx.Err())
		}
		return r
	}
	stores := memStores(nil)
	a := newReplica(t, replicaOptions{stores: stores, runner: blocking()})
	b := newReplica(t, replicaOptions{stores: stores, runner: blocking()})
	ctx := context.Background()
	firing := notification(bot.AlertFiring, latency("web-1", "firing"))
	for _, r := range []*replica{a, b} {
		if err := r.bot.DeliverAlert(ctx, firing, alertRoute); err != nil {
			t.Fatal(err)
		}
	}
	running, other := a, b
	select {
	case <-a.runner.entered:
	case <-b.runner.entered:
		running, other = b, a
	case <-time.After(wait):
		t.Fatal("no investigation started")
	}
	resolved := notification(bot.AlertResolved, latency("web-1", "resolved"))
	if err := other.bot.DeliverAlert(ctx, resolved, alertRoute); err != nil {
		t.Fatal(err)
	}
	if err := running.bot.DeliverAlert(ctx, resolved, alertRoute); err != nil {
		t.Fatal(err)
	}
	calls := running.runner.waitCalls(t, "start", 1)
	if !errors.Is(calls[0].err, context.Canceled) {
		t.Fatalf("the investigation ended with %v, want cancelled", calls[0].err)
	}
	running.idle(t)
}

// A replica that received a group's only notification and died before
// the debounce ended took its timer with it; another replica, which never
// received the notification, finds the due investigation in the store
// and runs it. With every replica alive the sweep and the timers still
// start exactly one investigation.
func TestAlertInvestigationOfADeadReplicaIsSweptUp(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testDeadReplicaSweptUp(t, func() bot.Stores { return memStores(nil) }) })
	t.Run("redis", func(t *testing.T) { testDeadReplicaSweptUp(t, func() bot.Stores { return redisStores(t) }) })
}

// redisStores opens the shared real Redis under a fresh key prefix, removed
// at cleanup.
func redisStores(t *testing.T) bot.Stores {
	t.Helper()
	addr := redistest.RequireShared(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "vigilbottest:" + hex.EncodeToString(b[:]) + ":"
	s, err := redisstore.New(context.Background(), redisstore.Options{Addr: addr, KeyPrefix: prefix})
	if err != nil {
		t.Fatalf("redis store: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := goredis.NewClient(&goredis.Options{Addr: addr})
		defer c.Close()
		iter := c.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("delete keys under %s: %v", prefix, err)
		}
		_ = s.Close()
	})
	return s.Stores()
}

func testDeadReplicaSweptUp(t *testing.T, open func() bot.Stores) {
	const debounce = 300 * time.Millisecond
	ctx := context.Background()
	n := notification(bot.AlertFiring, latency("web-1", "firing"))

	clk := newFakeClock()
	stores := open()
	dead := newReplica(t, replicaOptions{stores: stores, alertDebounce: debounce, clock: clk})
	survivor := newReplica(t, replicaOptions{stores: stores, alertDebounce: debounce, clock: clk})
	if err := dead.bot.DeliverAlert(ctx, n, alertRoute); err != nil {
		t.Fatal(err)
	}
	dead.halt(t)
	// Before the group settled a sweep leaves it alone.
	clk.advance(debounce / 2)
	survivor.bot.SweepAlertsOnce(ctx)
	survivor.idle(t)
	if got := len(survivor.runner.of("start")); got != 0 {
		t.Fatalf("investigated half a debounce after the notification, before the group settled (%d runs)", got)
	}
	clk.advance(debounce / 2)
	survivor.bot.SweepAlertsOnce(ctx)
	c := recv(t, survivor.runner.entered, "the investigation on the replica that never received the notification")
	if !c.in.Role.System || !strings.Contains(c.in.Text, "web-1") {
		t.Fatalf("investigation input = %+v", c.in)
	}
	survivor.idle(t)
	// Several sweeps later it is still one investigation.
	sweeps(t, clk, survivor)
	if got := len(survivor.runner.of("start")); got != 1 {
		t.Fatalf("%d investigations on the survivor, want 1", got)
	}
	if got := len(dead.runner.of("start")); got != 0 {
		t.Fatalf("the dead replica investigated %d times", got)
	}
	if left, err := stores.Alerts.DueAlertGroups(ctx, clk.Now().Add(time.Hour), 10); err != nil || len(left) != 0 {
		t.Fatalf("due after the investigation: %q, %v, want none", left, err)
	}

	// Both alive: one receives the notification, both sweep, one
	// investigation.
	stores2 := open()
	a := newReplica(t, replicaOptions{stores: stores2, alertDebounce: debounce, clock: clk})
	b := newReplica(t, replicaOptions{stores: stores2, alertDebounce: debounce, clock: clk})
	n.GroupKey = "another group"
	if err := a.bot.DeliverAlert(ctx, n, alertRoute); err != nil {
		t.Fatal(err)
	}
	clk.advance(debounce)
	b.bot.SweepAlertsOnce(ctx)
	oneInvestigation(t, clk, a, b)
}

// oneInvestigation waits for an investigation on a or b, lets both settle
// and sweep a few times (so a second, wrong one would start), and fails
// unless exactly one investigation started across the two.
func oneInvestigation(t *testing.T, clk *fakeClock, a, b *replica) {
	t.Helper()
	select {
	case <-a.runner.entered:
	case <-b.runner.entered:
	case <-time.After(wait):
		t.Fatal("no investigation on either replica")
	}
	a.idle(t)
	b.idle(t)
	sweeps(t, clk, a, b)
	if got := len(a.runner.of("start")) + len(b.runner.of("start")); got != 1 {
		t.Fatalf("%d investigations across two replicas, want 1", got)
	}
}

// sweeps moves clk past a few alert sweeps and runs each replica's sweep
// at each (the bots' own sweep loops run on clk too, but on their own
// goroutines), then waits until the replicas are idle.
func sweeps(t *testing.T, clk *fakeClock, rs ...*replica) {
	t.Helper()
	for range 3 {
		clk.advance(time.Second)
		for _, r := range rs {
			r.bot.SweepAlertsOnce(context.Background())
		}
	}
	for _, r := range rs {
		r.idle(t)
	}
}

// A due investigation waiting behind a person's run in its thread is
// queued once, however many sweeps pass meanwhile: duplicates would each
// hold an investigation slot and starve other groups.
func TestAlertSweepsDoNotPileUpBehindABusyThread(t *testing.T) {
	const debounce = 300 * time.Millisecond
	release := make(chan struct{})
	runner := newRunner()
	runner.start = func(ctx context.Context, s *agent.Session, in agent.Input, env agent.RunEnv) agent.Outcome {
		if err := begin(ctx, s, in, env); err != nil {
			return stopped(ctx, s, env, err)
		}
		if !strings.HasPrefix(in.Requester, "alert:") {
			select {
			case <-release:
			case <-ctx.Done():
				return stopped(ctx, s, env, ctx.Err())
			}
		}
		return answer(ctx, s, env, "done")
	}
	clk := newFakeClock()
	r := newReplica(t, replicaOptions{runner: runner, alertSlots: 2, alertDebounce: debounce, clock: clk})
	ctx := context.Background()
	a := notification(bot.AlertFiring, latency("web-1", "firing"))
	a.GroupKey = "A"
	if err := r.bot.DeliverAlert(ctx, a, alertRoute); err != nil {
		t.Fatal(err)
	}
	th := r.chat.roots()[0].thread
	r.say(th, "olga", "what is going on here?")
	if c := recv(t, runner.entered, "the person's run"); strings.HasPrefix(c.in.Requester, "alert:") {
		t.Fatalf("the investigation started before the person's run: %+v", c.in)
	}
	// Group A is due now and sweeps pass while its thread is busy.
	clk.advance(debounce)
	for range 3 {
		clk.advance(time.Second)
		r.bot.SweepAlertsOnce(ctx)
	}
	b := notification(bot.AlertFiring, latency("web-1", "firing"))
	b.GroupKey = "B"
	if err := r.bot.DeliverAlert(ctx, b, alertRoute); err != nil {
		t.Fatal(err)
	}
	clk.advance(debounce)
	c := recv(t, runner.entered, "group B's investigation while group A's waits behind a person's run")
	if !strings.HasPrefix(c.in.Requester, "alert:") {
		t.Fatalf("unexpected run %+v", c.in)
	}
	close(release)
	recv(t, runner.entered, "group A's investigation once its thread is free")
	r.idle(t)
	sweeps(t, clk, r)
	if got := len(runner.of("start")); got != 3 {
		t.Fatalf("%d runs, want 3 (the person's and one investigation per group)", got)
	}
}

// A group routed to a channel vigil is not set up in is claimed and
// reported once: later sweeps do not repeat the notice.
func TestAlertInUnconfiguredChannelIsReportedOnce(t *testing.T) {
	clk := newFakeClock()
	r := newReplica(t, replicaOptions{alertDebounce: 200 * time.Millisecond, clock: clk})
	rt := alertRoute
	rt.Channel = "C9"
	if err := r.bot.DeliverAlert(context.Background(), notification(bot.AlertFiring, latency("web-1", "firing")), rt); err != nil {
		t.Fatal(err)
	}
	th := r.chat.roots()[0].thread
	clk.advance(200 * time.Millisecond)
	r.chat.waitText(t, th, "I am not set up to work in this channel")
	sweeps(t, clk, r)
	if n := r.chat.count(th, "I am not set up to work in this channel"); n != 1 {
		t.Fatalf("the notice was posted %d times, want 1:\n%s", n, r.chat.transcript(th))
	}
	if n := len(r.runner.of("start")); n != 0 {
		t.Fatalf("%d investigations in an unconfigured channel", n)
	}
}
