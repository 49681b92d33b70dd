package slack_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/vigilops/vigil/adapters/slack"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/redistest"
	"github.com/vigilops/vigil/internal/testenv/slackfake"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	redisstore "github.com/vigilops/vigil/store/redis"
)

// One dedup and one queue per chat message: the adapter hands each event
// straight to the bot, whose HandleMessage claims the event ID in the
// shared store and queues the message on its thread, without waiting on
// the run. These tests hold the run in the model and deliver the event
// again meanwhile, so the ack provably does not wait on the run and the
// retry provably meets the bot's dedup while the first delivery's run is
// still in progress.

// blockedModel answers the first request only once release is closed,
// closing entered when that request arrives.
func blockedModel(t *testing.T, m *modeltest.Server, answer string) (entered, release chan struct{}) {
	t.Helper()
	entered, release = make(chan struct{}), make(chan struct{})
	m.Script(modeltest.Func(func(modeltest.Request) modeltest.Step {
		close(entered)
		<-release
		return modeltest.Text(answer)
	}))
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	return entered, release
}

// deliverAsync delivers an event the way the mode does (a signed POST,
// or a Socket Mode envelope) and reports on the channel once Slack would
// have its acknowledgement: the HTTP answer's status, or 200 for a Socket
// Mode ack.
func deliverAsync(t *testing.T, mode string, fake *slackfake.Server, addr, eventID string, ev slackfake.Event, retry int) <-chan int {
	t.Helper()
	body := slackfake.EventCallback(eventID, ev)
	acked := make(chan int, 1)
	if mode == slack.ModeHTTP {
		req := slackfake.EventsRequest(t, "http://"+addr+"/slack/events", body)
		if retry > 0 {
			req.Header.Set("X-Slack-Retry-Num", "1")
			req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
		}
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				acked <- 0
				return
			}
			resp.Body.Close()
			acked <- resp.StatusCode
		}()
		return acked
	}
	var opts []slackfake.PushOption
	if retry > 0 {
		opts = append(opts, slackfake.Retry(retry, "timeout"))
	}
	env := fake.PushEventsAPI(body, opts...)
	go func() {
		fake.WaitAck(t, env, e2eWait)
		acked <- http.StatusOK
	}()
	return acked
}

// waitAcked waits for an acknowledgement while the run is held in the model:
// it must come without the run's help.
func waitAcked(t *testing.T, what string, acked <-chan int) {
	t.Helper()
	select {
	case code := <-acked:
		if code != http.StatusOK {
			t.Fatalf("%s: answered %d, want 200", what, code)
		}
	case <-time.After(e2eWait):
		t.Fatalf("%s: no acknowledgement while the run is held in the model: the ack waits on the run", what)
	}
}

// TestAckDoesNotWaitForTheRun: Slack hears 200 (or the envelope's ack)
// while the run the message started is still held in the model, and the
// same event redelivered meanwhile (X-Slack-Retry-Num, a Socket Mode
// retry) is acknowledged too and starts nothing: one run, one answer.
func TestAckDoesNotWaitForTheRun(t *testing.T) {
	for _, mode := range []string{slack.ModeSocket, slack.ModeHTTP} {
		t.Run(mode, func(t *testing.T) {
			e := startE2E(t, mode)
			entered, release := blockedModel(t, e.model, "The disks are fine.")
			mention := slackfake.AppMention(e2eChan, e2eAlice, "<@U0VIGIL> how are the disks on @localhost?", e2eRoot, "")

			first := deliverAsync(t, mode, e.fake, e.a.Addr(), "EvHeld", mention, 0)
			select {
			case <-entered:
			case <-time.After(e2eWait):
				t.Fatal("the run never reached the model")
			}
			waitAcked(t, "the first delivery", first)
			waitAcked(t, "Slack's retry", deliverAsync(t, mode, e.fake, e.a.Addr(), "EvHeld", mention, 1))

			close(release)
			e.waitPost("the answer", "The disks are fine.")
			e.idle()
			if n := e.model.Count(); n != 1 {
				t.Fatalf("the model got %d requests, want 1: the retry started a run", n)
			}
			answers := 0
			for _, c := range e.fake.Posts() {
				if strings.Contains(c.Text(), "The disks are fine.") {
					answers++
				}
			}
			if answers != 1 {
				t.Fatalf("%d answers in the thread, want 1", answers)
			}
		})
	}
}

