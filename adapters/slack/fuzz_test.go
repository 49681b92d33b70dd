package slack

import (
	"context"
	"testing"

	"github.com/vigilops/vigil/internal/testenv/slackfake"
)

func fuzzAdapter(t testing.TB) *Adapter {
	a, err := New(Config{BotToken: "xoxb-1", AppToken: "xapp-1"})
	if err != nil {
		t.Fatal(err)
	}
	a.self.Store(&identity{userID: slackfake.BotUserID, botID: slackfake.BotID})
	a.handler.Store(&handlerRef{h: newRecorder()})
	return a
}

// FuzzInboundEvent: no Events API body makes the intake panic, and a
// delivered message is always in a thread with the bot mention stripped.
func FuzzInboundEvent(f *testing.F) {
	f.Add(slackfake.EventCallback("Ev1", slackfake.AppMention("C1", "U1", "<@U0VIGIL> check @web-01", "1.1", "")))
	f.Add(slackfake.EventCallback("Ev2", slackfake.DirectMessage("D1", "U1", "&lt;@x&gt; @a.b-c", "2.2")))
	f.Add(slackfake.EventCallback("Ev3", slackfake.ChannelMessage("C1", "U1", "<@U0VIGIL|vigil>", "3.3", "1.1")))
	f.Add([]byte(`{"type":"event_callback","event":{"type":"message","subtype":"message_changed"}}`))
	f.Add([]byte(`{"type":"url_verification","challenge":"x"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		a := fuzzAdapter(t)
		p, err := parseEvent(body)
		if err != nil || p.Type != "event_callback" || p.Chat == nil {
			return
		}
		m, ok, _ := a.toMessage(p.EventID, *p.Chat)
		if !ok {
			return
		}
		if m.Thread.Channel == "" || m.Thread.Thread == "" || m.Thread.Platform != Platform {
			t.Errorf("message outside a thread: %+v", m.Thread)
		}
		if mentionsUser(m.Text, slackfake.BotUserID) {
			t.Errorf("bot mention left in %q", m.Text)
		}
		for _, r := range m.Mentions {
			if r.Name == "" {
				t.Error("empty mention")
			}
		}
		a.acceptEvent(context.Background(), p)
	})
}

// FuzzInteraction: no interactivity payload makes the intake panic.
func FuzzInteraction(f *testing.F) {
	f.Add(slackfake.BlockActions(slackfake.BlockAction{User: "U1", Channel: "C1", MessageTS: "1.1", ActionID: actionApprove, Value: `{"id":"a","token":"t"}`, ActionTS: "2.2"}))
	f.Add(slackfake.ViewSubmissionPayload(slackfake.ViewSubmission{User: "U1", ViewID: "V1", CallbackID: denyCallbackID,
		PrivateMetadata: `{"id":"a","token":"t","channel":"C1","thread":"1.1"}`, Values: map[string]map[string]string{"reason": {"reason": "no"}}}))
	f.Add([]byte(`{"type":"block_actions","user":{"id":"U1"},"actions":[{"action_id":"vigil_deny","value":"{}"}]}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		a := fuzzAdapter(t)
		in, err := parseInteraction(payload)
		if err != nil {
			return
		}
		_, _ = a.acceptInteraction(context.Background(), in, false)
	})
}
