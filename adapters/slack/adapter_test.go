package slack

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/testenv/slackfake"
)

const (
	chOps   = "C0OPS"
	dmAlice = "D0ALICE"
	alice   = "U0ALICE"
	bob     = "U0BOB"
)

func TestConfigValidation(t *testing.T) {
	ok := Config{BotToken: "xoxb-1", AppToken: "xapp-1"}
	cases := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"socket ok", func(*Config) {}, ""},
		{"no bot token", func(c *Config) { c.BotToken = "" }, "slack.bot_token is required"},
		{"app token as bot token", func(c *Config) { c.BotToken = "xapp-1" }, "slack.bot_token holds an app-level token"},
		{"socket without app token", func(c *Config) { c.AppToken = "" }, "slack.app_token is required in socket mode"},
		{"socket with a bot token as app token", func(c *Config) { c.AppToken = "xoxb-2" }, "slack.app_token must be an app-level token"},
		{"bad mode", func(c *Config) { c.Mode = "rtm" }, "slack.mode must be"},
		{"http without secret", func(c *Config) { c.Mode, c.Listen = "http", ":3000" }, "slack.signing_secret is required in http mode"},
		{"http without listen", func(c *Config) { c.Mode, c.SigningSecret = "http", "s" }, "slack.listen is required in http mode"},
		{"http ok without app token", func(c *Config) { c.Mode, c.SigningSecret, c.Listen, c.AppToken = "HTTP", "s", ":3000", "" }, ""},
		{"bad api url", func(c *Config) { c.APIURL = "slack.com/api" }, "slack.api_url must be"},
		{"negative ttl", func(c *Config) { c.UsergroupTTL = -time.Second }, "slack.usergroup_ttl"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := ok
			c.mod(&cfg)
			a, err := New(cfg)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("New error = %v, want %q", err, c.want)
			case c.want == "" && (a.cfg.APIURL != DefaultAPIURL || a.cfg.UsergroupTTL != DefaultUsergroupTTL):
				t.Errorf("defaults not applied: %+v", a.cfg)
			}
		})
	}
}

