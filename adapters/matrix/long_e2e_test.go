package matrix

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/vigilops/vigil/bot"
)

// Issue 29 and 23 against a real Dendrite: long content arrives whole,
// prompts notify, thread-less replies count, and power levels set before
// the bot joined are used.

// threadMessages are the bot's m.room.message events in the thread,
// oldest first, as the owner reads them.
func (h *harness) threadMessages(root id.EventID) []*event.Event {
	h.t.Helper()
	var out []*event.Event
	from := ""
	for range 20 {
		resp, err := h.owner.Messages(ctxT(h.t, 10*time.Second), h.room, from, "", mautrix.DirectionBackward, nil, 100)
		if err != nil {
			h.t.Fatalf("messages: %v", err)
		}
		for _, evt := range resp.Chunk {
			if evt.Sender != h.botID || evt.Type != event.EventMessage {
				continue
			}
			_ = evt.Content.ParseRaw(evt.Type)
			if evt.Content.AsMessage().RelatesTo.GetThreadParent() == root {
				out = append([]*event.Event{evt}, out...)
			}
		}
		if resp.End == "" || len(resp.Chunk) == 0 {
			break
		}
		from = resp.End
	}
	return out
}

// waitThread polls the thread's bot messages until ok holds or 15s pass:
// Dendrite may list the last events a moment after they were sent.
func (h *harness) waitThread(root id.EventID, ok func([]*event.Event) bool) []*event.Event {
	h.t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		msgs := h.threadMessages(root)
		if ok(msgs) || time.Now().After(deadline) {
			return msgs
		}
	}
}

// hasFile reports whether a bot message in ms is a file named name ("":
// any).
func hasFile(ms []*event.Event, name string) bool {
	for _, m := range ms {
		if c := m.Content.AsMessage(); c.MsgType == event.MsgFile && (name == "" || c.FileName == name) {
			return true
		}
	}
	return false
}

