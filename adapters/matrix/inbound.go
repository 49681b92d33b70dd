package matrix

import (
	"context"
	"fmt"
	"strings"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/vigilops/vigil/bot"
)

// syncer is mautrix's DefaultSyncer with a hook after each processed
// response (readiness) and a shorter back-off on failed syncs.
type syncer struct {
	*mautrix.DefaultSyncer
	a *Adapter
}

func newSyncer(a *Adapter) *syncer {
	s := &syncer{DefaultSyncer: mautrix.NewDefaultSyncer(), a: a}
	s.FilterJSON = syncFilter(a.cfg.E2EE)
	s.OnEventType(event.EventMessage, a.wrap("message", a.onMessage))
	s.OnEventType(event.EventReaction, a.wrap("reaction", a.onReaction))
	s.OnEventType(event.StateMember, a.wrap("member", a.onMember))
	s.OnEventType(event.StatePowerLevels, a.wrap("power levels", a.onPowerLevels))
	return s
}

func (s *syncer) ProcessResponse(ctx context.Context, res *mautrix.RespSync, since string) error {
	err := s.DefaultSyncer.ProcessResponse(ctx, res, since)
	s.a.readyOnce.Do(func() { close(s.a.ready) })
	return err
}

func (s *syncer) OnFailedSync(res *mautrix.RespSync, err error) (time.Duration, error) {
	if _, err := s.DefaultSyncer.OnFailedSync(res, err); err != nil {
		return 0, err
	}
	if wait, limited := rateLimitDelay(err); limited {
		return min(max(wait, 100*time.Millisecond), maxRateLimitWait), nil
	}
	s.a.log.Warn("matrix: sync failed, retrying", "err", err)
	return 3 * time.Second, nil
}

// syncFilter asks only for what the adapter uses: messages, reactions,
// membership and power levels (plus encrypted events and the encryption
// state with E2EE). Presence, ephemeral events and account data are off.
func syncFilter(e2ee bool) *mautrix.Filter {
	timeline := []event.Type{event.EventMessage, event.EventReaction, event.StateMember, event.StatePowerLevels}
	state := []event.Type{event.StateMember, event.StatePowerLevels, event.StateCreate}
	if e2ee {
		// The crypto machine also tracks encryption settings and history
		// visibility to decide who gets room keys.
		timeline = append(timeline, event.EventEncrypted, event.StateEncryption, event.StateHistoryVisibility)
		state = append(state, event.StateEncryption, event.StateHistoryVisibility)
	}
	none := &mautrix.FilterPart{NotTypes: []event.Type{{Type: "*"}}}
	return &mautrix.Filter{
		AccountData: none,
		Presence:    none,
		Room: &mautrix.RoomFilter{
			AccountData: none,
			Ephemeral:   none,
			State:       &mautrix.FilterPart{Types: state},
			Timeline:    &mautrix.FilterPart{Types: timeline, Limit: 50},
		},
	}
}

// wrap turns a handler into a mautrix event handler that recovers panics.
func (a *Adapter) wrap(what string, fn func(context.Context, *event.Event)) mautrix.EventHandler {
	return func(ctx context.Context, evt *event.Event) {
		a.safely(what, evt, func() { fn(ctx, evt) })
	}
}

func (a *Adapter) self() identity {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.me
}

func (a *Adapter) roomAllowed(room id.RoomID) bool {
	return len(a.allowed) == 0 || a.allowed[room]
}

// stale reports events from before start-up, or from before the bot
// joined the room: history is never replayed.
func (a *Adapter) stale(evt *event.Event) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	ts := time.UnixMilli(evt.Timestamp)
	if ts.Before(a.startedAt) {
		return true
	}
	if j, ok := a.joinedAt[evt.RoomID]; ok && ts.Before(j) {
		return true
	}
	return false
}

