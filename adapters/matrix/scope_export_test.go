package matrix

import (
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// Exports for the per-channel scope tests (scope_e2e_test.go), which need
// a second room.

// NewRoom creates another room like the first (owner 100, mod 50, alice
// 0), with the bot invited.
func (e E2EHarness) NewRoom() id.RoomID { return e.h.createRoom(true) }

// WaitJoinedIn waits until the bot is in room.
func (e E2EHarness) WaitJoinedIn(room id.RoomID) { e.h.waitMembership(room, event.MembershipJoin) }

// SayIn sends content to room as c.
func (e E2EHarness) SayIn(room id.RoomID, c *mautrix.Client, content *event.MessageEventContent) id.EventID {
	e.h.t.Helper()
	if content.MsgType == "" {
		content.MsgType = event.MsgText
	}
	resp, err := c.SendMessageEvent(ctxT(e.h.t, 10*time.Second), room, event.EventMessage, content)
	if err != nil {
		e.h.t.Fatalf("%s sends: %v", c.UserID, err)
	}
	return resp.EventID
}

// WaitBotMessageIn waits until the bot has posted a message in room
// matching ok.
func (e E2EHarness) WaitBotMessageIn(room id.RoomID, what string, ok func(*event.Event) bool) *event.Event {
	h := e.h
	h.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := h.owner.Messages(ctxT(h.t, 10*time.Second), room, "", "", mautrix.DirectionBackward, nil, 100)
		if err != nil {
			h.t.Fatalf("messages: %v", err)
		}
		for i := len(resp.Chunk) - 1; i >= 0; i-- {
			evt := resp.Chunk[i]
			if evt.Sender == h.botID && evt.Type == event.EventMessage {
				_ = evt.Content.ParseRaw(evt.Type)
				if ok(evt) {
					return evt
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.t.Fatalf("the bot never posted %s in %s", what, room)
	return nil
}
