package slackfake_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/vigilops/vigil/internal/testenv/slackfake"
)

func client(s *slackfake.Server) *slack.Client {
	return slack.New(slackfake.BotToken, slack.OptionAPIURL(s.APIURL()), slack.OptionAppLevelToken(slackfake.AppToken))
}

func TestWebAPIRecordsCalls(t *testing.T) {
	s := slackfake.New(t)
	api := client(s)
	ctx := context.Background()

	auth, err := api.AuthTestContext(ctx)
	if err != nil || auth.UserID != slackfake.BotUserID || auth.BotID != slackfake.BotID {
		t.Fatalf("auth.test = %+v, %v", auth, err)
	}
	blocks := []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "*hello*", false, false), nil, nil)}
	ch, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hello", false), slack.MsgOptionBlocks(blocks...), slack.MsgOptionTS("111.222"))
	if err != nil || ch != "C1" || ts == "" {
		t.Fatalf("postMessage = %q %q %v", ch, ts, err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slack.MsgOptionText("edited", false)); err != nil {
		t.Fatalf("update: %v", err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", "999.999", slack.MsgOptionText("x", false)); err == nil || err.Error() != "message_not_found" {
		t.Fatalf("update of unknown message: %v", err)
	}
	if _, err := api.PostEphemeralContext(ctx, "C1", "U1", slack.MsgOptionText("psst", false)); err != nil {
		t.Fatalf("ephemeral: %v", err)
	}
	if err := api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: "C1", ThreadTS: ts, Status: "thinking"}); err != nil {
		t.Fatalf("setStatus: %v", err)
	}
	if _, err := api.OpenViewContext(ctx, "trig", slack.ModalViewRequest{Type: slack.VTModal, Title: slack.NewTextBlockObject("plain_text", "t", false, false), Blocks: slack.Blocks{BlockSet: blocks}}); err != nil {
		t.Fatalf("views.open: %v", err)
	}

	posts := s.Posts()
	if len(posts) != 1 {
		t.Fatalf("posts = %d", len(posts))
	}
	p := posts[0]
	if p.Param("channel") != "C1" || p.Param("thread_ts") != "111.222" || p.TS != ts {
		t.Errorf("recorded post params = %v ts %q", p.Params, p.TS)
	}
	if len(p.Blocks) != 1 || p.Blocks[0]["type"] != "section" || !strings.Contains(p.Text(), "*hello*") {
		t.Errorf("recorded blocks = %v", p.Blocks)
	}
	if p.Param("token") != "" {
		t.Errorf("token leaked into recorded params")
	}
	views := s.Calls("views.open")
	if len(views) != 1 || len(views[0].Blocks) != 1 {
		t.Errorf("views.open recorded %+v", views)
	}
	if got := len(s.Calls("chat.update")); got != 2 {
		t.Errorf("chat.update calls = %d, want 2 (one failed)", got)
	}
}

