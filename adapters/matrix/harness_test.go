package matrix

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/confkey"
	"github.com/vigilops/vigil/internal/testenv/dendrite"
)

// This file is the test harness for the adapter against a real Dendrite:
// a homeserver, a bot account, three people (owner at power 100, mod at 50,
// alice at 0) in one room, and a recording bot.Handler.

const botPassword = "vigil-bot-password"

type harness struct {
	t     *testing.T
	hs    *dendrite.Server
	botID id.UserID
	token string // the bot's access token
	owner *mautrix.Client
	mod   *mautrix.Client
	alice *mautrix.Client
	room  id.RoomID
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func newHarness(t *testing.T) *harness {
	return newHarnessWith(t, dendrite.Options{})
}

func newHarnessWith(t *testing.T, opts dendrite.Options) *harness {
	t.Helper()
	hs := dendrite.StartWith(t, opts)
	h := &harness{t: t, hs: hs}
	botID, token := hs.Register(t, "vigil", botPassword, false)
	h.botID, h.token = id.UserID(botID), token
	h.owner = h.user("owner")
	h.mod = h.user("mod")
	h.alice = h.user("alice")
	h.room = h.createRoom(true)
	return h
}

// user registers a person and returns their client.
func (h *harness) user(localpart string) *mautrix.Client {
	h.t.Helper()
	userID, token := h.hs.Register(h.t, localpart, localpart+"-password", false)
	c, err := mautrix.NewClient(h.hs.URL(), id.UserID(userID), token)
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// createRoom makes a public room owned by owner with mod at power 50 and
// alice and mod joined; inviteBot also invites the bot.
func (h *harness) createRoom(inviteBot bool) id.RoomID {
	h.t.Helper()
	ctx := ctxT(h.t, 30*time.Second)
	resp, err := h.owner.CreateRoom(ctx, &mautrix.ReqCreateRoom{
		Preset: "public_chat",
		Name:   "ops",
		PowerLevelOverride: &event.PowerLevelsEventContent{
			Users: map[id.UserID]int{h.owner.UserID: 100, h.mod.UserID: 50},
		},
	})
	if err != nil {
		h.t.Fatalf("create room: %v", err)
	}
	for _, c := range []*mautrix.Client{h.mod, h.alice} {
		if _, err := c.JoinRoomByID(ctx, resp.RoomID); err != nil {
			h.t.Fatalf("%s joins: %v", c.UserID, err)
		}
	}
	if inviteBot {
		h.invite(resp.RoomID)
	}
	return resp.RoomID
}

func (h *harness) invite(room id.RoomID) {
	h.t.Helper()
	if _, err := h.owner.InviteUser(ctxT(h.t, 10*time.Second), room, &mautrix.ReqInviteUser{UserID: h.botID}); err != nil {
		h.t.Fatalf("invite bot: %v", err)
	}
}

// membership is the bot's membership in room as the owner sees it.
func (h *harness) membership(room id.RoomID) event.Membership {
	var mc event.MemberEventContent
	err := h.owner.StateEvent(ctxT(h.t, 10*time.Second), room, event.StateMember, string(h.botID), &mc)
	if err != nil {
		return ""
	}
	return mc.Membership
}

func (h *harness) waitMembership(room id.RoomID, want event.Membership) {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if h.membership(room) == want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.t.Fatalf("bot membership in %s is %q, want %q", room, h.membership(room), want)
}

func (h *harness) config(stateDir string) Config {
	return Config{
		Homeserver:  h.hs.URL(),
		UserID:      string(h.botID),
		AccessToken: confkey.Secret(h.token),
		Rooms:       []string{string(h.room)},
		StateDir:    stateDir,
		Logger:      testLogger(h.t),
	}
}

// running is an adapter started on its own goroutine.
type running struct {
	*Adapter
	rec  *recorder
	stop func()
}

// start runs an adapter until stop (or the end of the test) and waits
// until it has processed its first sync.
func (h *harness) start(cfg Config) *running {
	h.t.Helper()
	a, err := New(cfg)
	if err != nil {
		h.t.Fatalf("New: %v", err)
	}
	rec := newRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Start(ctx, rec) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					h.t.Errorf("Start returned %v", err)
				}
			case <-time.After(40 * time.Second):
				h.t.Error("Start did not return after cancel")
			}
		})
	}
	h.t.Cleanup(stop)
	select {
	case <-a.Ready():
	case err := <-done:
		h.t.Fatalf("Start ended before ready: %v", err)
	case <-time.After(30 * time.Second):
		h.t.Fatal("adapter not ready after 30s")
	}
	return &running{Adapter: a, rec: rec, stop: stop}
}

// startJoined starts an adapter and waits until the bot is in the room.
func (h *harness) startJoined(cfg Config) *running {
	h.t.Helper()
	r := h.start(cfg)
	h.waitMembership(h.room, event.MembershipJoin)
	return r
}

