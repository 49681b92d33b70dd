package matrix

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/testenv/dendrite"
)

// The tests in this file run the adapter against a real Dendrite.

func TestInboundMessagesAndThreads(t *testing.T) {
	h := newHarness(t)
	r := h.startJoined(h.config(t.TempDir()))

	// A mention outside a thread starts a thread rooted at that message.
	rootID := h.say(h.alice, h.mention("why is @web-1 slow? ask @alice:localhost, compare @db.prod."))
	m := r.rec.message(t)
	want := bot.Message{
		EventID:   string(rootID),
		Thread:    bot.ThreadRef{Platform: "matrix", Channel: string(h.room), Thread: string(rootID)},
		ID:        string(rootID),
		User:      string(h.alice.UserID),
		UserName:  "alice",
		Text:      "why is @web-1 slow? ask @alice:localhost, compare @db.prod.",
		Mentions:  []bot.Mention{{Name: "web-1"}, {Name: "db.prod"}},
		Addressed: true,
	}
	m.At = time.Time{}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("message\n got %+v\nwant %+v", m, want)
	}
	if m.Thread.ChannelKey() != "matrix:"+string(h.room) {
		t.Fatalf("channel key %q", m.Thread.ChannelKey())
	}

	// Not addressed, outside a thread: not delivered.
	h.say(h.alice, &event.MessageEventContent{Body: "lunch anyone? @web-1 is fine"})
	// Inside the bot's thread, no mention needed.
	inID := h.say(h.mod, inThread(&event.MessageEventContent{Body: "also check @cache"}, rootID))
	m = r.rec.message(t)
	if m.EventID != string(inID) || m.Thread.Thread != string(rootID) || !m.Addressed ||
		len(m.Mentions) != 1 || m.Mentions[0].Name != "cache" || m.User != string(h.mod.UserID) {
		t.Fatalf("thread reply delivered as %+v", m)
	}

	// A pill (HTML link) without m.mentions addresses the bot too.
	pillID := h.say(h.alice, &event.MessageEventContent{
		Body: "vigil look at @web-2", Format: event.FormatHTML,
		FormattedBody: `<a href="https://matrix.to/#/` + string(h.botID) + `">vigil</a> look at @web-2`,
	})
	m = r.rec.message(t)
	if m.EventID != string(pillID) || m.Thread.Thread != string(pillID) || m.Text != "vigil look at @web-2" ||
		len(m.Mentions) != 1 || m.Mentions[0].Name != "web-2" {
		t.Fatalf("pill message delivered as %+v", m)
	}

	// The bot's reply is in the thread with the reply fallback, and its own
	// events never come back as messages.
	thread := bot.ThreadRef{Platform: "matrix", Channel: string(h.room), Thread: string(rootID)}
	ref, err := r.Post(ctxT(t, 20*time.Second), thread, bot.Reply{Kind: bot.ReplyNotice, Text: "looking at @web-1"})
	if err != nil {
		t.Fatal(err)
	}
	if ref.ThreadRef != thread || ref.ID == "" {
		t.Fatalf("ref = %+v", ref)
	}
	rel := h.event(id.EventID(ref.ID)).Content.AsMessage().RelatesTo
	if rel.GetThreadParent() != rootID || !rel.IsFallingBack || rel.GetReplyTo() != inID {
		t.Fatalf("reply relation = %+v (want thread %s, fallback to latest %s)", rel, rootID, inID)
	}
	h.barrier(r, h.alice)
	r.rec.quiet(t)

	// An edit of an earlier message does not run again.
	edit := &event.MessageEventContent{MsgType: event.MsgText, Body: "* vigil: edited",
		NewContent: h.mention("edited"), RelatesTo: &event.RelatesTo{Type: event.RelReplace, EventID: rootID}}
	h.say(h.alice, edit)
	h.barrier(r, h.alice)
	r.rec.quiet(t)
}