func TestFaults(t *testing.T) {
	s := slackfake.New(t)
	api := client(s)
	ctx := context.Background()
	s.Inject("chat.postMessage", slackfake.Fault{Nth: 2, Status: http.StatusTooManyRequests, RetryAfter: 7})
	s.Inject("usergroups.list", slackfake.Fault{Error: "paid_only"})

	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("1", false)); err != nil {
		t.Fatal(err)
	}
	_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("2", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 7*time.Second {
		t.Fatalf("second post: %v, want rate limit 7s", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("3", false)); err != nil {
		t.Fatalf("third post: %v", err)
	}
	for i := 0; i < 2; i++ {
		if _, err := api.GetUserGroupsContext(ctx); err == nil || err.Error() != "paid_only" {
			t.Fatalf("usergroups.list: %v, want paid_only", err)
		}
	}
	calls := s.Calls("chat.postMessage")
	if len(calls) != 3 || calls[1].Status != http.StatusTooManyRequests || calls[1].OK() || !calls[2].OK() {
		t.Errorf("recorded = %+v", calls)
	}
}

func TestUsergroupsAndUsers(t *testing.T) {
	s := slackfake.New(t)
	s.AddUsergroup(slackfake.Usergroup{ID: "S1", Handle: "oncall", Members: []string{"U1", "U2"}})
	s.AddUser(slackfake.User{ID: "U1", Name: "alice", RealName: "Alice"})
	api := client(s)
	ctx := context.Background()
	groups, err := api.GetUserGroupsContext(ctx)
	if err != nil || len(groups) != 1 || groups[0].ID != "S1" {
		t.Fatalf("groups = %+v, %v", groups, err)
	}
	members, err := api.GetUserGroupMembersContext(ctx, "S1")
	if err != nil || len(members) != 2 {
		t.Fatalf("members = %v, %v", members, err)
	}
	u, err := api.GetUserInfoContext(ctx, "U1")
	if err != nil || u.Name != "alice" {
		t.Fatalf("user = %+v, %v", u, err)
	}
	if _, err := api.GetUserInfoContext(ctx, "U404"); err == nil {
		t.Fatal("unknown user found")
	}
}

func TestBadToken(t *testing.T) {
	s := slackfake.New(t)
	api := slack.New("xoxb-wrong", slack.OptionAPIURL(s.APIURL()))
	if _, err := api.AuthTestContext(context.Background()); err == nil || err.Error() != "invalid_auth" {
		t.Fatalf("auth.test with a wrong token: %v", err)
	}
}

func TestUploadV2(t *testing.T) {
	s := slackfake.New(t)
	api := client(s)
	content := strings.Repeat("line\n", 100)
	f, err := api.UploadFileContext(context.Background(), slack.UploadFileParameters{
		Content: content, FileSize: len(content), Filename: "out.txt", Title: "output",
		Channel: "C1", ThreadTimestamp: "111.222",
	})
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	ups := s.Uploads()
	if len(ups) != 1 || ups[0].FileID != f.ID || ups[0].Content != content || !ups[0].Completed ||
		ups[0].Channel != "C1" || ups[0].ThreadTS != "111.222" || ups[0].Title != "output" {
		t.Fatalf("uploads = %+v", ups)
	}
}

func TestSignatureVerifiesWithSlackGo(t *testing.T) {
	body := slackfake.EventCallback("Ev1", slackfake.AppMention("C1", "U1", "hi", "1.1", ""))
	req := slackfake.EventsRequest(t, "http://x/slack/events", body)
	sv, err := slack.NewSecretsVerifier(req.Header, slackfake.SigningSecret)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = sv.Write(body)
	if err := sv.Ensure(); err != nil {
		t.Fatalf("signature rejected: %v", err)
	}
	var outer struct {
		Type    string `json:"type"`
		EventID string `json:"event_id"`
		Event   struct {
			Type string `json:"type"`
		} `json:"event"`
	}
	if err := json.Unmarshal(body, &outer); err != nil || outer.EventID != "Ev1" || outer.Event.Type != "app_mention" {
		t.Fatalf("callback = %+v, %v", outer, err)
	}
}

func TestSocketModeAcksAndRedelivery(t *testing.T) {
	s := slackfake.New(t, slackfake.WithAckTimeout(200*time.Millisecond), slackfake.WithPingInterval(100*time.Millisecond))
	api := client(s)
	sm := socketmode.New(api)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- sm.RunContext(ctx) }()

	// Pushed before the client connects: queued and sent on connect.
	first := s.PushEventsAPI(slackfake.EventCallback("Ev1", slackfake.AppMention("C1", "U1", "<@U0VIGIL> hi", "1.1", "")))
	s.WaitConnected(t, 5*time.Second)

	var skipped string
	seen := map[string]int{}
	deadline := time.After(5 * time.Second)
	for len(seen) < 2 || seen[skipped] < 2 {
		select {
		case evt := <-sm.Events:
			if evt.Request == nil || (evt.Type != socketmode.EventTypeEventsAPI && evt.Type != socketmode.EventTypeInteractive) {
				continue
			}
			id := evt.Request.EnvelopeID
			seen[id]++
			switch {
			case id == first:
				sm.Ack(*evt.Request)
			case seen[id] == 1:
				skipped = id // don't ack: the fake must redeliver once
				if evt.Request.RetryAttempt != 0 {
					t.Errorf("first delivery has retry_attempt %d", evt.Request.RetryAttempt)
				}
			default:
				if evt.Request.RetryAttempt != 1 || evt.Request.RetryReason != "timeout" {
					t.Errorf("redelivery = attempt %d reason %q", evt.Request.RetryAttempt, evt.Request.RetryReason)
				}
				sm.Ack(*evt.Request)
			}
			if id == first {
				s.PushInteractive(slackfake.BlockActions(slackfake.BlockAction{User: "U1", Channel: "C1", MessageTS: "2.2", ActionID: "a", Value: "v", ActionTS: "3.3"}))
			}
		case <-deadline:
			t.Fatalf("timed out; seen %v", seen)
		}
	}
	s.WaitAck(t, first, 2*time.Second)
	s.WaitAck(t, skipped, 2*time.Second)
	// Only one redelivery, ever. A sentinel pushed now and left unacked is
	// redelivered one ack timeout later; a second redelivery of the
	// skipped envelope, due one ack timeout after its first, would have
	// been sent by then.
	sentinel := s.PushEventsAPI(slackfake.EventCallback("Ev2", slackfake.AppMention("C1", "U1", "<@U0VIGIL> still there?", "4.4", "")))
	for redelivered := false; !redelivered; {
		select {
		case evt := <-sm.Events:
			if evt.Request != nil && evt.Request.EnvelopeID == sentinel && evt.Request.RetryAttempt == 1 {
				redelivered = true
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the unacked sentinel was never redelivered")
		}
	}
	n := 0
	for _, e := range s.Sent() {
		if e.EnvelopeID == skipped {
			n++
		}
	}
	if n != 2 {
		t.Errorf("envelope %s sent %d times, want 2", skipped, n)
	}
	cancel()
	select {
	case <-runErr:
	case <-time.After(5 * time.Second):
		t.Fatal("socketmode client did not stop")
	}
}