// TestInbound drives every kind of inbound message through both modes.
func TestInbound(t *testing.T) {
	bothModes(t, func(t *testing.T, mode string) {
		h := startAdapter(t, mode)
		const root = "1700000100.000100"
		mentionText := "<@U0VIGIL> why is @web-01 slow? cc <@U0CAROL>, mail bob@example.com &amp; see <https://x.io/@nope|link>"

		// 1. An app mention and the message.channels copy Slack also sends.
		h.event(t, "Ev01", slackfake.AppMention(chOps, alice, mentionText, root, ""), 0)
		h.event(t, "Ev02", slackfake.ChannelMessage(chOps, alice, mentionText, root, ""), 0)
		// 2. Noise: vigil's own reply, another bot, an edit, a deletion, a
		// join, top-level chatter.
		own := slackfake.ChannelMessage(chOps, slackfake.BotUserID, "on it", "1700000100.000200", root)
		h.event(t, "Ev03", own, 0)
		otherBot := slackfake.ChannelMessage(chOps, "U0BOT", "beep", "1700000100.000300", root)
		otherBot.BotID = "B0OTHER"
		h.event(t, "Ev04", otherBot, 0)
		edit := slackfake.Event{Type: "message", SubType: "message_changed", Channel: chOps, ChannelType: "channel",
			TS: "1700000100.000400", Message: &slackfake.Event{Type: "message", User: alice, Text: "edited", TS: root}}
		h.event(t, "Ev05", edit, 0)
		del := slackfake.Event{Type: "message", SubType: "message_deleted", Channel: chOps, ChannelType: "channel",
			TS: "1700000100.000500", DeletedTS: root}
		h.event(t, "Ev06", del, 0)
		join := slackfake.ChannelMessage(chOps, bob, "<@U0BOB> has joined", "1700000100.000600", "")
		join.SubType = "channel_join"
		h.event(t, "Ev07", join, 0)
		h.event(t, "Ev08", slackfake.ChannelMessage(chOps, bob, "lunch?", "1700000100.000700", ""), 0)
		// 3. A reply in the mention's thread: addressed.
		h.event(t, "Ev09", slackfake.ChannelMessage(chOps, bob, "also check @db-1.", "1700000100.000800", root), 0)
		// 4. A reply in a thread vigil never saw: delivered, not addressed.
		h.event(t, "Ev10", slackfake.ChannelMessage(chOps, bob, "unrelated", "1700000100.000900", "1600000000.000100"), 0)
		// 5. A DM: addressed, its own thread.
		h.event(t, "Ev11", slackfake.DirectMessage(dmAlice, alice, "status of @web-01?", "1700000101.000100"), 0)

		h.settle(t)
		got := h.rec.messages()
		if len(got) != 4 {
			t.Fatalf("delivered %d messages, want 4: %+v", len(got), got)
		}
		byEvent := map[string]bot.Message{}
		for _, m := range got {
			byEvent[m.EventID] = m
		}
		mention := byEvent["Ev01"]
		wantThread := bot.ThreadRef{Platform: "slack", Channel: chOps, Thread: root}
		if mention.Thread != wantThread || mention.Thread.ChannelKey() != "slack:C0OPS" || !mention.Addressed ||
			mention.User != alice || mention.UserName != "" || mention.ID != root {
			t.Errorf("mention = %+v", mention)
		}
		// The name is the bot's to ask for when the job starts
		// (bot.NameSource): no users.info while Slack waits for the ack.
		if calls := h.fake.Calls("users.info"); len(calls) != 0 {
			t.Errorf("users.info called on the ack path: %d calls", len(calls))
		}
		if name := h.a.UserName(context.Background(), mention.Thread, alice); name != "alice" {
			t.Errorf("UserName(alice) = %q", name)
		}
		if want := "why is @web-01 slow? cc <@U0CAROL>, mail bob@example.com & see <https://x.io/@nope|link>"; mention.Text != want {
			t.Errorf("mention text = %q, want %q", mention.Text, want)
		}
		if !reflect.DeepEqual(mention.Mentions, []bot.Mention{{Name: "web-01"}}) {
			t.Errorf("mention resources = %+v", mention.Mentions)
		}
		if !mention.At.Equal(time.Unix(1700000100, 100_000)) {
			t.Errorf("mention time = %v", mention.At)
		}
		reply := byEvent["Ev09"]
		if reply.Thread != wantThread || !reply.Addressed || !reflect.DeepEqual(reply.Mentions, []bot.Mention{{Name: "db-1"}}) {
			t.Errorf("thread reply = %+v", reply)
		}
		if stray := byEvent["Ev10"]; stray.Addressed || stray.Thread.Thread != "1600000000.000100" {
			t.Errorf("reply in unknown thread = %+v", stray)
		}
		dm := byEvent["Ev11"]
		if dm.Thread != (bot.ThreadRef{Platform: "slack", Channel: dmAlice, Thread: "1700000101.000100"}) || !dm.Addressed ||
			!reflect.DeepEqual(dm.Mentions, []bot.Mention{{Name: "web-01"}}) {
			t.Errorf("dm = %+v", dm)
		}
	})
}

// A redelivered event (Slack's retry, same event_id) reaches the bot with
// the same event ID, the key of the bot's one dedup: the adapter keeps no
// dedup of its own. TestRedeliveryRunsOnce shows the bot drops it.
func TestRedeliveredEventKeepsItsEventID(t *testing.T) {
	bothModes(t, func(t *testing.T, mode string) {
		h := startAdapter(t, mode)
		ev := slackfake.AppMention(chOps, alice, "<@U0VIGIL> restart @web-01", "1700000200.000100", "")
		h.event(t, "EvDup", ev, 0)
		h.event(t, "EvDup", ev, 1) // Slack's retry: same event_id
		h.event(t, "EvNext", slackfake.AppMention(chOps, alice, "<@U0VIGIL> and now?", "1700000200.000200", ""), 0)
		h.settle(t)
		got := h.rec.messages()
		ids := map[string]int{}
		for _, m := range got {
			ids[m.EventID]++
		}
		if len(got) != 3 || ids["EvDup"] != 2 || ids["EvNext"] != 1 || got[0].Thread != got[1].Thread {
			t.Fatalf("delivered %+v, want EvDup twice (one dedup key) and EvNext once", got)
		}
	})
}