func TestPostTraceWithAttachmentAndStatus(t *testing.T) {
	h := newHarness(t)
	r := h.startJoined(h.config(t.TempDir()))
	rootID := h.say(h.alice, h.mention("tail logs of @web-1"))
	r.rec.message(t)
	thread := bot.ThreadRef{Platform: "matrix", Channel: string(h.room), Thread: string(rootID)}
	ctx := ctxT(t, 30*time.Second)

	if err := r.SetStatus(ctx, thread, "investigating…"); err != nil {
		t.Fatalf("typing on: %v", err)
	}
	full := strings.Repeat("a log line\n", 300)
	tr := &bot.Trace{Tool: "read", Action: "tail", Target: "web-1", Command: "tail -n 300 /var/log/syslog",
		Outcome: bot.OutcomeOK, Duration: 800 * time.Millisecond, Output: full[:bot.TraceOutputLimit],
		Truncated: true, FullOutput: full}
	ref, err := r.Post(ctx, thread, bot.Reply{Kind: bot.ReplyTrace, Trace: tr})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetStatus(ctx, thread, ""); err != nil {
		t.Fatalf("typing off: %v", err)
	}
	trace := h.event(id.EventID(ref.ID)).Content.AsMessage()
	if trace.Format != event.FormatHTML || !strings.Contains(trace.FormattedBody, "<pre><code>a log line") ||
		!strings.Contains(trace.Body, "full output is attached") {
		t.Fatalf("trace content = %+v", trace)
	}
	file := h.waitBotMessage("the m.file with the full output", func(e *event.Event) bool {
		return e.Content.AsMessage().MsgType == event.MsgFile
	})
	fc := file.Content.AsMessage()
	if fc.RelatesTo.GetThreadParent() != rootID || fc.Info == nil || fc.Info.Size != len(full) || !strings.HasPrefix(string(fc.URL), "mxc://") {
		t.Fatalf("file content = %+v", fc)
	}
	data, err := h.owner.DownloadBytes(ctx, fc.URL.ParseOrIgnore())
	if err != nil {
		t.Fatalf("download attachment: %v", err)
	}
	if string(data) != full {
		t.Fatalf("attachment has %d bytes, want %d", len(data), len(full))
	}

	// An answer renders Markdown as HTML.
	ref, err = r.Post(ctx, thread, bot.Reply{Kind: bot.ReplyAnswer, Text: "**web-1** is fine"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.event(id.EventID(ref.ID)).Content.AsMessage().FormattedBody; got != "<strong>web-1</strong> is fine" {
		t.Fatalf("answer HTML = %q", got)
	}
}

func TestRestartDoesNotReplayAndReusesDevice(t *testing.T) {
	h := newHarness(t)
	state := t.TempDir()
	cfg := h.config(state)
	cfg.AccessToken, cfg.Password = "", botPassword // password login keeps its device in state

	first := h.startJoined(cfg)
	oldID := h.say(h.alice, h.mention("first"))
	if m := first.rec.message(t); m.EventID != string(oldID) {
		t.Fatalf("first run got %+v", m)
	}
	cardRef, err := first.PostApproval(ctxT(t, 20*time.Second),
		bot.ThreadRef{Platform: "matrix", Channel: string(h.room), Thread: string(oldID)}, testCard(bot.ApprovalPending))
	if err != nil {
		t.Fatal(err)
	}
	device := first.client.DeviceID
	first.stop()

	// Written while the bot is down: predates the next start, never delivered.
	h.say(h.alice, h.mention("while you were away"))
	time.Sleep(20 * time.Millisecond)

	second := h.start(cfg)
	// Handlers run inside sync processing, before Ready: anything replayed
	// would already be here.
	second.rec.quiet(t)
	if second.client.DeviceID != device {
		t.Fatalf("restart used device %s, want %s", second.client.DeviceID, device)
	}
	b, err := os.ReadFile(filepath.Join(state, sessionFile))
	if err != nil || !strings.Contains(string(b), string(device)) {
		t.Fatalf("session file: %s, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(state, syncFile)); err != nil {
		t.Fatalf("sync token not persisted: %v", err)
	}

	// The card posted before the restart still maps to its approval: the
	// reacted-to event is fetched and its org.vigil.approval_id read.
	h.react(h.mod, id.EventID(cardRef.ID), "✅")
	d := second.rec.decision(t)
	if d.ApprovalID != "ap-42" || !d.Approve || d.User != string(h.mod.UserID) || d.Thread.Thread != string(oldID) {
		t.Fatalf("decision after restart = %+v", d)
	}
	newID := h.say(h.alice, h.mention("after restart"))
	if m := second.rec.message(t); m.EventID != string(newID) {
		t.Fatalf("after restart got %+v", m)
	}
}

func TestInviteOnlyToAllowedRooms(t *testing.T) {
	h := newHarness(t)
	other := h.createRoom(true) // invited before start: handled on the first sync
	r := h.startJoined(h.config(t.TempDir()))
	h.waitMembership(other, event.MembershipLeave)

	late := h.createRoom(true) // invited while running
	h.waitMembership(late, event.MembershipLeave)

	h.barrier(r, h.alice)
	r.rec.quiet(t)

	// With no room list, any invite is accepted.
	h2 := newHarness(t)
	cfg := h2.config(t.TempDir())
	cfg.Rooms = nil
	h2.startJoined(cfg)
	extra := h2.createRoom(true)
	h2.waitMembership(extra, event.MembershipJoin)
}

func TestApprovalByReactionAndPowerLevels(t *testing.T) {
	h := newHarness(t)
	r := h.startJoined(h.config(t.TempDir()))
	rootID := h.say(h.alice, h.mention("restart nginx on @web-1"))
	r.rec.message(t)
	thread := bot.ThreadRef{Platform: "matrix", Channel: string(h.room), Thread: string(rootID)}
	ctx := ctxT(t, 60*time.Second)

	ref, err := r.PostApproval(ctx, thread, testCard(bot.ApprovalPending))
	if err != nil {
		t.Fatal(err)
	}
	card := h.event(id.EventID(ref.ID))
	if card.Content.Raw[fieldApprovalID] != "ap-42" || card.Content.AsMessage().RelatesTo.GetThreadParent() != rootID {
		t.Fatalf("card content = %v", card.Content.Raw)
	}

	// ✅ by alice (power 0): delivered, and her facts say she is no approver.
	reactID := h.react(h.alice, id.EventID(ref.ID), "✅")
	d := r.rec.decision(t)
	if d.ApprovalID != "ap-42" || !d.Approve || d.User != string(h.alice.UserID) || d.Token != "" ||
		d.EventID != string(reactID) || d.Thread != thread {
		t.Fatalf("alice's decision = %+v", d)
	}
	facts, err := r.UserFacts(ctx, d.Thread, d.User)
	if err != nil {
		t.Fatal(err)
	}
	if facts.PowerLevel == nil || *facts.PowerLevel != 0 || facts.IsApprover {
		t.Fatalf("alice's facts = %+v", facts)
	}
	// ✅ by the moderator (power 50 ≥ threshold 50).
	h.react(h.mod, id.EventID(ref.ID), "✅\ufe0f")
	d = r.rec.decision(t)
	if d.User != string(h.mod.UserID) || !d.Approve {
		t.Fatalf("mod's decision = %+v", d)
	}
	facts, err = r.UserFacts(ctx, d.Thread, d.User)
	if err != nil {
		t.Fatal(err)
	}
	if facts.PowerLevel == nil || *facts.PowerLevel != 50 || !facts.IsApprover {
		t.Fatalf("mod's facts = %+v", facts)
	}

	// ✅ on something that is not a card, and other emoji: nothing.
	h.react(h.mod, rootID, "✅")
	h.react(h.mod, id.EventID(ref.ID), "👍")

	// ❌ asks for the reason; the reacting user's next message in the
	// thread is the reason (other users' messages are ordinary messages).
	h.react(h.mod, id.EventID(ref.ID), "❌")
	h.waitBotMessage("the reason prompt", func(e *event.Event) bool {
		c := e.Content.AsMessage()
		return strings.Contains(c.Body, "why deny ap-42") && c.Mentions != nil &&
			len(c.Mentions.UserIDs) == 1 && c.Mentions.UserIDs[0] == h.mod.UserID &&
			c.RelatesTo.GetThreadParent() == rootID
	})
	other := h.say(h.alice, inThread(&event.MessageEventContent{Body: "meanwhile, @web-1 looks ok"}, rootID))
	if m := r.rec.message(t); m.EventID != string(other) {
		t.Fatalf("alice's thread message = %+v", m)
	}
	reasonID := h.say(h.mod, inThread(&event.MessageEventContent{Body: "change freeze until Monday"}, rootID))
	d = r.rec.decision(t)
	if d.Approve || d.Reason != "change freeze until Monday" || d.User != string(h.mod.UserID) ||
		d.EventID != string(reasonID) || d.ApprovalID != "ap-42" {
		t.Fatalf("deny decision = %+v", d)
	}
	h.barrier(r, h.alice)
	r.rec.quiet(t)

	// Power levels stay current from sync: alice promoted to 50.
	pl, err := r.powerLevels(ctx, h.room)
	if err != nil {
		t.Fatal(err)
	}
	promoted := &event.PowerLevelsEventContent{}
	if err := h.owner.StateEvent(ctx, h.room, event.StatePowerLevels, "", promoted); err != nil {
		t.Fatal(err)
	}
	promoted.SetUserLevel(h.alice.UserID, 50)
	if _, err := h.owner.SendStateEvent(ctx, h.room, event.StatePowerLevels, "", promoted); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		facts, err = r.UserFacts(ctx, thread, string(h.alice.UserID))
		if err == nil && facts.IsApprover {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice's facts after promotion = %+v, %v (cached %p)", facts, err, pl)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestApprovalCommandsAndCardEdit(t *testing.T) {
	h := newHarness(t)
	r := h.startJoined(h.config(t.TempDir()))
	rootID := h.say(h.alice, h.mention("restart nginx on @web-1"))
	r.rec.message(t)
	thread := bot.ThreadRef{Platform: "matrix", Channel: string(h.room), Thread: string(rootID)}
	ctx := ctxT(t, 60*time.Second)
	ref, err := r.PostApproval(ctx, thread, testCard(bot.ApprovalPending))
	if err != nil {
		t.Fatal(err)
	}

	cmdID := h.say(h.mod, inThread(&event.MessageEventContent{Body: "!approve ap-42"}, rootID))
	d := r.rec.decision(t)
	if d.ApprovalID != "ap-42" || !d.Approve || d.EventID != string(cmdID) || d.Thread != thread || d.User != string(h.mod.UserID) {
		t.Fatalf("!approve = %+v", d)
	}
	h.say(h.mod, inThread(&event.MessageEventContent{Body: "!deny ap-42 too risky today"}, rootID))
	d = r.rec.decision(t)
	if d.Approve || d.Reason != "too risky today" || d.ApprovalID != "ap-42" {
		t.Fatalf("!deny = %+v", d)
	}
	// With the bot's mention in front, outside the thread.
	topID := h.say(h.mod, h.mention("!approve ap-43"))
	d = r.rec.decision(t)
	if d.ApprovalID != "ap-43" || !d.Approve || d.Thread.Thread != string(topID) {
		t.Fatalf("top-level !approve = %+v", d)
	}
	// "!deny <id>" without a reason asks for one, like ❌.
	h.say(h.mod, inThread(&event.MessageEventContent{Body: "!deny ap-42"}, rootID))
	h.waitBotMessage("the reason prompt", func(e *event.Event) bool {
		return strings.Contains(e.Content.AsMessage().Body, "why deny ap-42")
	})
	h.say(h.mod, inThread(&event.MessageEventContent{Body: "no"}, rootID))
	if d = r.rec.decision(t); d.Approve || d.Reason != "no" {
		t.Fatalf("reason after !deny = %+v", d)
	}
	// "!approve" alone gets the usage line, no decision.
	h.say(h.mod, inThread(&event.MessageEventContent{Body: "!approve"}, rootID))
	h.waitBotMessage("the usage line", func(e *event.Event) bool {
		return strings.HasPrefix(e.Content.AsMessage().Body, "Usage: !approve <id>")
	})
	h.barrier(r, h.alice)
	r.rec.quiet(t)

	// UpdateApproval edits the card with m.replace.
	decided := testCard(bot.ApprovalDenied)
	if err := r.UpdateApproval(ctx, ref, decided); err != nil {
		t.Fatal(err)
	}
	edit := h.waitBotMessage("the card edit", func(e *event.Event) bool {
		return e.Content.AsMessage().RelatesTo.GetReplaceID() == id.EventID(ref.ID)
	})
	nc, _ := edit.Content.Raw["m.new_content"].(map[string]any)
	if nc == nil || nc[fieldApprovalStatus] != "denied" || !strings.Contains(nc["body"].(string), "Denied by @mod:localhost") ||
		!strings.Contains(nc["body"].(string), "not during business hours") {
		t.Fatalf("edit content = %v", edit.Content.Raw)
	}
}

func TestPasswordLoginErrorsNameTheKey(t *testing.T) {
	hs := dendrite.Start(t)
	hs.Register(t, "vigil", botPassword, false)
	a, err := New(Config{Homeserver: hs.URL(), UserID: "@vigil:" + dendrite.ServerName, Password: "wrong-password"})
	if err != nil {
		t.Fatal(err)
	}
	err = a.Start(ctxT(t, 20*time.Second), newRecorder())
	if err == nil || !strings.Contains(err.Error(), "matrix.password") {
		t.Fatalf("Start = %v, want an error naming matrix.password", err)
	}
	b, err := New(Config{Homeserver: hs.URL(), UserID: "@vigil:" + dendrite.ServerName, AccessToken: "nope"})
	if err != nil {
		t.Fatal(err)
	}
	err = b.Start(ctxT(t, 20*time.Second), newRecorder())
	if err == nil || !strings.Contains(err.Error(), "matrix.access_token") {
		t.Fatalf("Start = %v, want an error naming matrix.access_token", err)
	}
	// Calls before login fail at their deadline instead of hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := b.Post(ctx, bot.ThreadRef{Channel: "!x:localhost"}, bot.Reply{Text: "x"}); err == nil {
		t.Fatal("Post before login succeeded")
	}
}

// Dendrite rate-limits typing notifications; with a threshold of 3 the
// adapter must wait out M_LIMIT_EXCEEDED (retry_after_ms) and succeed.
func TestRateLimitedCallsRetryAgainstDendrite(t *testing.T) {
	h := newHarnessWith(t, dendrite.Options{RateLimit: true})
	r := h.startJoined(h.config(t.TempDir()))
	thread := bot.ThreadRef{Platform: "matrix", Channel: string(h.room), Thread: "$x"}
	ctx := ctxT(t, 60*time.Second)
	start := time.Now()
	for i := 0; i < 8; i++ {
		if err := r.SetStatus(ctx, thread, "working"); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	// 8 calls through a bucket of 3 per 300ms must have waited.
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Fatalf("8 rate-limited calls took only %s: no retry happened?", el)
	}
}

// panicky is a handler whose first message panics.
type panicky struct {
	*recorder
	n int
}

func (p *panicky) HandleMessage(ctx context.Context, m bot.Message) {
	p.n++
	if p.n == 1 {
		panic("handler bug")
	}
	p.recorder.HandleMessage(ctx, m)
}

// A panic in the bot's handler is recovered at the adapter's boundary (and
// logged with an error ID); the sync loop goes on.
func TestHandlerPanicIsRecovered(t *testing.T) {
	h := newHarness(t)
	a, err := New(h.config(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	p := &panicky{recorder: newRecorder()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Start(ctx, p) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-a.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("adapter not ready")
	}
	h.waitMembership(h.room, event.MembershipJoin)
	h.say(h.alice, h.mention("this one panics"))
	second := h.say(h.alice, h.mention("this one arrives"))
	if m := p.message(t); m.EventID != string(second) {
		t.Fatalf("after the panic got %+v", m)
	}
}