// TestRetryOnAnotherReplicaRunsOnce: two replicas (each its own Slack
// adapter in HTTP mode and its own bot) on one Redis; Slack's retry of an
// event lands on the other replica while the first one's run is held in
// the model. The shared dedup drops it there: one run across replicas.
func TestRetryOnAnotherReplicaRunsOnce(t *testing.T) {
	addr := redistest.RequireShared(t)
	var buf [6]byte
	_, _ = rand.Read(buf[:])
	prefix := "vigilslack:" + hex.EncodeToString(buf[:]) + ":"
	t.Cleanup(func() {
		c := goredis.NewClient(&goredis.Options{Addr: addr})
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		keys, err := c.Keys(ctx, prefix+"*").Result()
		if err == nil && len(keys) > 0 {
			err = c.Del(ctx, keys...).Err()
		}
		if err != nil {
			t.Errorf("delete the test's keys under %s: %v", prefix, err)
		}
	})
	fake := slackfake.New(t)
	fake.AddUser(slackfake.User{ID: e2eAlice, Name: "alice"})
	model := modeltest.New(t)
	entered, release := blockedModel(t, model, "The disks are fine.")

	replica := func() (*slack.Adapter, *testkit.Stack) {
		t.Helper()
		rs, err := redisstore.New(context.Background(), redisstore.Options{Addr: addr, KeyPrefix: prefix})
		if err != nil {
			t.Fatalf("redis store: %v", err)
		}
		t.Cleanup(func() { _ = rs.Close() })
		stores := rs.Stores()
		a, err := slack.New(slack.Config{
			Mode: slack.ModeHTTP, BotToken: slackfake.BotToken, SigningSecret: slackfake.SigningSecret,
			Listen: "127.0.0.1:0", APIURL: fake.APIURL(), Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		slack.SetPacing(a, 50*time.Millisecond)
		st2 := testkit.Start(t, testkit.Options{
			Adapter: a, Model: model, Stores: &stores,
			Channels: []policy.ChannelPolicy{{Match: "slack:" + e2eChan, Level: policy.LevelReadOnly}},
		})
		select {
		case <-a.Ready():
		case <-time.After(e2eWait):
			t.Fatal("slack adapter not ready")
		}
		deadline := time.Now().Add(e2eWait)
		for a.Addr() == "" && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		return a, st2
	}
	ra, sa := replica()
	rb, sb := replica()

	mention := slackfake.AppMention(e2eChan, e2eAlice, "<@U0VIGIL> how are the disks on @localhost?", e2eRoot, "")
	waitAcked(t, "replica A's delivery", deliverAsync(t, slack.ModeHTTP, fake, ra.Addr(), "EvTwice", mention, 0))
	select {
	case <-entered:
	case <-time.After(e2eWait):
		t.Fatal("the run never reached the model")
	}
	waitAcked(t, "the retry on replica B", deliverAsync(t, slack.ModeHTTP, fake, rb.Addr(), "EvTwice", mention, 1))
	close(release)
	fake.WaitFor(t, e2eWait, "the answer", func(calls []slackfake.Call) bool {
		for _, c := range calls {
			if c.Method == "chat.postMessage" && strings.Contains(c.Text(), "The disks are fine.") {
				return true
			}
		}
		return false
	})
	for _, st := range []*testkit.Stack{sa, sb} {
		ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
		err := st.Bot.WaitIdle(ctx)
		cancel()
		if err != nil {
			t.Fatalf("replica not idle: %v", err)
		}
	}
	// A second event in the thread is a new message: it runs, on
	// whichever replica receives it, so the dedup keys on the event.
	model.Script(modeltest.Text("Still fine."))
	waitAcked(t, "a new event on replica B", deliverAsync(t, slack.ModeHTTP, fake, rb.Addr(), "EvThen",
		slackfake.ChannelMessage(e2eChan, e2eAlice, "and now?", "1700005000.000200", e2eRoot), 0))
	fake.WaitFor(t, e2eWait, "the second answer", func(calls []slackfake.Call) bool {
		for _, c := range calls {
			if c.Method == "chat.postMessage" && strings.Contains(c.Text(), "Still fine.") {
				return true
			}
		}
		return false
	})
	if n := model.Count(); n != 2 {
		t.Fatalf("the model got %d requests, want 2 (one per event; the retry on the other replica ran nothing)", n)
	}
}
