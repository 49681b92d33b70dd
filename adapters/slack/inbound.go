package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
)

// inbox runs clicks and dialogs on a fixed set of workers (a decision does
// store work before it answers, so it cannot run while Slack waits for the
// ack; chat messages need no inbox, see acceptEvent). Work with the same
// key (an approval) runs in arrival order on one worker.
type inbox struct {
	shards []chan func(context.Context)
}

func newInbox(workers, depth int) *inbox {
	ib := &inbox{shards: make([]chan func(context.Context), workers)}
	for i := range ib.shards {
		ib.shards[i] = make(chan func(context.Context), depth)
	}
	return ib
}

func (ib *inbox) shard(key string) chan func(context.Context) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return ib.shards[h.Sum32()%uint32(len(ib.shards))]
}

// offer queues work without waiting; false when the shard is full.
func (ib *inbox) offer(key string, fn func(context.Context)) bool {
	select {
	case ib.shard(key) <- fn:
		return true
	default:
		return false
	}
}

// put queues work, waiting for room until ctx ends.
func (ib *inbox) put(ctx context.Context, key string, fn func(context.Context)) bool {
	select {
	case ib.shard(key) <- fn:
		return true
	case <-ctx.Done():
		return false
	}
}

// run works the shards until ctx ends. Each piece of work runs behind a
// panic guard.
func (ib *inbox) run(ctx context.Context, log *slog.Logger) {
	var wg sync.WaitGroup
	for _, ch := range ib.shards {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case fn := <-ch:
					guard(ctx, log, "inbound handler", fn)
				}
			}
		})
	}
	wg.Wait()
}

// guard runs fn and turns a panic into a logged error with an ID.
func guard(ctx context.Context, log *slog.Logger, what string, fn func(context.Context)) {
	defer func() {
		if p := recover(); p != nil {
			log.Error("slack: panic recovered", "where", what, "error_id", newErrorID(), "panic", p, "stack", string(debug.Stack()))
		}
	}()
	fn(ctx)
}

func (a *Adapter) handlerOf() bot.Handler {
	if r := a.handler.Load(); r != nil {
		return r.h
	}
	return nil
}

// parseEvent reads an Events API body (also the Socket Mode events_api
// payload) with slack-go's slackevents. The legacy verification token is
// not checked: HTTP requests carry a v0 signature checked before this, and
// Socket Mode needs neither. An event_callback whose inner type slack-go
// does not know is returned with Ignored set: Slack sends only what the app
// subscribed to, so it is news, not a malformed payload.
func parseEvent(body []byte) (eventsPayload, error) {
	ev, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
	if err != nil {
		if t, unknown := unknownInnerType(body); unknown {
			return eventsPayload{Type: slackevents.CallbackEvent, Ignored: "event type " + t}, nil
		}
		return eventsPayload{}, fmt.Errorf("%w: events payload: %w", ErrBadPayload, err)
	}
	return eventsPayloadOf(ev)
}

// eventsPayload is what vigil reads of one Events API payload.
type eventsPayload struct {
	Type      string // event_callback, url_verification, app_rate_limited, …
	Challenge string // url_verification only
	EventID   string
	// Chat is set for a message or app_mention event; for any other inner
	// event Ignored says why vigil leaves it alone.
	Chat    *chatEvent
	Ignored string
}