// accept filters events every inbound handler ignores: the bot's own, rooms
// that are not allowed, and history.
func (a *Adapter) accept(evt *event.Event) bool {
	if evt.Sender == a.self().ID {
		return false
	}
	if !a.roomAllowed(evt.RoomID) {
		a.log.Debug("matrix: ignoring event in a room not in matrix.rooms", "room", evt.RoomID, "event", evt.ID)
		return false
	}
	if a.stale(evt) {
		a.log.Debug("matrix: ignoring event from before start-up or join", "room", evt.RoomID, "event", evt.ID,
			"ts", time.UnixMilli(evt.Timestamp))
		return false
	}
	return true
}

func (a *Adapter) handlerFor() bot.Handler {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.handler
}

// onMessage turns a room message into a bot.Message, an approval decision
// or a denial reason.
func (a *Adapter) onMessage(ctx context.Context, evt *event.Event) {
	if !a.accept(evt) {
		return
	}
	content := evt.Content.AsMessage()
	if content.MsgType != event.MsgText && content.MsgType != event.MsgEmote {
		return // notices are other bots talking; media is not for us
	}
	if content.RelatesTo.GetReplaceID() != "" {
		return // an edit of an earlier message: do not run twice
	}
	content.RemoveReplyFallback()
	room := evt.RoomID
	me := a.self()
	text := stripBot(me, content.Body)
	ectx, cancel := context.WithTimeout(ctx, eventTimeout)
	defer cancel()
	root := a.threadRoot(ectx, room, content.RelatesTo)

	if root != "" {
		a.last.put(threadKey{room, root}, evt.ID)
	}
	thread := bot.ThreadRef{Platform: Platform, Channel: string(room), Thread: string(root)}
	if root == "" {
		thread.Thread = string(evt.ID)
	}

	switch cmd := parseCommand(text); cmd.Kind {
	case cmdApprove, cmdDeny:
		if cmd.Kind == cmdDeny && cmd.Reason == "" {
			// "!deny <id>" alone: ask for the reason like a ❌ does.
			a.askReason(ectx, room, id.EventID(thread.Thread), evt.Sender, cmd.ApprovalID)
			return
		}
		a.forgetReason(room, id.EventID(thread.Thread), evt.Sender)
		a.decide(ctx, bot.Decision{
			EventID: string(evt.ID), ApprovalID: cmd.ApprovalID, Approve: cmd.Kind == cmdApprove,
			Reason: cmd.Reason, User: string(evt.Sender), UserName: a.displayName(ectx, room, evt.Sender),
			Thread: thread, At: time.UnixMilli(evt.Timestamp),
		})
		return
	case cmdUsage:
		a.reply(ectx, room, id.EventID(thread.Thread), usageNotice())
		return
	}

	if root != "" {
		if p, ok := a.takeReason(room, root, evt.Sender); ok {
			reason := strings.TrimSpace(text)
			a.decide(ctx, bot.Decision{
				EventID: string(evt.ID), ApprovalID: p.ApprovalID, Approve: false, Reason: reason,
				User: string(evt.Sender), UserName: a.displayName(ectx, room, evt.Sender),
				Thread: thread, At: time.UnixMilli(evt.Timestamp),
			})
			return
		}
	}

	addressed := addressesBot(me, content)
	if !addressed && root != "" {
		addressed = a.inThread(ectx, room, root)
	}
	if !addressed {
		addressed = a.isDirect(ectx, room)
	}
	if !addressed {
		return
	}
	if root == "" {
		root = evt.ID // the message starts the conversation's thread
	}
	a.noteThread(room, root, evt.ID)
	h := a.handlerFor()
	h.HandleMessage(ctx, bot.Message{
		EventID:   string(evt.ID),
		Thread:    bot.ThreadRef{Platform: Platform, Channel: string(room), Thread: string(root)},
		ID:        string(evt.ID),
		User:      string(evt.Sender),
		UserName:  a.displayName(ectx, room, evt.Sender),
		Text:      text,
		Mentions:  resourceMentions(me, text),
		Addressed: true,
		At:        time.UnixMilli(evt.Timestamp),
	})
}