// postCard posts an approval card and returns the card's ts and its button
// values as Slack would send them back.
func postCard(t *testing.T, h *harness, thread bot.ThreadRef) (ref bot.MessageRef, approve, deny string) {
	t.Helper()
	card := bot.ApprovalCard{ID: "apr_1", Token: "tok-secret", Tool: "control", Target: "node:localhost",
		Command: "touch /tmp/x", Risk: "low", Requester: alice, ExpiresAt: time.Now().Add(10 * time.Minute), Status: bot.ApprovalPending}
	ref, err := h.a.PostApproval(context.Background(), thread, card)
	if err != nil {
		t.Fatalf("PostApproval: %v", err)
	}
	posts := h.fake.Posts()
	last := posts[len(posts)-1]
	if ref.ID != last.TS || last.Param("thread_ts") != thread.Thread || last.Param("channel") != thread.Channel {
		t.Fatalf("card ref %+v, recorded %+v", ref, last.Params)
	}
	if strings.Contains(last.Text(), "tok-secret") {
		t.Fatal("token visible in the card")
	}
	for _, b := range last.Buttons() {
		switch b.ActionID {
		case actionApprove:
			approve = b.Value
		case actionDeny:
			deny = b.Value
		}
	}
	if approve == "" || deny == "" {
		t.Fatalf("card buttons = %+v", last.Buttons())
	}
	return ref, approve, deny
}

func TestClicks(t *testing.T) {
	bothModes(t, func(t *testing.T, mode string) {
		h := startAdapter(t, mode)
		thread := bot.ThreadRef{Platform: "slack", Channel: chOps, Thread: "1700000300.000100"}
		ref, approveValue, denyValue := postCard(t, h, thread)
		click := slackfake.BlockAction{User: bob, UserName: "bob", Channel: chOps, MessageTS: ref.ID, ThreadTS: thread.Thread,
			BlockID: "vigil_approval", ActionID: actionApprove, Value: approveValue, ActionTS: "1700000301.000001"}

		h.interact(t, slackfake.BlockActions(click))
		h.interact(t, slackfake.BlockActions(click)) // redelivered: same action_ts
		second := click
		second.ActionTS = "1700000301.000002" // a real double click
		h.interact(t, slackfake.BlockActions(second))
		h.settle(t)
		decs := h.rec.decisions()
		if len(decs) != 3 || decs[1].EventID != decs[0].EventID {
			t.Fatalf("decisions = %+v, want 3, the redelivery with the first's event ID (the bot drops it)", decs)
		}
		decs = append(decs[:1], decs[2:]...)
		d := decs[0]
		want := bot.Decision{EventID: "action:1700000301.000001:U0BOB", ApprovalID: "apr_1", Token: "tok-secret", FromButton: true, Approve: true,
			User: bob, UserName: "bob", Thread: thread, At: time.Unix(1700000301, 1000)}
		if !reflect.DeepEqual(d, want) {
			t.Errorf("decision = %+v\nwant       %+v", d, want)
		}
		if decs[1].EventID == d.EventID {
			t.Error("double click got the same event ID")
		}

		// Deny: a dialog asks for the reason, the submission decides.
		denyClick := click
		denyClick.ActionID, denyClick.Value, denyClick.ActionTS, denyClick.TriggerID = actionDeny, denyValue, "1700000302.000001", "trig-deny"
		h.interact(t, slackfake.BlockActions(denyClick))
		views := h.fake.WaitCalls(t, "views.open", 1, wait)
		if views[0].Param("trigger_id") != "trig-deny" {
			t.Errorf("views.open trigger = %q", views[0].Param("trigger_id"))
		}
		var view struct {
			CallbackID      string `json:"callback_id"`
			PrivateMetadata string `json:"private_metadata"`
		}
		if err := json.Unmarshal([]byte(views[0].Param("view")), &view); err != nil || view.CallbackID != denyCallbackID {
			t.Fatalf("view = %s (%v)", views[0].Param("view"), err)
		}
		if strings.Contains(views[0].Text(), "tok-secret") {
			t.Error("token shown in the dialog")
		}
		// A redelivered deny click opens no second dialog (its trigger
		// would have expired, and the fallback would deny without a
		// reason): the adapter opens each click's dialog once.
		h.interact(t, slackfake.BlockActions(denyClick))
		h.settle(t)
		if n := len(h.fake.Calls("views.open")); n != 1 {
			t.Fatalf("views.open called %d times for one deny click", n)
		}
		if len(h.rec.decisions()) != 3 {
			t.Fatal("deny click decided before the reason was given")
		}
		h.interact(t, slackfake.ViewSubmissionPayload(slackfake.ViewSubmission{User: bob, ViewID: "V1", CallbackID: denyCallbackID,
			PrivateMetadata: view.PrivateMetadata, Values: map[string]map[string]string{"reason": {"reason": "  not during the deploy  "}}}))
		decs = h.rec.waitDecisions(t, 4)
		den := decs[3]
		if den.Approve || den.ApprovalID != "apr_1" || den.Token != "tok-secret" || !den.FromButton || den.Reason != "not during the deploy" ||
			den.User != bob || den.Thread != thread || den.EventID != "view:V1" {
			t.Errorf("denial = %+v", den)
		}
	})
}

