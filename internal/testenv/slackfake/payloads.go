package slackfake

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// Event is an Events API inner event in Slack's wire format (the subset of
// message and app_mention fields vigil reads).
type Event struct {
	Type            string  `json:"type"`
	SubType         string  `json:"subtype,omitempty"`
	Channel         string  `json:"channel,omitempty"`
	ChannelType     string  `json:"channel_type,omitempty"`
	User            string  `json:"user,omitempty"`
	BotID           string  `json:"bot_id,omitempty"`
	Text            string  `json:"text,omitempty"`
	TS              string  `json:"ts,omitempty"`
	ThreadTS        string  `json:"thread_ts,omitempty"`
	EventTS         string  `json:"event_ts,omitempty"`
	Message         *Event  `json:"message,omitempty"`
	PreviousMessage *Event  `json:"previous_message,omitempty"`
	DeletedTS       string  `json:"deleted_ts,omitempty"`
	Edited          *Edited `json:"edited,omitempty"`
}

// Edited marks an edited message.
type Edited struct {
	User string `json:"user"`
	TS   string `json:"ts"`
}

// AppMention is an app_mention event; threadTS is empty for a top-level
// message.
func AppMention(channel, user, text, ts, threadTS string) Event {
	return Event{Type: "app_mention", Channel: channel, User: user, Text: text, TS: ts, ThreadTS: threadTS, EventTS: ts}
}

// ChannelMessage is a message.channels event.
func ChannelMessage(channel, user, text, ts, threadTS string) Event {
	return Event{Type: "message", ChannelType: "channel", Channel: channel, User: user, Text: text, TS: ts, ThreadTS: threadTS, EventTS: ts}
}

// DirectMessage is a message.im event.
func DirectMessage(channel, user, text, ts string) Event {
	return Event{Type: "message", ChannelType: "im", Channel: channel, User: user, Text: text, TS: ts, EventTS: ts}
}

// EventCallback wraps an inner event in the Events API outer envelope, as
// Slack posts it to the request URL and carries it in Socket Mode.
func EventCallback(eventID string, ev any) []byte {
	// Marshalling a map of plain values cannot fail for the events tests
	// pass; a nil result would show up as a rejected payload.
	b, _ := json.Marshal(map[string]any{
		"token":      "legacy-verification-token",
		"team_id":    TeamID,
		"api_app_id": AppID,
		"event":      ev,
		"type":       "event_callback",
		"event_id":   eventID,
		"event_time": time.Now().Unix(),
		"authorizations": []map[string]any{{
			"team_id": TeamID, "user_id": BotUserID, "is_bot": true,
		}},
	})
	return b
}

// URLVerification is the challenge Slack sends when a request URL is set.
func URLVerification(challenge string) []byte {
	b, _ := json.Marshal(map[string]any{"token": "legacy-verification-token", "challenge": challenge, "type": "url_verification"})
	return b
}

// Sign computes Slack's v0 signature header for body at time at.
func Sign(secret string, at time.Time, body []byte) (signature, timestamp string) {
	timestamp = strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + timestamp + ":"))
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil)), timestamp
}

// SignedRequest builds a POST signed the way Slack signs requests.
func SignedRequest(t testing.TB, target, secret, contentType string, body []byte, at time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("slackfake: build request: %v", err)
	}
	sig, ts := Sign(secret, at, body)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-Slack-Signature", sig)
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
	return req
}

// EventsRequest is an Events API delivery signed with SigningSecret now.
func EventsRequest(t testing.TB, target string, body []byte) *http.Request {
	t.Helper()
	return SignedRequest(t, target, SigningSecret, "application/json", body, time.Now())
}

// InteractiveBody form-encodes an interactivity payload as Slack posts it.
func InteractiveBody(payload []byte) []byte {
	return []byte("payload=" + url.QueryEscape(string(payload)))
}

// InteractiveRequest is an interactivity delivery signed with SigningSecret
// now.
func InteractiveRequest(t testing.TB, target string, payload []byte) *http.Request {
	t.Helper()
	return SignedRequest(t, target, SigningSecret, "application/x-www-form-urlencoded", InteractiveBody(payload), time.Now())
}

// BlockAction describes a button click.
type BlockAction struct {
	User      string
	UserName  string
	Channel   string
	MessageTS string // the card's ts
	ThreadTS  string // the card's thread root
	BlockID   string
	ActionID  string
	Value     string
	ActionTS  string
	TriggerID string
}

// BlockActions builds a block_actions interactivity payload.
func BlockActions(a BlockAction) []byte {
	if a.TriggerID == "" {
		a.TriggerID = "trigger-" + a.ActionTS
	}
	msg := map[string]any{"type": "message", "ts": a.MessageTS, "bot_id": BotID, "user": BotUserID, "text": "approval"}
	if a.ThreadTS != "" {
		msg["thread_ts"] = a.ThreadTS
	}
	b, _ := json.Marshal(map[string]any{
		"type":       "block_actions",
		"team":       map[string]any{"id": TeamID, "domain": "vigil-fake"},
		"user":       map[string]any{"id": a.User, "username": a.UserName, "name": a.UserName, "team_id": TeamID},
		"api_app_id": AppID,
		"token":      "legacy-verification-token",
		"container": map[string]any{"type": "message", "message_ts": a.MessageTS, "channel_id": a.Channel,
			"is_ephemeral": false, "thread_ts": a.ThreadTS},
		"trigger_id":   a.TriggerID,
		"channel":      map[string]any{"id": a.Channel, "name": "ops"},
		"message":      msg,
		"response_url": "https://hooks.slack.invalid/actions/" + a.ActionTS,
		"state":        map[string]any{"values": map[string]any{}},
		"actions": []map[string]any{{
			"type": "button", "action_id": a.ActionID, "block_id": a.BlockID, "value": a.Value,
			"text":      map[string]any{"type": "plain_text", "text": a.ActionID, "emoji": true},
			"action_ts": a.ActionTS,
		}},
	})
	return b
}

// ViewSubmission describes a modal submit.
type ViewSubmission struct {
	User            string
	ViewID          string
	CallbackID      string
	PrivateMetadata string
	// Values are block ID -> action ID -> plain_text_input value.
	Values map[string]map[string]string
}

// ViewSubmissionPayload builds a view_submission interactivity payload.
func ViewSubmissionPayload(v ViewSubmission) []byte {
	values := map[string]any{}
	for blk, acts := range v.Values {
		m := map[string]any{}
		for act, val := range acts {
			m[act] = map[string]any{"type": "plain_text_input", "value": val}
		}
		values[blk] = m
	}
	b, _ := json.Marshal(map[string]any{
		"type":       "view_submission",
		"team":       map[string]any{"id": TeamID, "domain": "vigil-fake"},
		"user":       map[string]any{"id": v.User, "username": v.User, "team_id": TeamID},
		"api_app_id": AppID,
		"token":      "legacy-verification-token",
		"trigger_id": "trigger-view-" + v.ViewID,
		"view": map[string]any{
			"id": v.ViewID, "team_id": TeamID, "type": "modal", "callback_id": v.CallbackID,
			"private_metadata": v.PrivateMetadata, "hash": "hash-" + v.ViewID,
			"state": map[string]any{"values": values},
		},
	})
	return b
}