// unstableThread is the relation type clients use for threads before
// they negotiate Matrix v1.4 (matrix-js-sdk against a server that
// advertises only v1.2, such as Dendrite).
const unstableThread = event.RelationType("io.element.thread")

// threadRoot is the thread a message belongs to: its m.thread (or
// io.element.thread) root; for a plain reply (m.in_reply_to only), the
// thread of the message it answers, or that message itself when it is a
// thread's root. "" for a message outside any thread.
func (a *Adapter) threadRoot(ctx context.Context, room id.RoomID, rel *event.RelatesTo) id.EventID {
	if rel == nil {
		return ""
	}
	if rel.Type == event.RelThread || rel.Type == unstableThread {
		return rel.EventID
	}
	target := rel.GetReplyTo()
	if target == "" || rel.Type != "" {
		return ""
	}
	if c, ok := a.cards.get(target); ok && c.Root != "" {
		return c.Root
	}
	if v, ok := a.threads.get(threadKey{room, target}); ok && v {
		return target
	}
	evt, err := a.fetchEvent(ctx, room, target)
	if err != nil {
		a.log.Debug("matrix: fetch replied-to event", "room", room, "event", target, "err", err)
		return ""
	}
	if evt.Type != event.EventMessage {
		return ""
	}
	if trel := evt.Content.AsMessage().RelatesTo; trel != nil && (trel.Type == event.RelThread || trel.Type == unstableThread) {
		return trel.EventID
	}
	if v, ok := a.threads.get(threadKey{room, target}); ok && v {
		return target
	}
	return ""
}

// onReaction maps ✅/❌ on an approval card to a decision, and 👍/👎 on
// an answer to feedback. A ❌ first asks for the reason; the user's next
// message in the thread completes it.
func (a *Adapter) onReaction(ctx context.Context, evt *event.Event) {
	if !a.accept(evt) {
		return
	}
	rel := evt.Content.AsReaction().RelatesTo
	key := normaliseReaction(rel.Key)
	rating, isRating := ratingOf(key)
	if rel.Type != event.RelAnnotation || (key != reactApprove && key != reactDeny && !isRating) {
		return
	}
	ectx, cancel := context.WithTimeout(ctx, eventTimeout)
	defer cancel()
	card, ok := a.card(ectx, evt.RoomID, rel.EventID)
	if !ok {
		return // a reaction on something that is not the bot's card or answer
	}
	thread := bot.ThreadRef{Platform: Platform, Channel: string(evt.RoomID), Thread: string(card.Root)}
	if card.Root == "" {
		thread.Thread = string(rel.EventID)
	}
	if isRating {
		fh, ok := a.handlerFor().(bot.FeedbackHandler)
		if !ok || card.RunID == "" {
			return
		}
		fh.HandleFeedback(ctx, bot.Feedback{
			EventID: string(evt.ID), Thread: thread, RunID: card.RunID, Rating: rating,
			User: string(evt.Sender), UserName: a.displayName(ectx, evt.RoomID, evt.Sender), At: time.UnixMilli(evt.Timestamp),
		})
		return
	}
	if card.ApprovalID == "" {
		return
	}
	if key == reactDeny {
		a.askReason(ectx, evt.RoomID, id.EventID(thread.Thread), evt.Sender, card.ApprovalID)
		return
	}
	a.decide(ctx, bot.Decision{
		EventID: string(evt.ID), ApprovalID: card.ApprovalID, Approve: true,
		User: string(evt.Sender), UserName: a.displayName(ectx, evt.RoomID, evt.Sender),
		Thread: thread, At: time.UnixMilli(evt.Timestamp),
	})
}

func (a *Adapter) decide(ctx context.Context, d bot.Decision) {
	a.log.Info("matrix: approval decision", "approval", d.ApprovalID, "approve", d.Approve,
		"user", d.User, "thread", d.Thread.Thread)
	a.handlerFor().HandleDecision(ctx, d)
}