// eventsPayloadOf reduces slack-go's parsed payload to what vigil reads.
func eventsPayloadOf(ev slackevents.EventsAPIEvent) (eventsPayload, error) {
	p := eventsPayload{Type: ev.Type}
	switch ev.Type {
	case "":
		return p, fmt.Errorf("%w: events payload has no type", ErrBadPayload)
	case slackevents.URLVerification:
		if v, ok := ev.Data.(*slackevents.EventsAPIURLVerificationEvent); ok {
			p.Challenge = v.Challenge
		}
		return p, nil
	case slackevents.CallbackEvent:
	default:
		return p, nil
	}
	if cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent); ok {
		p.EventID = cb.EventID
	}
	switch inner := ev.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		p.Chat = &chatEvent{
			Type: string(slackevents.AppMention), Channel: inner.Channel, User: inner.User, BotID: inner.BotID,
			Text: inner.Text, TS: inner.TimeStamp, ThreadTS: inner.ThreadTimeStamp, Edited: inner.Edited != nil,
		}
	case *slackevents.MessageEvent:
		c := &chatEvent{
			Type: string(slackevents.Message), SubType: inner.SubType, Channel: inner.Channel, ChannelType: inner.ChannelType,
			User: inner.User, BotID: inner.BotID, Text: inner.Text, TS: inner.TimeStamp, ThreadTS: inner.ThreadTimeStamp,
		}
		// A plain message's own fields are mirrored in Message; a
		// message_changed carries the edit there and is ignored by subtype.
		c.Edited = inner.Message != nil && inner.Message.Edited != nil
		p.Chat = c
	default:
		if ev.InnerEvent.Type == "" {
			return p, fmt.Errorf("%w: inner event has no type", ErrBadPayload)
		}
		p.Ignored = "event type " + ev.InnerEvent.Type
	}
	return p, nil
}

// unknownInnerType reports the inner type of an event_callback that
// slack-go has no type for (ParseEvent refuses those).
func unknownInnerType(body []byte) (string, bool) {
	var cb slackevents.EventsAPICallbackEvent
	if json.Unmarshal(body, &cb) != nil || cb.Type != slackevents.CallbackEvent || cb.InnerEvent == nil {
		return "", false
	}
	var inner slack.Event
	if json.Unmarshal(*cb.InnerEvent, &inner) != nil || inner.Type == "" {
		return "", false
	}
	if _, ok := slackevents.EventsAPIInnerEventMapping[slackevents.EventsAPIType(inner.Type)]; ok {
		return "", false
	}
	if _, ok := slack.EventMapping[inner.Type]; ok {
		return "", false
	}
	return inner.Type, true
}

// chatEvent is the part of message and app_mention events vigil reads.
type chatEvent struct {
	Type        string
	SubType     string
	Channel     string
	ChannelType string
	User        string
	BotID       string
	Text        string
	TS          string
	ThreadTS    string
	Edited      bool
}

// acceptEvent takes one event_callback: events vigil ignores are dropped,
// and a chat message goes straight to the bot, whose HandleMessage is the
// fast path (the one dedup, by event_id across replicas, and the one
// queue): it returns without waiting on the run, so the event is
// acknowledged in time, and a redelivery (X-Slack-Retry-Num, a Socket Mode
// retry) is dropped there.
func (a *Adapter) acceptEvent(ctx context.Context, p eventsPayload) {
	if p.Chat == nil {
		a.log.Debug("slack event ignored", "event_id", p.EventID, "why", p.Ignored)
		return
	}
	ev := *p.Chat
	m, ok, why := a.toMessage(p.EventID, ev)
	if !ok {
		a.log.Debug("slack event ignored", "event_id", p.EventID, "type", ev.Type, "subtype", ev.SubType, "why", why)
		return
	}
	guard(ctx, a.log, "inbound message", func(ctx context.Context) { a.handlerOf().HandleMessage(ctx, m) })
}