func (h *harness) say(c *mautrix.Client, content *event.MessageEventContent) id.EventID {
	h.t.Helper()
	if content.MsgType == "" {
		content.MsgType = event.MsgText
	}
	resp, err := c.SendMessageEvent(ctxT(h.t, 10*time.Second), h.room, event.EventMessage, content)
	if err != nil {
		h.t.Fatalf("%s sends: %v", c.UserID, err)
	}
	return resp.EventID
}

// mention is a message that mentions the bot the way Element does.
func (h *harness) mention(text string) *event.MessageEventContent {
	return &event.MessageEventContent{
		MsgType:  event.MsgText,
		Body:     "vigil: " + text,
		Mentions: &event.Mentions{UserIDs: []id.UserID{h.botID}},
	}
}

func inThread(c *event.MessageEventContent, root id.EventID) *event.MessageEventContent {
	c.RelatesTo = (&event.RelatesTo{}).SetThread(root, root)
	return c
}

func (h *harness) react(c *mautrix.Client, target id.EventID, key string) id.EventID {
	h.t.Helper()
	resp, err := c.SendReaction(ctxT(h.t, 10*time.Second), h.room, target, key)
	if err != nil {
		h.t.Fatalf("%s reacts: %v", c.UserID, err)
	}
	return resp.EventID
}

// event fetches one event as the owner sees it, content parsed. Dendrite
// may answer 404 for a moment right after the send, so it retries briefly.
func (h *harness) event(evtID id.EventID) *event.Event {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		evt, err := h.owner.GetEvent(ctxT(h.t, 10*time.Second), h.room, evtID)
		if err == nil {
			_ = evt.Content.ParseRaw(evt.Type)
			return evt
		}
		if !errors.Is(err, mautrix.MNotFound) || time.Now().After(deadline) {
			h.t.Fatalf("get %s: %v", evtID, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// botMessages returns the bot's recent m.room.message events, oldest first.
func (h *harness) botMessages() []*event.Event {
	h.t.Helper()
	resp, err := h.owner.Messages(ctxT(h.t, 10*time.Second), h.room, "", "", mautrix.DirectionBackward, nil, 100)
	if err != nil {
		h.t.Fatalf("messages: %v", err)
	}
	var out []*event.Event
	for i := len(resp.Chunk) - 1; i >= 0; i-- {
		evt := resp.Chunk[i]
		if evt.Sender == h.botID && evt.Type == event.EventMessage {
			_ = evt.Content.ParseRaw(evt.Type)
			out = append(out, evt)
		}
	}
	return out
}

// waitBotMessage waits until the bot has posted a message matching ok.
func (h *harness) waitBotMessage(what string, ok func(*event.Event) bool) *event.Event {
	h.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for _, evt := range h.botMessages() {
			if ok(evt) {
				return evt
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.t.Fatalf("the bot never posted %s", what)
	return nil
}

// recorder is a bot.Handler that records what the adapter delivers.
type recorder struct {
	msgs chan bot.Message
	decs chan bot.Decision
}

func newRecorder() *recorder {
	return &recorder{msgs: make(chan bot.Message, 100), decs: make(chan bot.Decision, 100)}
}

func (r *recorder) HandleMessage(_ context.Context, m bot.Message)   { r.msgs <- m }
func (r *recorder) HandleDecision(_ context.Context, d bot.Decision) { r.decs <- d }

func (r *recorder) message(t *testing.T) bot.Message {
	t.Helper()
	select {
	case m := <-r.msgs:
		return m
	case d := <-r.decs:
		t.Fatalf("got decision %+v, want a message", d)
	case <-time.After(15 * time.Second):
		t.Fatal("no message delivered within 15s")
	}
	return bot.Message{}
}

func (r *recorder) decision(t *testing.T) bot.Decision {
	t.Helper()
	select {
	case d := <-r.decs:
		return d
	case m := <-r.msgs:
		t.Fatalf("got message %q, want a decision", m.Text)
	case <-time.After(15 * time.Second):
		t.Fatal("no decision delivered within 15s")
	}
	return bot.Decision{}
}

// quiet fails if anything was delivered and not yet consumed.
func (r *recorder) quiet(t *testing.T) {
	t.Helper()
	select {
	case m := <-r.msgs:
		t.Fatalf("unexpected message %+v", m)
	case d := <-r.decs:
		t.Fatalf("unexpected decision %+v", d)
	default:
	}
}

// barrier sends an addressed message from c and waits for it: everything
// the room saw before has then been processed by the adapter.
func (h *harness) barrier(r *running, c *mautrix.Client) {
	h.t.Helper()
	evtID := h.say(c, h.mention("barrier"))
	for {
		m := r.rec.message(h.t)
		if m.EventID == string(evtID) {
			return
		}
		h.t.Fatalf("delivered %q (%s) before the barrier", m.Text, m.EventID)
	}
}

// testLogger sends adapter logs to the test log while the test runs.
func testLogger(t *testing.T) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() { w.done.Store(true) })
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	t    *testing.T
	done atomic.Bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	if !w.done.Load() {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}