// askReason remembers that user owes a reason for denying approvalID in the
// thread and asks for it.
func (a *Adapter) askReason(ctx context.Context, room id.RoomID, root id.EventID, user id.UserID, approvalID string) {
	now := time.Now()
	a.mu.Lock()
	for k, p := range a.reasons {
		if now.After(p.Expires) {
			delete(a.reasons, k)
		}
	}
	a.reasons[reasonKey{room, root, user}] = pendingReason{ApprovalID: approvalID, Expires: now.Add(reasonTTL)}
	a.mu.Unlock()
	a.reply(ctx, room, root, reasonPrompt(user, approvalID))
}

func (a *Adapter) takeReason(room id.RoomID, root id.EventID, user id.UserID) (pendingReason, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := reasonKey{room, root, user}
	p, ok := a.reasons[k]
	if !ok {
		return pendingReason{}, false
	}
	delete(a.reasons, k)
	return p, time.Now().Before(p.Expires)
}

func (a *Adapter) forgetReason(room id.RoomID, root id.EventID, user id.UserID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.reasons, reasonKey{room, root, user})
}

// reply posts the adapter's own short message in a thread.
func (a *Adapter) reply(ctx context.Context, room id.RoomID, root id.EventID, c *event.MessageEventContent) {
	c.RelatesTo = threadRelation(root, a.lastIn(room, root))
	evtID, err := a.send(ctx, room, event.EventMessage, c)
	if err != nil {
		a.log.Warn("matrix: reply", "room", room, "thread", root, "err", err)
		return
	}
	a.noteThread(room, root, evtID)
}

// card maps an event to the approval card or rateable answer it is, from
// the cache or by fetching the event and reading its org.vigil.approval_id
// or org.vigil.run_id (restart-proof).
func (a *Adapter) card(ctx context.Context, room id.RoomID, evtID id.EventID) (cardRef, bool) {
	if c, ok := a.cards.get(evtID); ok {
		return c, c.ApprovalID != "" || c.RunID != ""
	}
	evt, err := a.fetchEvent(ctx, room, evtID)
	if err != nil {
		a.log.Warn("matrix: fetch reacted-to event", "room", room, "event", evtID, "err", err)
		return cardRef{}, false
	}
	var c cardRef
	if evt.Sender == a.self().ID {
		c.ApprovalID, _ = evt.Content.Raw[fieldApprovalID].(string)
		c.RunID, _ = evt.Content.Raw[fieldRunID].(string)
		c.Root = evt.Content.AsMessage().RelatesTo.GetThreadParent()
	}
	a.cards.put(evtID, c)
	return c, c.ApprovalID != "" || c.RunID != ""
}

// inThread reports whether the bot takes part in the thread: it posted
// there, or the root addressed it or is its own. Unknown threads (after a
// restart) are checked by fetching the root.
func (a *Adapter) inThread(ctx context.Context, room id.RoomID, root id.EventID) bool {
	k := threadKey{room, root}
	if v, ok := a.threads.get(k); ok {
		return v
	}
	evt, err := a.fetchEvent(ctx, room, root)
	if err != nil {
		a.log.Warn("matrix: fetch thread root", "room", room, "event", root, "err", err)
		return false
	}
	me := a.self()
	part := evt.Sender == me.ID || (evt.Type == event.EventMessage && addressesBot(me, evt.Content.AsMessage()))
	a.threads.put(k, part)
	return part
}

// fetchEvent gets one event with parsed (and, with E2EE, decrypted) content.
func (a *Adapter) fetchEvent(ctx context.Context, room id.RoomID, evtID id.EventID) (*event.Event, error) {
	var evt *event.Event
	err := withRateLimit(ctx, a.log, "get event", func(ctx context.Context) (err error) {
		evt, err = a.client.GetEvent(ctx, room, evtID)
		return err
	})
	if err != nil {
		return nil, err
	}
	evt.RoomID = room
	a.mu.Lock()
	ce := a.crypto
	a.mu.Unlock()
	if evt.Type == event.EventEncrypted && ce != nil {
		if err := evt.Content.ParseRaw(evt.Type); err != nil {
			return nil, fmt.Errorf("parse encrypted event: %w", err)
		}
		dec, err := ce.Decrypt(ctx, evt)
		if err != nil {
			return nil, fmt.Errorf("decrypt: %w", err)
		}
		evt = dec
	}
	if evt.Content.Parsed == nil {
		_ = evt.Content.ParseRaw(evt.Type) // unknown types stay unparsed
	}
	return evt, nil
}