func TestDenyWithoutDialog(t *testing.T) {
	h := startAdapter(t, ModeSocket)
	h.fake.Inject("views.open", slackfake.Fault{Error: "expired_trigger_id"})
	thread := bot.ThreadRef{Platform: "slack", Channel: chOps, Thread: "1700000400.000100"}
	ref, _, denyValue := postCard(t, h, thread)
	h.interact(t, slackfake.BlockActions(slackfake.BlockAction{User: bob, Channel: chOps, MessageTS: ref.ID, ThreadTS: thread.Thread,
		ActionID: actionDeny, Value: denyValue, ActionTS: "1700000401.000001"}))
	d := h.rec.waitDecisions(t, 1)[0]
	if d.Approve || d.ApprovalID != "apr_1" || !strings.Contains(d.Reason, "no reason given") {
		t.Errorf("fallback denial = %+v", d)
	}
}

func TestOutbound(t *testing.T) {
	h := startAdapter(t, ModeSocket)
	ctx := context.Background()
	thread := bot.ThreadRef{Platform: "slack", Channel: chOps, Thread: "1700000500.000100"}

	ref, err := h.a.Post(ctx, thread, bot.Reply{Kind: bot.ReplyAnswer, Text: "**Done**: restarted [nginx](https://x.io)"})
	if err != nil {
		t.Fatal(err)
	}
	posts := h.fake.Posts()
	if len(posts) != 1 || posts[0].Param("thread_ts") != thread.Thread || posts[0].Param("channel") != chOps || ref.ID != posts[0].TS || ref.ThreadRef != thread {
		t.Fatalf("answer post = %+v ref %+v", posts, ref)
	}
	if !strings.Contains(posts[0].Text(), "*Done*: restarted <https://x.io|nginx>") {
		t.Errorf("answer not converted to mrkdwn: %q", posts[0].Text())
	}
	if _, err := h.a.Post(ctx, bot.ThreadRef{Platform: "slack", Channel: chOps}, bot.Reply{Kind: bot.ReplyNotice, Text: "x"}); !errors.Is(err, ErrNoThread) {
		t.Errorf("post without thread: %v", err)
	}
	if _, err := h.a.Post(ctx, bot.ThreadRef{Platform: "matrix", Channel: "!r", Thread: "$e"}, bot.Reply{Kind: bot.ReplyNotice, Text: "x"}); !errors.Is(err, ErrNotSlack) {
		t.Errorf("post to another platform: %v", err)
	}

	// Replies in a thread vigil posted in are addressed to it.
	h.event(t, "EvReply", slackfake.ChannelMessage(chOps, alice, "thanks", "1700000500.000900", thread.Thread), 0)
	if m := h.rec.waitMessages(t, 1)[0]; !m.Addressed {
		t.Errorf("reply in vigil's thread not addressed: %+v", m)
	}

	// The card is updated in place, without buttons.
	cardRef, _, _ := postCard(t, h, thread)
	decided := bot.ApprovalCard{ID: "apr_1", Token: "tok-secret", Tool: "control", Target: "node:localhost", Command: "touch /tmp/x",
		Status: bot.ApprovalApproved, DecidedBy: bob, DecidedAt: time.Now()}
	if err := h.a.UpdateApproval(ctx, cardRef, decided); err != nil {
		t.Fatalf("UpdateApproval: %v", err)
	}
	up := h.fake.Calls("chat.update")
	if len(up) != 1 || up[0].Param("channel") != chOps || up[0].Param("ts") != cardRef.ID || !up[0].OK() {
		t.Fatalf("chat.update = %+v", up)
	}
	if len(up[0].Buttons()) != 0 || !strings.Contains(up[0].Text(), "Approved by <@U0BOB>") || strings.Contains(up[0].Text(), "tok-secret") {
		t.Errorf("updated card = %q buttons %v", up[0].Text(), up[0].Buttons())
	}

	// Ephemeral notices reach one user in the thread.
	if err := h.a.NotifyUser(ctx, thread, alice, "Not accepted: you cannot approve your own request"); err != nil {
		t.Fatal(err)
	}
	eph := h.fake.Calls("chat.postEphemeral")
	if len(eph) != 1 || eph[0].Param("user") != alice || eph[0].Param("thread_ts") != thread.Thread || !strings.Contains(eph[0].Text(), "your own request") {
		t.Errorf("ephemeral = %+v", eph)
	}
}