// download fetches an m.file's content as the owner.
func (h *harness) download(c *event.MessageEventContent) []byte {
	h.t.Helper()
	uri, err := c.URL.Parse()
	if err != nil {
		h.t.Fatalf("file URL %q: %v", c.URL, err)
	}
	resp, err := h.owner.Download(ctxT(h.t, 20*time.Second), uri)
	if err != nil {
		h.t.Fatalf("download %s: %v", c.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

func TestLongAnswerArrivesWholeOnDendrite(t *testing.T) {
	h := newHarness(t)
	r := h.startJoined(h.config(t.TempDir()))
	rootID := h.say(h.alice, h.mention("list every host"))
	r.rec.message(t)
	thread := bot.ThreadRef{Platform: "matrix", Channel: string(h.room), Thread: string(rootID)}

	// About 80 KB of Markdown, with the characters that grow under HTML
	// and JSON escaping (the 32 KB answer became 80,714 bytes).
	var b strings.Builder
	b.WriteString("# Hosts\n\n")
	for i := 1; b.Len() < 80_000; i++ {
		fmt.Fprintf(&b, "- item %d: `web-%d` <ok> & \"fine\" — see [status](https://status.example/%d?a=1&b=2)\n", i, i, i)
	}
	md := b.String()
	if _, err := r.Post(ctxT(t, 60*time.Second), thread, bot.Reply{Kind: bot.ReplyAnswer, Text: md, RunID: "run-80k"}); err != nil {
		t.Fatalf("post an 80 KB answer: %v", err)
	}
	msgs := h.waitThread(rootID, func(ms []*event.Event) bool {
		return len(ms) > 0 && ms[len(ms)-1].Content.Raw[fieldRunID] == "run-80k"
	})
	if len(msgs) < 2 {
		t.Fatalf("an 80 KB answer arrived as %d event(s)", len(msgs))
	}
	var body strings.Builder
	for _, m := range msgs {
		c := m.Content.AsMessage()
		if c.MsgType == event.MsgNotice && strings.Contains(c.Body, "refused") {
			t.Fatalf("the homeserver refused part of the answer: %s", c.Body)
		}
		body.WriteString(c.Body + "\n")
	}
	for i := 1; ; i++ {
		line := fmt.Sprintf("- item %d: `web-%d`", i, i)
		if !strings.Contains(md, line) {
			break
		}
		if !strings.Contains(body.String(), line) {
			for _, m := range msgs {
				b := m.Content.AsMessage().Body
				t.Logf("event %s: %d bytes, starts %q, ends %q", m.ID, len(b), b[:min(60, len(b))], b[max(0, len(b)-60):])
			}
			t.Fatalf("item %d never arrived", i)
		}
	}
	last := msgs[len(msgs)-1]
	if last.Content.Raw[fieldRunID] != "run-80k" || !strings.Contains(last.Content.AsMessage().Body, feedbackHint) {
		t.Error("the run ID and feedback hint are not on the last event")
	}
}

func TestAnswerOverTheCapIsAttachedOnDendrite(t *testing.T) {
	h := newHarness(t)
	cfg := h.config(t.TempDir())
	cfg.MaxAnswerChars = 3000
	r := h.startJoined(cfg)
	rootID := h.say(h.alice, h.mention("show the log"))
	r.rec.message(t)
	thread := bot.ThreadRef{Platform: "matrix", Channel: string(h.room), Thread: string(rootID)}
	md := strings.Repeat("a line of the answer <with> & markup\n", 2000)
	if _, err := r.Post(ctxT(t, 60*time.Second), thread, bot.Reply{Kind: bot.ReplyAnswer, Text: md}); err != nil {
		t.Fatal(err)
	}
	msgs := h.waitThread(rootID, func(ms []*event.Event) bool { return hasFile(ms, "") })
	var file *event.MessageEventContent
	note := false
	for _, m := range msgs {
		c := m.Content.AsMessage()
		if c.MsgType == event.MsgFile {
			file = c
		}
		note = note || strings.Contains(c.Body, "The whole answer is attached below as a file")
	}
	if !note || file == nil {
		t.Fatalf("cut note %v, file %v", note, file != nil)
	}
	if got := h.download(file); !bytes.Equal(got, []byte(md)) {
		t.Errorf("the attached answer is %d bytes, want the %d of the answer", len(got), len(md))
	}
}

func TestApprovalCardsShowTheWholeChangeOnDendrite(t *testing.T) {
	h := newHarness(t)
	r := h.startJoined(h.config(t.TempDir()))
	rootID := h.say(h.alice, h.mention("clean the logs"))
	r.rec.message(t)
	thread := bot.ThreadRef{Platform: "matrix", Channel: string(h.room), Thread: string(rootID)}
	ctx := ctxT(t, 60*time.Second)

	// A 4,000-character command is on the card whole, tail included.
	var b strings.Builder
	for b.Len() < 4000 {
		b.WriteString("grep -v '<none>' /var/log/app.log | sed 's/&/and/' && ")
	}
	cmd := b.String() + "echo done > /etc/cron.d/vigil-target"
	c := testCard(bot.ApprovalPending)
	c.Command = cmd
	ref, err := r.PostApproval(ctx, thread, c)
	if err != nil {
		t.Fatal(err)
	}
	card := h.event(id.EventID(ref.ID)).Content.AsMessage()
	if !strings.Contains(card.Body, cmd) || !strings.Contains(card.FormattedBody, "echo done &gt; /etc/cron.d/vigil-target") {
		t.Fatalf("the card does not show the whole command")
	}

	// A change far beyond an event is attached whole; the card prints the
	// hash of exactly that text.
	c = testCard(bot.ApprovalPending)
	c.ID, c.Tool, c.Command = "ap-big", "file_edit", "write 1 bytes to /etc/cron.d/x"
	c.Details = []bot.CardDetail{{Label: "new content", Value: strings.Repeat("0 3 * * * root /usr/local/bin/backup <host> & \n", 3000)}}
	sum := sha256.Sum256([]byte(c.FullChange()))
	c.ChangeHash = hex.EncodeToString(sum[:])
	ref, err = r.PostApproval(ctx, thread, c)
	if err != nil {
		t.Fatalf("post a card with a 140 KB change: %v", err)
	}
	card = h.event(id.EventID(ref.ID)).Content.AsMessage()
	if !strings.Contains(card.Body, c.ChangeHash) || !strings.Contains(card.Body, cardFileName(c)) {
		t.Fatalf("the card does not name the attachment and its hash: %s", card.Body)
	}
	var file *event.MessageEventContent
	for _, m := range h.waitThread(rootID, func(ms []*event.Event) bool { return hasFile(ms, cardFileName(c)) }) {
		if mc := m.Content.AsMessage(); mc.MsgType == event.MsgFile && mc.FileName == cardFileName(c) {
			file = mc
		}
	}
	if file == nil {
		t.Fatal("the whole change was not attached")
	}
	got := sha256.Sum256(h.download(file))
	if hex.EncodeToString(got[:]) != c.ChangeHash {
		t.Error("the attached change is not the text whose hash the card prints")
	}
}

// startWithCard starts the adapter in the harness room, opens a thread
// with alice's request and posts the test card in it.
func startWithCard(t *testing.T) (*harness, *running, id.EventID, bot.ThreadRef, bot.MessageRef) {
	t.Helper()
	h := newHarness(t)
	r := h.startJoined(h.config(t.TempDir()))
	rootID := h.say(h.alice, h.mention("restart nginx"))
	r.rec.message(t)
	thread := bot.ThreadRef{Platform: "matrix", Channel: string(h.room), Thread: string(rootID)}
	ref, err := r.PostApproval(ctxT(t, 30*time.Second), thread, testCard(bot.ApprovalPending))
	if err != nil {
		t.Fatal(err)
	}
	return h, r, rootID, thread, ref
}

// The deny-reason prompt is an m.text that mentions the approver (a
// notice would be silenced by the default push rules), and a pending card
// mentions the room's approvers.
func TestPromptsNotifyOnDendrite(t *testing.T) {
	h, _, _, _, ref := startWithCard(t)
	card := h.event(id.EventID(ref.ID)).Content.AsMessage()
	mentioned := map[id.UserID]bool{}
	if card.Mentions != nil {
		for _, u := range card.Mentions.UserIDs {
			mentioned[u] = true
		}
	}
	if !mentioned[h.mod.UserID] || !mentioned[h.owner.UserID] || mentioned[h.alice.UserID] || mentioned[h.botID] {
		t.Errorf("card mentions %v; want the owner and the moderator only", card.Mentions)
	}
	h.react(h.mod, id.EventID(ref.ID), "❌")
	prompt := h.waitBotMessage("the reason prompt", func(e *event.Event) bool {
		return strings.Contains(e.Content.AsMessage().Body, "why deny ap-42")
	})
	pc := prompt.Content.AsMessage()
	if pc.MsgType != event.MsgText || pc.Mentions == nil || len(pc.Mentions.UserIDs) != 1 || pc.Mentions.UserIDs[0] != h.mod.UserID ||
		!strings.Contains(pc.Body, string(h.mod.UserID)) {
		t.Errorf("reason prompt: msgtype %s, mentions %v, body %q", pc.MsgType, pc.Mentions, pc.Body)
	}
}

// A client without thread support on a server that advertises only
// Matrix v1.2 (Dendrite) replies with the unstable io.element.thread
// relation; that reply is in the thread, and a deny reason sent that way
// completes the denial.
func TestThreadlessClientRepliesOnDendrite(t *testing.T) {
	h, r, rootID, thread, ref := startWithCard(t)
	unstable := func(body string) *event.MessageEventContent {
		return &event.MessageEventContent{MsgType: event.MsgText, Body: body, RelatesTo: &event.RelatesTo{
			Type: "io.element.thread", EventID: rootID, IsFallingBack: true,
			InReplyTo: &event.InReplyTo{EventID: id.EventID(ref.ID)},
		}}
	}
	evtID := h.say(h.alice, unstable("and @web-2?"))
	if m := r.rec.message(t); m.EventID != string(evtID) || m.Thread != thread {
		t.Fatalf("thread-less reply delivered as %+v, want in thread %s", m, rootID)
	}
	h.react(h.mod, id.EventID(ref.ID), "❌")
	h.waitBotMessage("the reason prompt", func(e *event.Event) bool {
		return strings.Contains(e.Content.AsMessage().Body, "why deny ap-42")
	})
	reasonID := h.say(h.mod, unstable("change freeze"))
	d := r.rec.decision(t)
	if d.Approve || d.Reason != "change freeze" || d.EventID != string(reasonID) || d.Thread != thread {
		t.Fatalf("deny by a thread-less reply = %+v", d)
	}
	// A plain reply (m.in_reply_to only, no thread relation) to the card
	// is in the card's thread too.
	plainID := h.say(h.alice, &event.MessageEventContent{MsgType: event.MsgText, Body: "thanks",
		RelatesTo: &event.RelatesTo{InReplyTo: &event.InReplyTo{EventID: id.EventID(ref.ID)}}})
	if m := r.rec.message(t); m.EventID != string(plainID) || m.Thread != thread {
		t.Fatalf("reply to the card delivered as %+v, want in thread %s", m, rootID)
	}
}

// Moderators promoted before the bot was invited hold the approver role
// from the bot's first moment in the room, also after a restart.
func TestPowerLevelsFromBeforeTheJoinOnDendrite(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t, 60*time.Second)
	resp, err := h.owner.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "public_chat", Name: "promoted-first"})
	if err != nil {
		t.Fatal(err)
	}
	room := resp.RoomID
	if _, err := h.mod.JoinRoomByID(ctx, room); err != nil {
		t.Fatal(err)
	}
	pl := &event.PowerLevelsEventContent{}
	if err := h.owner.StateEvent(ctx, room, event.StatePowerLevels, "", pl); err != nil {
		t.Fatal(err)
	}
	pl.SetUserLevel(h.mod.UserID, 50)
	if _, err := h.owner.SendStateEvent(ctx, room, event.StatePowerLevels, "", pl); err != nil {
		t.Fatal(err)
	}
	h.room = room
	h.invite(room)
	dir := t.TempDir()
	r := h.startJoined(h.config(dir))
	thread := bot.ThreadRef{Platform: "matrix", Channel: string(room), Thread: "$x"}
	facts, err := r.UserFacts(ctx, thread, string(h.mod.UserID))
	if err != nil || facts.PowerLevel == nil || *facts.PowerLevel != 50 || !facts.IsApprover {
		t.Fatalf("moderator promoted before the join: facts %+v, %v", facts, err)
	}
	r.stop()
	r2 := h.start(h.config(dir))
	facts, err = r2.UserFacts(ctx, thread, string(h.mod.UserID))
	if err != nil || !facts.IsApprover {
		t.Fatalf("after a restart: facts %+v, %v", facts, err)
	}
}

