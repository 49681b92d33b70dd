package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// slogOutput lets slack-go's socketmode client log through slog at debug.
type slogOutput struct{ log *slog.Logger }

func (s slogOutput) Output(_ int, msg string) error {
	s.log.Debug(strings.TrimSpace(msg), "component", "socketmode")
	return nil
}

// runSocket receives events over Socket Mode until ctx ends. Every
// envelope is acknowledged before anything else happens.
func (a *Adapter) runSocket(ctx context.Context) error {
	sm := socketmode.New(a.api, socketmode.OptionLog(slogOutput{a.log}))
	errc := make(chan error, 1)
	go func() { errc <- sm.RunContext(ctx) }()
	for {
		select {
		case <-ctx.Done():
			select {
			case <-errc:
			case <-time.After(5 * time.Second):
				a.log.Warn("slack: socket mode client slow to stop")
			}
			return nil
		case err := <-errc:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("slack socket mode (check slack.app_token): %w", err)
		case evt := <-sm.Events:
			guard(ctx, a.log, "socket mode event", func(ctx context.Context) { a.onSocketEvent(ctx, sm, evt) })
		}
	}
}

func (a *Adapter) onSocketEvent(ctx context.Context, sm *socketmode.Client, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeEventsAPI, socketmode.EventTypeInteractive, socketmode.EventTypeSlashCommand:
		req := evt.Request
		if req == nil {
			a.log.Error("slack: socket mode envelope without request", "type", evt.Type)
			return
		}
		a.ack(ctx, sm, req.EnvelopeID)
		if req.RetryAttempt > 0 {
			a.log.Debug("slack envelope redelivered", "envelope", req.EnvelopeID, "attempt", req.RetryAttempt, "reason", req.RetryReason)
		}
		switch evt.Type {
		case socketmode.EventTypeEventsAPI:
			a.onSocketEventsAPI(ctx, req.EnvelopeID, evt.Data)
		case socketmode.EventTypeInteractive:
			// slack-go has parsed the payload into an InteractionCallback.
			in, ok := evt.Data.(slack.InteractionCallback)
			err := fmt.Errorf("%w: interactive envelope without an interaction", ErrBadPayload)
			if ok {
				err = checkInteraction(in)
			}
			if err == nil {
				_, err = a.acceptInteraction(ctx, in, true)
			}
			if err != nil {
				a.log.Error("slack: interaction rejected", "error_id", newErrorID(), "envelope", req.EnvelopeID, "err", err)
			}
		}
	case socketmode.EventTypeErrorBadMessage:
		// slack-go could not parse the envelope. Ack it if it has an ID so
		// Slack doesn't redeliver it forever; never log its content.
		var cause error
		var raw json.RawMessage
		if bad, ok := evt.Data.(*socketmode.ErrorBadMessage); ok {
			cause, raw = bad.Cause, bad.Message
		}
		var env struct {
			EnvelopeID string          `json:"envelope_id"`
			Type       string          `json:"type"`
			Payload    json.RawMessage `json:"payload"`
		}
		_ = json.Unmarshal(raw, &env)
		if env.EnvelopeID != "" {
			a.ack(ctx, sm, env.EnvelopeID)
		}
		// slack-go refuses an event type it has no struct for; that is
		// an event vigil did not ask for, not a broken message.
		if t, unknown := unknownInnerType(env.Payload); env.Type == string(socketmode.RequestTypeEventsAPI) && unknown {
			a.log.Debug("slack event ignored", "envelope", env.EnvelopeID, "why", "event type "+t)
			return
		}
		a.log.Error("slack: malformed socket mode message", "error_id", newErrorID(), "envelope", env.EnvelopeID,
			"type", env.Type, "bytes", len(raw), "err", cause)
	case socketmode.EventTypeConnecting:
		a.log.Debug("slack socket mode connecting")
	case socketmode.EventTypeConnected:
		a.log.Info("slack socket mode connected")
	case socketmode.EventTypeConnectionError:
		a.log.Warn("slack socket mode connection error; retrying", "err", errOf(evt.Data))
	case socketmode.EventTypeInvalidAuth:
		a.log.Error("slack socket mode: invalid slack.app_token")
	case socketmode.EventTypeIncomingError, socketmode.EventTypeErrorWriteFailed:
		a.log.Warn("slack socket mode transport error", "type", evt.Type, "err", errOf(evt.Data))
	case socketmode.EventTypeDisconnect:
		a.log.Info("slack socket mode: Slack asked to reconnect")
	}
}

func errOf(data any) error {
	switch e := data.(type) {
	case *socketmode.ErrorWriteFailed:
		return e.Cause
	case error:
		return e
	}
	return nil
}

func (a *Adapter) ack(ctx context.Context, sm *socketmode.Client, envelopeID string) {
	actx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := sm.AckCtx(actx, envelopeID, nil); err != nil {
		a.log.Warn("slack: ack failed", "envelope", envelopeID, "err", err)
	}
}

func (a *Adapter) onSocketEventsAPI(ctx context.Context, envelopeID string, data any) {
	// slack-go has parsed the payload with slackevents.ParseEvent.
	ev, ok := data.(slackevents.EventsAPIEvent)
	if !ok {
		a.log.Error("slack: events payload rejected", "error_id", newErrorID(), "envelope", envelopeID,
			"err", fmt.Errorf("%w: events_api envelope without an event", ErrBadPayload))
		return
	}
	p, err := eventsPayloadOf(ev)
	if err != nil {
		a.log.Error("slack: events payload rejected", "error_id", newErrorID(), "envelope", envelopeID, "err", err)
		return
	}
	if p.Type != slackevents.CallbackEvent {
		a.log.Debug("slack events payload ignored", "type", p.Type)
		return
	}
	a.acceptEvent(ctx, p)
}