func TestRateLimitHonoured(t *testing.T) {
	h := startAdapter(t, ModeSocket)
	h.fake.Inject("chat.postMessage", slackfake.Fault{Nth: 1, Status: http.StatusTooManyRequests, RetryAfter: 1})
	h.fake.Inject("chat.update", slackfake.Fault{Nth: 1, Status: http.StatusTooManyRequests, RetryAfter: 1})
	thread := bot.ThreadRef{Platform: "slack", Channel: chOps, Thread: "1700000600.000100"}
	ref, err := h.a.Post(context.Background(), thread, bot.Reply{Kind: bot.ReplyNotice, Text: "hello"})
	if err != nil {
		t.Fatalf("post after 429: %v", err)
	}
	calls := h.fake.Calls("chat.postMessage")
	if len(calls) != 2 || calls[0].Status != http.StatusTooManyRequests || !calls[1].OK() || ref.ID != calls[1].TS {
		t.Fatalf("calls = %+v", calls)
	}
	if gap := calls[1].At.Sub(calls[0].At); gap < time.Second {
		t.Errorf("retried after %v, before Retry-After (1s)", gap)
	}
	if err := h.a.UpdateApproval(context.Background(), ref, bot.ApprovalCard{ID: "a", Tool: "control", Status: bot.ApprovalExpired}); err != nil {
		t.Fatalf("update after 429: %v", err)
	}
	up := h.fake.Calls("chat.update")
	if len(up) != 2 || up[1].At.Sub(up[0].At) < time.Second {
		t.Errorf("chat.update retry = %+v", up)
	}
}

func traceN(i int) *bot.Trace {
	return &bot.Trace{Tool: "read", Action: "exec", Target: "node:localhost", Command: "echo " + string(rune('a'+i%26)),
		Outcome: bot.OutcomeOK, Duration: time.Millisecond, Output: "out"}
}

// countTraces counts trace title lines in a recorded post.
func countTraces(c slackfake.Call) int {
	n := 0
	for _, b := range c.Blocks {
		if txt, ok := b["text"].(map[string]any); ok && strings.Contains(txt["text"].(string), "*read.exec* on") {
			n++
		}
	}
	return n
}