// toMessage normalises an event into a bot message, or says why vigil
// ignores it.
//
//   - app_mention: addressed; the thread is the mention's thread, or the
//     mention itself when it is top-level.
//   - message in a DM (channel_type im): addressed.
//   - message in a channel thread vigil is part of: addressed. A thread reply
//     elsewhere is delivered unaddressed (another replica may know the
//     thread); top-level channel chatter is not delivered at all, and channel
//     messages that mention vigil are left to their app_mention event.
//   - anything from a bot (vigil included), edits, deletions and other
//     subtypes are ignored.
func (a *Adapter) toMessage(eventID string, ev chatEvent) (bot.Message, bool, string) {
	me := a.me()
	switch {
	case ev.BotID != "":
		return bot.Message{}, false, "from a bot"
	case ev.User == "":
		return bot.Message{}, false, "no user"
	case ev.User == me.userID:
		return bot.Message{}, false, "own message"
	case ev.Channel == "" || ev.TS == "":
		return bot.Message{}, false, "no channel or ts"
	}
	root := ev.ThreadTS
	addressed := false
	switch ev.Type {
	case "app_mention":
		if ev.Edited {
			return bot.Message{}, false, "edited"
		}
		addressed = true
		if root == "" {
			root = ev.TS
		}
	case "message":
		switch ev.SubType {
		case "", "thread_broadcast", "file_share":
		default:
			return bot.Message{}, false, "subtype " + ev.SubType
		}
		if ev.Edited {
			return bot.Message{}, false, "edited"
		}
		if ev.ChannelType == "im" {
			addressed = true
			if root == "" {
				root = ev.TS
			}
			break
		}
		if mentionsUser(ev.Text, me.userID) {
			return bot.Message{}, false, "mentions vigil: handled as app_mention"
		}
		if root == "" || root == ev.TS {
			return bot.Message{}, false, "not in a thread"
		}
		addressed = a.knowsThread(ev.Channel, root)
	default:
		return bot.Message{}, false, "event type " + ev.Type
	}
	t := bot.ThreadRef{Platform: Platform, Channel: ev.Channel, Thread: root}
	if addressed {
		a.rememberThread(t)
	}
	text, mentions := normalise(ev.Text, me.userID)
	return bot.Message{
		EventID:   eventID,
		Thread:    t,
		ID:        ev.TS,
		User:      ev.User,
		Text:      text,
		Mentions:  mentions,
		Addressed: addressed,
		At:        tsTime(ev.TS),
	}, true, ""
}

// mentionsUser reports whether Slack text mentions the user (<@U…> or
// <@U…|name>).
func mentionsUser(text, user string) bool {
	if user == "" {
		return false
	}
	return strings.Contains(text, "<@"+user+">") || strings.Contains(text, "<@"+user+"|")
}

// stripUserMention removes every mention of user from Slack text.
func stripUserMention(text, user string) string {
	if user == "" {
		return text
	}
	var b strings.Builder
	for {
		i := strings.Index(text, "<@"+user)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		rest := text[i+2+len(user):]
		if !strings.HasPrefix(rest, ">") && !strings.HasPrefix(rest, "|") {
			b.WriteString(text[:i+2+len(user)])
			text = rest
			continue
		}
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:i])
		text = rest[end+1:]
	}
}

var (
	reSlackToken = regexp.MustCompile(`<[^<>\n]*>`)
	reSpaces     = regexp.MustCompile(`[ \t]{2,}`)
)

// normalise strips vigil's own mention, extracts resource mentions
// (@name words that are not Slack user mentions <@U…>, links or channel
// references) and unescapes Slack's &amp; &lt; &gt;.
func normalise(text, botUserID string) (string, []bot.Mention) {
	text = stripUserMention(text, botUserID)
	plainText := unescapeSlack(reSlackToken.ReplaceAllString(text, " "))
	var mentions []bot.Mention
	for _, m := range bot.ResourceMentions(plainText) {
		if c := m.Name[0]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			mentions = append(mentions, m)
		}
	}
	clean := reSpaces.ReplaceAllString(unescapeSlack(text), " ")
	clean = strings.TrimLeft(strings.TrimSpace(clean), ":, ")
	return strings.TrimSpace(clean), mentions
}

// tsTime turns a Slack ts ("1700000000.000100") into a time.
func tsTime(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}
	}
	var us int64
	if frac != "" {
		frac = (frac + "000000")[:6]
		us, _ = strconv.ParseInt(frac, 10, 64)
	}
	return time.Unix(s, us*1000)
}

// parseInteraction reads an interactivity payload (the HTTP form's
// payload field, or a Socket Mode interactive envelope) as slack-go's
// InteractionCallback.
func parseInteraction(payload []byte) (slack.InteractionCallback, error) {
	var in slack.InteractionCallback
	if err := json.Unmarshal(payload, &in); err != nil {
		return in, fmt.Errorf("%w: interaction: %w", ErrBadPayload, err)
	}
	return in, checkInteraction(in)
}