// A refused event is never silent: the thread gets a notice with an error
// ID. A proxy in front of Dendrite refuses the first send as a
// homeserver does for an event over its size limit.
func TestRefusedEventIsReportedOnDendrite(t *testing.T) {
	h := newHarness(t)
	p := newRefusingProxy(t, h.hs.URL())
	cfg := h.config(t.TempDir())
	cfg.Homeserver = p.url
	r := h.startJoined(cfg)
	rootID := h.say(h.alice, h.mention("hello"))
	r.rec.message(t)
	thread := bot.ThreadRef{Platform: "matrix", Channel: string(h.room), Thread: string(rootID)}
	p.refuseNext()
	if _, err := r.Post(ctxT(t, 30*time.Second), thread, bot.Reply{Kind: bot.ReplyAnswer, Text: "the answer"}); err == nil {
		t.Fatal("Post reported success for a refused event")
	}
	n := h.waitBotMessage("the refusal notice", func(e *event.Event) bool {
		return strings.Contains(e.Content.AsMessage().Body, "The homeserver refused the answer (M_TOO_LARGE)")
	})
	if !strings.Contains(n.Content.AsMessage().Body, "error ID") {
		t.Errorf("notice without an error ID: %q", n.Content.AsMessage().Body)
	}
}

// refusingProxy forwards to the homeserver and answers the next room
// send it is told to refuse with 413 M_TOO_LARGE.
type refusingProxy struct {
	url    string
	refuse chan struct{}
}

func newRefusingProxy(t *testing.T, target string) *refusingProxy {
	t.Helper()
	p := &refusingProxy{refuse: make(chan struct{}, 1)}
	srv := newProxyServer(t, target, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPut || !strings.Contains(r.URL.Path, "/send/m.room.message/") {
			return false
		}
		select {
		case <-p.refuse:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			_, _ = w.Write([]byte(`{"errcode":"M_TOO_LARGE","error":"event too large"}`))
			return true
		default:
			return false
		}
	})
	p.url = srv
	return p
}

func (p *refusingProxy) refuseNext() { p.refuse <- struct{}{} }

// newProxyServer serves a reverse proxy to target on loopback; intercept
// may answer a request itself (true) instead of forwarding it.
func newProxyServer(t *testing.T, target string, intercept func(http.ResponseWriter, *http.Request) bool) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if intercept(w, r) {
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