func TestPacingAndBatching(t *testing.T) {
	h := startAdapter(t, ModeSocket)
	h.a.out.interval = 300 * time.Millisecond
	ctx := context.Background()
	thread := bot.ThreadRef{Platform: "slack", Channel: chOps, Thread: "1700000700.000100"}
	other := bot.ThreadRef{Platform: "slack", Channel: "C0OTHER", Thread: "1700000700.000200"}

	const n = 6
	for i := 0; i < n; i++ {
		ref, err := h.a.Post(ctx, thread, bot.Reply{Kind: bot.ReplyTrace, Trace: traceN(i)})
		if err != nil || ref.ThreadRef != thread {
			t.Fatalf("trace post: %+v %v", ref, err)
		}
	}
	// Another channel is paced on its own and not held up.
	if _, err := h.a.Post(ctx, other, bot.Reply{Kind: bot.ReplyNotice, Text: "elsewhere"}); err != nil {
		t.Fatal(err)
	}
	// The answer comes after every trace queued before it.
	if _, err := h.a.Post(ctx, thread, bot.Reply{Kind: bot.ReplyAnswer, Text: "all done"}); err != nil {
		t.Fatal(err)
	}
	var inThread []slackfake.Call
	for _, c := range h.fake.Posts() {
		if c.Param("channel") == chOps {
			inThread = append(inThread, c)
		}
	}
	// n traces arrived at once: they share at most a few messages instead
	// of n, nothing is lost, the order holds.
	traces := 0
	for i, c := range inThread[:len(inThread)-1] {
		k := countTraces(c)
		if k == 0 {
			t.Errorf("post %d is not a trace: %q", i, c.Text())
		}
		traces += k
		if len(c.Blocks) > maxBlocks {
			t.Errorf("post %d has %d blocks", i, len(c.Blocks))
		}
	}
	if traces != n {
		t.Errorf("%d traces posted, want %d", traces, n)
	}
	if len(inThread) > 3 {
		t.Errorf("%d messages for %d traces and an answer: not batched", len(inThread), n)
	}
	if last := inThread[len(inThread)-1]; !strings.Contains(last.Text(), "all done") {
		t.Errorf("last post = %q, want the answer", last.Text())
	}
	for i := 1; i < len(inThread); i++ {
		if gap := inThread[i].At.Sub(inThread[i-1].At); gap < 300*time.Millisecond {
			t.Errorf("posts %d and %d only %v apart", i-1, i, gap)
		}
	}
	order := ""
	for _, c := range inThread {
		for _, b := range c.Blocks {
			if txt, ok := b["text"].(map[string]any); ok && strings.HasPrefix(txt["text"].(string), "```echo") {
				order += strings.TrimSuffix(strings.TrimPrefix(txt["text"].(string), "```echo "), "```")
			}
		}
	}
	if order != "abcdef" {
		t.Errorf("trace order = %q", order)
	}
}