// isDirect treats a room with exactly the bot and one person as a DM,
// where every message is addressed to the bot.
func (a *Adapter) isDirect(ctx context.Context, room id.RoomID) bool {
	m := a.roomMembers(ctx, room)
	return len(m) == 2
}

func (a *Adapter) displayName(ctx context.Context, room id.RoomID, user id.UserID) string {
	if name := a.roomMembers(ctx, room)[user]; name != "" {
		return name
	}
	return user.Localpart()
}

// roomMembers returns the joined members (user → display name), fetched
// once per room and then kept current from membership events.
func (a *Adapter) roomMembers(ctx context.Context, room id.RoomID) map[id.UserID]string {
	a.mu.Lock()
	m, ok := a.members[room]
	a.mu.Unlock()
	if ok {
		return m
	}
	var resp *mautrix.RespJoinedMembers
	err := withRateLimit(ctx, a.log, "joined members", func(ctx context.Context) (err error) {
		resp, err = a.client.JoinedMembers(ctx, room)
		return err
	})
	if err != nil {
		a.log.Warn("matrix: joined members", "room", room, "err", err)
		return nil
	}
	m = make(map[id.UserID]string, len(resp.Joined))
	for u, info := range resp.Joined {
		m[u] = info.DisplayName
	}
	a.mu.Lock()
	if cur, ok := a.members[room]; ok {
		m = cur
	} else {
		a.members[room] = m
	}
	a.mu.Unlock()
	return m
}