// checkInteraction refuses callbacks vigil cannot attribute or act on. A
// block_actions payload whose actions have no block_id is not one Slack
// sends for Block Kit buttons, so it is refused rather than ignored.
func checkInteraction(in slack.InteractionCallback) error {
	if in.Type == "" || in.User.ID == "" {
		return fmt.Errorf("%w: interaction without type or user", ErrBadPayload)
	}
	if in.Type == slack.InteractionTypeBlockActions && len(in.ActionCallback.BlockActions) == 0 {
		return fmt.Errorf("%w: block_actions without a block action (each needs a block_id)", ErrBadPayload)
	}
	return nil
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// acceptInteraction takes a click or a modal submission and queues the
// decision. It returns an error for payloads that can't be understood
// (HTTP answers 400) and false when the work could not be queued.
func (a *Adapter) acceptInteraction(ctx context.Context, in slack.InteractionCallback, wait bool) (bool, error) {
	queue := func(ib *inbox, key string, fn func(context.Context)) bool {
		if wait {
			return ib.put(ctx, key, fn)
		}
		return ib.offer(key, fn)
	}
	userName := firstOf(in.User.Username, in.User.Name)
	switch in.Type {
	case slack.InteractionTypeBlockActions:
		for _, act := range in.ActionCallback.BlockActions {
			if act.ActionID == actionGood || act.ActionID == actionBad {
				ok, err := a.acceptFeedback(in, act.ActionID, act.Value, act.ActionTs, userName, queue)
				if err != nil || !ok {
					return ok, err
				}
				continue
			}
			if act.ActionID != actionApprove && act.ActionID != actionDeny {
				continue
			}
			var v buttonValue
			if err := json.Unmarshal([]byte(act.Value), &v); err != nil || v.ID == "" {
				return false, fmt.Errorf("%w: approval button value", ErrBadPayload)
			}
			channel, thread := clickThread(in)
			if channel == "" || thread == "" || act.ActionTs == "" {
				return false, fmt.Errorf("%w: click without channel, message or action_ts", ErrBadPayload)
			}
			eventID := "action:" + act.ActionTs + ":" + in.User.ID
			deny := act.ActionID == actionDeny
			// The bot drops a click delivered twice (by its event ID); a
			// deny click opens the adapter's own dialog, which the bot
			// never sees, so the adapter opens it once.
			if deny && !a.dialogs.add(eventID, struct{}{}) {
				a.log.Debug("slack duplicate deny click dropped", "approval", v.ID, "user", in.User.ID)
				continue
			}
			d := bot.Decision{
				EventID:    eventID,
				ApprovalID: v.ID,
				// A button decides: it must carry the card's token, and a
				// value without one is a forged click the bot refuses.
				Token:      v.Token,
				FromButton: true,
				Approve:    act.ActionID == actionApprove,
				User:       in.User.ID,
				UserName:   userName,
				Thread:     bot.ThreadRef{Platform: Platform, Channel: channel, Thread: thread},
				At:         tsTime(act.ActionTs),
			}
			var ok bool
			if d.Approve {
				ok = queue(a.decisions, d.ApprovalID, func(ctx context.Context) { a.handlerOf().HandleDecision(ctx, d) })
			} else {
				trigger := in.TriggerID
				ok = queue(a.modals, d.ApprovalID, func(ctx context.Context) { a.askDenyReason(ctx, d, trigger) })
			}
			if !ok {
				if deny {
					a.dialogs.remove(eventID)
				}
				return false, nil
			}
		}
		return true, nil
	case slack.InteractionTypeViewSubmission:
		if in.View.CallbackID != denyCallbackID {
			return true, nil
		}
		var meta denyMetadata
		if err := json.Unmarshal([]byte(in.View.PrivateMetadata), &meta); err != nil || meta.ID == "" || meta.Channel == "" || meta.Thread == "" {
			return false, fmt.Errorf("%w: deny dialog metadata", ErrBadPayload)
		}
		reason := ""
		if in.View.State != nil {
			reason = strings.TrimSpace(in.View.State.Values[denyReasonBlock][denyReasonAction].Value)
		}
		eventID := ""
		if in.View.ID != "" {
			eventID = "view:" + in.View.ID
		}
		d := bot.Decision{
			EventID:    eventID,
			ApprovalID: meta.ID,
			Token:      meta.Token,
			FromButton: true, // the deny dialog a button opened
			Approve:    false,
			Reason:     reason,
			User:       in.User.ID,
			UserName:   userName,
			Thread:     bot.ThreadRef{Platform: Platform, Channel: meta.Channel, Thread: meta.Thread},
			At:         time.Now(),
		}
		if !queue(a.decisions, d.ApprovalID, func(ctx context.Context) { a.handlerOf().HandleDecision(ctx, d) }) {
			return false, nil
		}
		return true, nil
	default:
		a.log.Debug("slack interaction ignored", "type", in.Type)
		return true, nil
	}
}

// clickThread is the channel and thread of the message a button sits on:
// the thread it is in, or the message itself when it is top-level.
func clickThread(in slack.InteractionCallback) (channel, thread string) {
	channel = firstOf(in.Channel.ID, in.Container.ChannelID)
	thread = firstOf(in.Message.ThreadTimestamp, in.Container.ThreadTs, in.Message.Timestamp, in.Container.MessageTs)
	return channel, thread
}

// acceptFeedback queues a 👍/👎 click on an answer.
func (a *Adapter) acceptFeedback(in slack.InteractionCallback, actionID, value, actionTS, userName string, queue func(*inbox, string, func(context.Context)) bool) (bool, error) {
	var v feedbackValue
	if err := json.Unmarshal([]byte(value), &v); err != nil || v.Run == "" {
		return false, fmt.Errorf("%w: feedback button value", ErrBadPayload)
	}
	channel, thread := clickThread(in)
	if channel == "" || thread == "" || actionTS == "" {
		return false, fmt.Errorf("%w: click without channel, message or action_ts", ErrBadPayload)
	}
	fh, ok := a.handlerOf().(bot.FeedbackHandler)
	if !ok {
		return true, nil
	}
	eventID := "action:" + actionTS + ":" + in.User.ID
	rating := agent.RatingGood
	if actionID == actionBad {
		rating = agent.RatingBad
	}
	f := bot.Feedback{
		EventID: eventID, RunID: v.Run, Rating: rating, User: in.User.ID, UserName: userName,
		Thread: bot.ThreadRef{Platform: Platform, Channel: channel, Thread: thread}, At: tsTime(actionTS),
	}
	if !queue(a.decisions, "feedback:"+v.Run, func(ctx context.Context) { fh.HandleFeedback(ctx, f) }) {
		return false, nil
	}
	return true, nil
}

// askDenyReason opens the deny dialog. The click's trigger_id lives three
// seconds, so this runs on its own small queue. If the dialog can't open
// the denial still goes through, without a reason: denying is the safe
// direction and the person asked for it.
func (a *Adapter) askDenyReason(ctx context.Context, d bot.Decision, trigger string) {
	meta, err := json.Marshal(denyMetadata{ID: d.ApprovalID, Token: d.Token, Channel: d.Thread.Channel, Thread: d.Thread.Thread})
	if err == nil && trigger != "" {
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err = a.api.OpenViewContext(cctx, trigger, renderDenyModal(d.ApprovalID, string(meta)))
		cancel()
		if err == nil {
			return
		}
	}
	if err == nil {
		err = fmt.Errorf("no trigger_id")
	}
	a.log.Warn("slack: deny dialog did not open; denying without a reason", "error_id", newErrorID(), "approval", d.ApprovalID, "user", d.User, "err", err)
	d.Reason = "no reason given (the reason dialog could not be opened)"
	a.handlerOf().HandleDecision(ctx, d)
}