func TestBatchesStayWithinBlockKitLimits(t *testing.T) {
	h := startAdapter(t, ModeSocket)
	h.a.out.interval = 200 * time.Millisecond
	thread := bot.ThreadRef{Platform: "slack", Channel: chOps, Thread: "1700000800.000100"}
	const n = 40
	for i := 0; i < n; i++ {
		tr := traceN(i)
		tr.Outcome, tr.Code, tr.Message = bot.OutcomeFailed, "EXECUTION_FAILED", "exit 1"
		if _, err := h.a.Post(context.Background(), thread, bot.Reply{Kind: bot.ReplyTrace, Trace: tr}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.a.Post(context.Background(), thread, bot.Reply{Kind: bot.ReplyNotice, Text: "end"}); err != nil {
		t.Fatal(err)
	}
	total := 0
	posts := h.fake.Posts()
	for _, c := range posts[:len(posts)-1] {
		if len(c.Blocks) > maxBlocks {
			t.Errorf("%d blocks in one message", len(c.Blocks))
		}
		total += countTraces(c)
	}
	if total != n || len(posts) > n/2 {
		t.Errorf("%d traces in %d messages", total, len(posts)-1)
	}
}

func TestTraceFullOutputUpload(t *testing.T) {
	h := startAdapter(t, ModeSocket)
	thread := bot.ThreadRef{Platform: "slack", Channel: chOps, Thread: "1700000900.000100"}
	full := strings.Repeat("0123456789abcdef\n", 200)
	tr := traceN(0)
	tr.Output, tr.FullOutput, tr.Truncated = full[:bot.TraceOutputLimit], full, true
	if _, err := h.a.Post(context.Background(), thread, bot.Reply{Kind: bot.ReplyTrace, Trace: tr}); err != nil {
		t.Fatal(err)
	}
	// Wait for the upload by posting a synchronous message behind it.
	if _, err := h.a.Post(context.Background(), thread, bot.Reply{Kind: bot.ReplyNotice, Text: "after"}); err != nil {
		t.Fatal(err)
	}
	ups := h.fake.Uploads()
	if len(ups) != 1 || ups[0].Content != full || !ups[0].Completed || ups[0].Channel != chOps || ups[0].ThreadTS != thread.Thread {
		t.Fatalf("uploads = %+v", ups)
	}
	if !strings.Contains(h.fake.Posts()[0].Text(), "the full output is attached") {
		t.Error("trace does not mention the attachment")
	}

	// When the upload fails the thread is told, with an ID in the log.
	h.fake.Inject("files.getUploadURLExternal", slackfake.Fault{Error: "invalid_auth"})
	if _, err := h.a.Post(context.Background(), thread, bot.Reply{Kind: bot.ReplyTrace, Trace: tr}); err != nil {
		t.Fatal(err)
	}
	h.fake.WaitFor(t, wait, "the upload failure notice", func(calls []slackfake.Call) bool {
		for _, c := range calls {
			if c.Method == "chat.postMessage" && strings.Contains(c.Text(), "could not be attached") {
				return true
			}
		}
		return false
	})
	if h.logs.count("slack: file not attached") != 1 {
		t.Errorf("upload failure not logged once:\n%s", h.logs.String())
	}
}

func TestTraceNeverDroppedSilently(t *testing.T) {
	h := startAdapter(t, ModeSocket)
	h.fake.Inject("chat.postMessage", slackfake.Fault{Nth: 1, Error: "msg_too_long"})
	thread := bot.ThreadRef{Platform: "slack", Channel: chOps, Thread: "1700001000.000100"}
	if _, err := h.a.Post(context.Background(), thread, bot.Reply{Kind: bot.ReplyTrace, Trace: traceN(0)}); err != nil {
		t.Fatal(err)
	}
	posts := h.fake.WaitCalls(t, "chat.postMessage", 1, wait)
	notice := posts[0].Text()
	if !strings.Contains(notice, "could not be posted") || !strings.Contains(notice, "read.exec") {
		t.Fatalf("failure notice = %q", notice)
	}
	i := strings.Index(notice, "error ID `")
	if i < 0 {
		t.Fatalf("no error ID in %q", notice)
	}
	id := notice[i+len("error ID `") : i+len("error ID `")+8]
	if !strings.Contains(h.logs.String(), "error_id="+id) {
		t.Errorf("error ID %s not in the log:\n%s", id, h.logs.String())
	}
}

func TestUsergroups(t *testing.T) {
	h := startAdapter(t, ModeSocket)
	h.fake.AddUsergroup(slackfake.Usergroup{ID: "S0ONCALL", Handle: "oncall", Members: []string{alice, bob}})
	h.fake.AddUsergroup(slackfake.Usergroup{ID: "S0SRE", Handle: "sre", Members: []string{bob}, ListWithoutUsers: true})
	now := time.Unix(1700000000, 0)
	h.a.groups.now = func() time.Time { return now }
	ctx := context.Background()
	thread := bot.ThreadRef{Platform: "slack", Channel: chOps, Thread: "1.1"}

	facts, err := h.a.UserFacts(ctx, thread, bob)
	if err != nil || !reflect.DeepEqual(facts.Groups, []string{"usergroup:S0ONCALL", "usergroup:S0SRE"}) {
		t.Fatalf("bob's facts = %+v, %v", facts, err)
	}
	facts, _ = h.a.UserFacts(ctx, thread, alice)
	if !reflect.DeepEqual(facts.Groups, []string{"usergroup:S0ONCALL"}) {
		t.Errorf("alice's facts = %+v", facts)
	}
	if facts, _ = h.a.UserFacts(ctx, thread, "U0NOBODY"); len(facts.Groups) != 0 {
		t.Errorf("stranger's facts = %+v", facts)
	}
	if n := len(h.fake.Calls("usergroups.list")); n != 1 {
		t.Errorf("usergroups.list called %d times within the TTL", n)
	}
	if n := len(h.fake.Calls("usergroups.users.list")); n != 1 {
		t.Errorf("usergroups.users.list called %d times, want 1 (only for the group listed without members)", n)
	}
	now = now.Add(DefaultUsergroupTTL)
	_, _ = h.a.UserFacts(ctx, thread, bob)
	if n := len(h.fake.Calls("usergroups.list")); n != 2 {
		t.Errorf("usergroups.list called %d times after the TTL, want 2", n)
	}

	// A plan that refuses user groups: no groups, one warning, ever.
	h.fake.Inject("usergroups.list", slackfake.Fault{Error: "paid_only"})
	for i := 0; i < 3; i++ {
		now = now.Add(DefaultUsergroupTTL)
		facts, err := h.a.UserFacts(ctx, thread, bob)
		if err != nil || len(facts.Groups) != 0 {
			t.Fatalf("facts on a free plan = %+v, %v", facts, err)
		}
	}
	if n := h.logs.count("user groups are not available"); n != 1 {
		t.Errorf("%d fallback warnings, want 1", n)
	}
}

func TestSetStatus(t *testing.T) {
	h := startAdapter(t, ModeSocket)
	ctx := context.Background()
	thread := bot.ThreadRef{Platform: "slack", Channel: chOps, Thread: "1700001100.000100"}
	if err := h.a.SetStatus(ctx, thread, "investigating…"); err != nil {
		t.Fatal(err)
	}
	calls := h.fake.Calls("assistant.threads.setStatus")
	if len(calls) != 1 || calls[0].Param("status") != "investigating…" || calls[0].Param("thread_ts") != thread.Thread || calls[0].Param("channel_id") != chOps {
		t.Fatalf("setStatus = %+v", calls)
	}
	h.fake.Inject("assistant.threads.setStatus", slackfake.Fault{Error: "missing_scope"})
	for i := 0; i < 3; i++ {
		if err := h.a.SetStatus(ctx, thread, ""); err != nil {
			t.Fatalf("refused status not skipped silently: %v", err)
		}
	}
	if n := len(h.fake.Calls("assistant.threads.setStatus")); n != 2 {
		t.Errorf("setStatus called %d times, want 2 (the refusal is remembered)", n)
	}
}

func TestSocketMalformedEnvelopes(t *testing.T) {
	h := startAdapter(t, ModeSocket)
	// An events_api envelope whose payload is not an Events API callback,
	// and one whose inner event is junk: acked, logged, no delivery.
	h.fake.PushRaw(t, []byte(`{"envelope_id":"env-bad-1","type":"events_api","payload":{"type":"event_callback","event_id":"EvBad","event":"not an object"}}`))
	h.fake.WaitAck(t, "env-bad-1", wait)
	h.fake.PushRaw(t, []byte(`{"envelope_id":"env-bad-2","type":"interactive","payload":{"type":"block_actions","user":{"id":"U0BOB"},"actions":[{"action_id":"vigil_approve","value":"{not json","action_ts":"1.1"}]}}`))
	h.fake.WaitAck(t, "env-bad-2", wait)
	h.fake.PushRaw(t, []byte(`{"envelope_id":"env-bad-3","type":"nonsense"}`))
	h.fake.WaitAck(t, "env-bad-3", wait)
	// Still alive.
	h.event(t, "EvOK", slackfake.DirectMessage(dmAlice, alice, "hi", "1700001200.000100"), 0)
	if got := h.rec.waitMessages(t, 1); len(got) != 1 || got[0].EventID != "EvOK" || len(h.rec.decisions()) != 0 {
		t.Fatalf("after malformed envelopes: %+v %+v", got, h.rec.decisions())
	}
	if h.logs.count("malformed") < 2 {
		t.Errorf("malformed envelopes not logged:\n%s", h.logs.String())
	}
	for _, a := range h.fake.Acks() {
		if len(a.Payload) != 0 && string(a.Payload) != "null" {
			t.Errorf("ack %s carries a payload %s", a.EnvelopeID, a.Payload)
		}
	}
}

// TestRateLimitRebatches: traces that queue while the channel waits out a
// 429 go out together with the one that was refused, in order.
func TestRateLimitRebatches(t *testing.T) {
	h := startAdapter(t, ModeSocket)
	h.fake.Inject("chat.postMessage", slackfake.Fault{Nth: 1, Status: http.StatusTooManyRequests, RetryAfter: 1})
	thread := bot.ThreadRef{Platform: "slack", Channel: chOps, Thread: "1700001300.000100"}
	for i := 0; i < 5; i++ {
		if _, err := h.a.Post(context.Background(), thread, bot.Reply{Kind: bot.ReplyTrace, Trace: traceN(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.a.Post(context.Background(), thread, bot.Reply{Kind: bot.ReplyNotice, Text: "end"}); err != nil {
		t.Fatal(err)
	}
	posts := h.fake.Posts()
	if len(posts) != 2 || countTraces(posts[0]) != 5 {
		t.Fatalf("after a 429: %d posts, first with %d traces; want 2 posts, all 5 traces in the first", len(posts), countTraces(posts[0]))
	}
	if !strings.Contains(posts[0].Param("text"), "5 tool calls") {
		t.Errorf("batch fallback text = %q", posts[0].Param("text"))
	}
}