// onMember joins allowed rooms on invite, declines the rest, and keeps the
// member cache current.
func (a *Adapter) onMember(ctx context.Context, evt *event.Event) {
	me := a.self()
	mc := evt.Content.AsMember()
	target := id.UserID(evt.GetStateKey())
	if target == me.ID && mc.Membership == event.MembershipInvite {
		// Only a pending invite (the sync's invite section) is acted on; the
		// same member event shows up again in the joined room's timeline.
		if evt.Mautrix.EventSource&event.SourceInvite != 0 {
			a.onInvite(ctx, evt.RoomID, evt.Sender)
		}
		return
	}
	if target == me.ID && mc.Membership == event.MembershipJoin && evt.Mautrix.EventSource&event.SourceInvite == 0 {
		// Joined: the room's power levels, however old, are read from its
		// state now rather than pieced together from the sync.
		lctx, cancel := context.WithTimeout(ctx, eventTimeout)
		if err := a.loadPowerLevels(lctx, evt.RoomID); err != nil {
			a.log.Warn("matrix: read power levels on join", "room", evt.RoomID, "err", err)
		}
		cancel()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	m, ok := a.members[evt.RoomID]
	if !ok {
		return // fetched in full on first use
	}
	// Copy on write: readers hold the old map without the lock.
	next := make(map[id.UserID]string, len(m)+1)
	for k, v := range m {
		next[k] = v
	}
	if mc.Membership == event.MembershipJoin {
		next[target] = mc.Displayname
	} else {
		delete(next, target)
	}
	a.members[evt.RoomID] = next
}

func (a *Adapter) onInvite(ctx context.Context, room id.RoomID, inviter id.UserID) {
	ctx, cancel := context.WithTimeout(ctx, eventTimeout)
	defer cancel()
	if !a.roomAllowed(room) {
		a.log.Info("matrix: declining invite to a room not in matrix.rooms", "room", room, "inviter", inviter)
		err := withRateLimit(ctx, a.log, "leave", func(ctx context.Context) error {
			_, err := a.client.LeaveRoom(ctx, room)
			return err
		})
		if err != nil {
			a.log.Warn("matrix: decline invite", "room", room, "err", err)
		}
		return
	}
	a.mu.Lock()
	a.joinedAt[room] = time.Now()
	a.mu.Unlock()
	err := withRateLimit(ctx, a.log, "join", func(ctx context.Context) error {
		_, err := a.client.JoinRoomByID(ctx, room)
		return err
	})
	if err != nil {
		a.log.Warn("matrix: join on invite", "room", room, "err", err)
		return
	}
	a.log.Info("matrix: joined room on invite", "room", room, "inviter", inviter)
}

// onPowerLevels keeps the room's power levels current. The event says
// they changed; what they are now is read from the room's state, because a
// sync may deliver a room's power-level events out of order (Dendrite
// sends a newly joined room's timeline newest first), and the last one
// handled is not always the one in force. Should the read fail, the
// event's content is taken if it is not older than what is known.
func (a *Adapter) onPowerLevels(ctx context.Context, evt *event.Event) {
	pl := evt.Content.AsPowerLevels()
	if pl == nil || evt.RoomID == "" {
		return
	}
	if evt.Mautrix.EventSource&event.SourceInvite == 0 {
		lctx, cancel := context.WithTimeout(ctx, eventTimeout)
		err := a.loadPowerLevels(lctx, evt.RoomID)
		cancel()
		if err == nil {
			return
		}
		a.log.Warn("matrix: read power levels after a change; using the event's", "room", evt.RoomID, "err", err)
	}
	a.setPowerLevels(evt.RoomID, pl, evt.Timestamp)
}

// setPowerLevels records a room's power levels unless newer ones (by
// origin_server_ts) are known.
func (a *Adapter) setPowerLevels(room id.RoomID, pl *event.PowerLevelsEventContent, ts int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.power[room] != nil && ts < a.powerTS[room] {
		return
	}
	a.power[room] = pl
	a.powerTS[room] = ts
}

// loadPowerLevels reads a room's power levels from its current state.
func (a *Adapter) loadPowerLevels(ctx context.Context, room id.RoomID) error {
	var evt *event.Event
	err := withRateLimit(ctx, a.log, "power levels", func(ctx context.Context) (err error) {
		evt, err = a.client.FullStateEvent(ctx, room, event.StatePowerLevels, "")
		return err
	})
	if err != nil {
		return fmt.Errorf("matrix: power levels of %s: %w", room, err)
	}
	if evt.Content.Parsed == nil {
		if err := evt.Content.ParseRaw(event.StatePowerLevels); err != nil {
			return fmt.Errorf("matrix: power levels of %s: %w", room, err)
		}
	}
	pl := evt.Content.AsPowerLevels()
	a.mu.Lock()
	a.power[room] = pl // the state in force: it wins over anything synced
	a.powerTS[room] = max(evt.Timestamp, a.powerTS[room])
	a.mu.Unlock()
	return nil
}

// loadJoinedPowerLevels reads the power levels of every allowed room the
// bot is in, at start-up: a sync that resumes from a saved position does
// not repeat a room's state.
func (a *Adapter) loadJoinedPowerLevels(ctx context.Context) {
	var resp *mautrix.RespJoinedRooms
	err := withRateLimit(ctx, a.log, "joined rooms", func(ctx context.Context) (err error) {
		resp, err = a.client.JoinedRooms(ctx)
		return err
	})
	if err != nil {
		a.log.Warn("matrix: list joined rooms for their power levels", "err", err)
		return
	}
	for i, room := range resp.JoinedRooms {
		if i == maxStartupRooms {
			a.log.Warn("matrix: more joined rooms than are read at start-up; the rest are read on first use", "rooms", len(resp.JoinedRooms))
			return
		}
		if !a.roomAllowed(room) {
			continue
		}
		if err := a.loadPowerLevels(ctx, room); err != nil {
			a.log.Warn("matrix: read power levels at start-up", "room", room, "err", err)
		}
	}
}

// maxStartupRooms bounds the rooms whose power levels are read at start.
const maxStartupRooms = 500
