package matrix

import (
	"context"
	"testing"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// Exports for the end-to-end tests in package matrix_test, which import
// internal/testenv/testkit (and so, through internal/app, this package) and must
// therefore live outside it.

// E2EHarness is the Dendrite test harness: a homeserver, the bot account
// and a room with owner (power 100), mod (50) and alice (0).
type E2EHarness struct{ h *harness }

func NewE2EHarness(t *testing.T) E2EHarness { return E2EHarness{newHarness(t)} }

func (e E2EHarness) Room() id.RoomID            { return e.h.room }
func (e E2EHarness) Alice() *mautrix.Client     { return e.h.alice }
func (e E2EHarness) Mod() *mautrix.Client       { return e.h.mod }
func (e E2EHarness) Config(state string) Config { return e.h.config(state) }
func (e E2EHarness) WaitJoined()                { e.h.waitMembership(e.h.room, event.MembershipJoin) }
func (e E2EHarness) Mention(text string) *event.MessageEventContent {
	return e.h.mention(text)
}
func (e E2EHarness) Say(c *mautrix.Client, content *event.MessageEventContent) id.EventID {
	return e.h.say(c, content)
}
func (e E2EHarness) InThread(c *event.MessageEventContent, root id.EventID) *event.MessageEventContent {
	return inThread(c, root)
}
func (e E2EHarness) React(c *mautrix.Client, target id.EventID, key string) id.EventID {
	return e.h.react(c, target, key)
}
func (e E2EHarness) BotMessages() []*event.Event { return e.h.botMessages() }
func (e E2EHarness) WaitThread(root id.EventID, ok func([]*event.Event) bool) []*event.Event {
	return e.h.waitThread(root, ok)
}
func (e E2EHarness) WaitBotMessage(what string, ok func(*event.Event) bool) *event.Event {
	return e.h.waitBotMessage(what, ok)
}

const FieldApprovalID, FieldApprovalStatus, FieldRunID = fieldApprovalID, fieldApprovalStatus, fieldRunID

// NextBatch is the sync token the adapter saved last: where its next sync
// starts.
func NextBatch(ctx context.Context, a *Adapter) string {
	tok, _ := a.store.LoadNextBatch(ctx, a.client.UserID)
	return tok
}

// ReplaySync syncs again from the token since and processes the response
// the way the adapter's sync loop does: what a sync retried from an old
// token (a failed ProcessResponse, a next_batch never saved) delivers a
// second time. It returns the IDs of the timeline events it handed to the
// adapter.
func ReplaySync(ctx context.Context, a *Adapter, since string) ([]id.EventID, error) {
	filter, _ := a.store.LoadFilterID(ctx, a.client.UserID)
	res, err := a.client.SyncRequest(ctx, 0, since, filter, false, event.PresenceOffline)
	if err != nil {
		return nil, err
	}
	var ids []id.EventID
	for _, room := range res.Rooms.Join {
		for _, e := range room.Timeline.Events {
			ids = append(ids, e.ID)
		}
	}
	return ids, a.syncer.ProcessResponse(ctx, res, since)
}
