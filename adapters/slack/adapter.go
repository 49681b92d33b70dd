// Package slack is vigil's Slack adapter: Socket Mode (default) or the
// Events API over signed HTTP, app mentions, DMs and thread replies in,
// tool traces, answers and Block Kit approval cards out.
//
// Inbound chat messages go straight to the bot, whose HandleMessage is
// quick (deduplicated and queued, no run), so Slack is answered in time;
// clicks are acknowledged first and handled after, on bounded workers. Outbound messages go through a per-channel pacer that keeps to
// about one message per second per channel, honours 429 Retry-After and
// batches queued traces of a thread into one message.
package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
	"golang.org/x/sync/errgroup"

	"github.com/vigilops/vigil/bot"
)

// Platform is the adapter's platform name; channel policy keys are
// "slack:<channel id>".
const Platform bot.Platform = "slack"

// Timeouts and bounds.
const (
	callTimeout     = 10 * time.Second
	maxCallAttempts = 3
	maxBody         = 1 << 20
	dialogTTL       = time.Hour
	dialogMax       = 10_000
	threadTTL       = 7 * 24 * time.Hour
	threadMax       = 20_000
	nameTTL         = time.Hour
	nameMax         = 5_000
	drainTimeout    = 10 * time.Second
)

// Interface guards.
var (
	_ bot.Adapter      = (*Adapter)(nil)
	_ bot.StatusSetter = (*Adapter)(nil)
	_ bot.Notifier     = (*Adapter)(nil)
	_ bot.FactSource   = (*Adapter)(nil)
	_ bot.NameSource   = (*Adapter)(nil)
)

// identity is who the bot is, learnt from auth.test at start.
type identity struct {
	userID string
	botID  string
	teamID string
}

// Adapter is the Slack platform. Create it with New and run it with Start.
type Adapter struct {
	cfg Config
	log *slog.Logger
	api *slack.Client

	started atomic.Bool
	ready   chan struct{}
	self    atomic.Pointer[identity]
	handler atomic.Pointer[handlerRef]
	addr    atomic.Value // string: the HTTP mode listen address once bound

	decisions *inbox // clicks and modal submissions
	modals    *inbox // deny dialogs, which must open within 3 s of the click

	// dialogs holds the deny clicks whose dialog was opened: the one
	// click the bot never sees (its dedup takes every other event).
	dialogs *ttlCache[struct{}]
	threads *ttlCache[struct{}] // "channel/thread_ts" of threads vigil is part of
	names   *ttlCache[string]   // user ID -> display name

	out    *outbox
	groups *groupCache
	status statusMemory
}

type handlerRef struct{ h bot.Handler }

// New checks the configuration and builds an adapter. It does no I/O.
func New(cfg Config) (*Adapter, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	api := slack.New(cfg.BotToken.Reveal(),
		slack.OptionAPIURL(cfg.APIURL),
		slack.OptionHTTPClient(cfg.HTTPClient),
		slack.OptionAppLevelToken(cfg.AppToken.Reveal()),
	)
	a := &Adapter{
		cfg:       cfg,
		log:       cfg.Logger.With("platform", "slack"),
		api:       api,
		ready:     make(chan struct{}),
		decisions: newInbox(4, 64),
		modals:    newInbox(2, 64),
		dialogs:   newTTLCache[struct{}](dialogTTL, dialogMax),
		threads:   newTTLCache[struct{}](threadTTL, threadMax),
		names:     newTTLCache[string](nameTTL, nameMax),
		groups:    newGroupCache(cfg.UsergroupTTL),
	}
	a.out = newOutbox(a)
	return a, nil
}

// Platform implements bot.Adapter.
func (a *Adapter) Platform() bot.Platform { return Platform }

// Ready is closed once Start has authenticated and inbound traffic is
// accepted.
func (a *Adapter) Ready() <-chan struct{} { return a.ready }

// Addr is the HTTP mode listen address once bound ("" before, and in
// socket mode).
func (a *Adapter) Addr() string {
	s, _ := a.addr.Load().(string)
	return s
}

// Start authenticates (auth.test), then receives events until ctx is
// cancelled: over Socket Mode, or as HTTP on Config.Listen. On the way out
// it gives queued outbound messages a few seconds to go.
func (a *Adapter) Start(ctx context.Context, h bot.Handler) error {
	if h == nil {
		return errors.New("slack: Start needs a handler")
	}
	if !a.started.CompareAndSwap(false, true) {
		return ErrStarted
	}
	actx, cancel := context.WithTimeout(ctx, callTimeout)
	auth, err := a.api.AuthTestContext(actx)
	cancel()
	if err != nil {
		return fmt.Errorf("slack: auth.test with slack.bot_token: %w", err)
	}
	a.self.Store(&identity{userID: auth.UserID, botID: auth.BotID, teamID: auth.TeamID})
	a.handler.Store(&handlerRef{h: h})
	a.log.Info("slack connected", "mode", a.cfg.Mode, "team", auth.TeamID, "bot_user", auth.UserID)

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { a.decisions.run(gctx, a.log); return nil })
	g.Go(func() error { a.modals.run(gctx, a.log); return nil })
	close(a.ready)
	g.Go(func() error {
		if a.cfg.Mode == ModeHTTP {
			return a.runHTTP(gctx)
		}
		return a.runSocket(gctx)
	})
	err = g.Wait()
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTimeout)
	defer cancel()
	if left := a.out.drain(dctx); left > 0 {
		a.log.Warn("slack: outbound messages still queued at shutdown", "queued", left)
	}
	if err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

func (a *Adapter) me() identity {
	if id := a.self.Load(); id != nil {
		return *id
	}
	return identity{}
}

func (a *Adapter) isReady() bool {
	select {
	case <-a.ready:
		return true
	default:
		return false
	}
}

func checkThread(t bot.ThreadRef) error {
	if t.Platform != Platform && t.Platform != "" {
		return fmt.Errorf("%w: %q", ErrNotSlack, t.Platform)
	}
	if t.Channel == "" || t.Thread == "" {
		return ErrNoThread
	}
	return nil
}

func threadKey(channel, ts string) string { return channel + "/" + ts }

// rememberThread marks a thread as one vigil is part of, so replies there
// address it.
func (a *Adapter) rememberThread(t bot.ThreadRef) {
	a.threads.put(threadKey(t.Channel, t.Thread), struct{}{})
}

func (a *Adapter) knowsThread(channel, ts string) bool {
	_, ok := a.threads.get(threadKey(channel, ts))
	return ok
}

// Post implements bot.Adapter. Answers, notices and errors are sent before
// Post returns, after any traces queued before them in the channel.
//
// Traces are asynchronous: Post returns once the trace is queued, with a
// MessageRef whose ID is empty, so a run is never held up by Slack's pacing
// and traces that queue up while the channel waits are batched into one
// message. A trace that finally cannot be posted is logged with an error ID
// and a short notice goes to the thread; none is dropped silently.
func (a *Adapter) Post(ctx context.Context, t bot.ThreadRef, r bot.Reply) (bot.MessageRef, error) {
	if err := checkThread(t); err != nil {
		return bot.MessageRef{}, err
	}
	t.Platform = Platform
	if r.Kind == bot.ReplyTrace && r.Trace != nil {
		tr := *r.Trace
		a.out.enqueue(ctx, &job{thread: t, trace: &tr})
		return bot.MessageRef{ThreadRef: t}, nil
	}
	if r.Kind == bot.ReplyAnswer {
		ans := renderAnswer(r.Text, r.RunID, a.cfg.MaxAnswerChars)
		j := &job{thread: t, msg: ans.msgs[0], more: ans.msgs[1:], what: "the answer"}
		if ans.attach != "" {
			j.attach = &attachment{name: "answer.md", title: "The whole answer", content: ans.attach, what: "the whole answer"}
		}
		return a.out.send(ctx, j)
	}
	what := "a message"
	if r.Kind == bot.ReplyError {
		what = "an error message"
	}
	return a.out.send(ctx, &job{thread: t, msg: renderReply(r), what: what})
}

// PostApproval implements bot.Adapter: the card goes to the thread, after
// the traces queued before it.
func (a *Adapter) PostApproval(ctx context.Context, t bot.ThreadRef, c bot.ApprovalCard) (bot.MessageRef, error) {
	if err := checkThread(t); err != nil {
		return bot.MessageRef{}, err
	}
	t.Platform = Platform
	m, err := renderApproval(c)
	if err != nil {
		return bot.MessageRef{}, fmt.Errorf("slack: render approval %s: %w", c.ID, err)
	}
	// A change too long for the card follows it as a file; the bot
	// reports a card Slack refuses itself (what is empty).
	return a.out.send(ctx, &job{thread: t, msg: m, attach: cardAttachment(c)})
}

// UpdateApproval implements bot.Adapter: chat.update rewrites the card in
// place; decided cards have no buttons.
func (a *Adapter) UpdateApproval(ctx context.Context, ref bot.MessageRef, c bot.ApprovalCard) error {
	if ref.Channel == "" || ref.ID == "" {
		return fmt.Errorf("slack: update approval %s: %w", c.ID, ErrNoThread)
	}
	m, err := renderApproval(c)
	if err != nil {
		return fmt.Errorf("slack: render approval %s: %w", c.ID, err)
	}
	err = a.call(ctx, "chat.update", func(ctx context.Context) error {
		_, _, _, err := a.api.UpdateMessageContext(ctx, ref.Channel, ref.ID, m.options()...)
		return err
	})
	if err != nil {
		return fmt.Errorf("slack: update approval %s: %w", c.ID, err)
	}
	return nil
}

var _ bot.ThreadOpener = (*Adapter)(nil)

// OpenThread implements bot.ThreadOpener: chat.postMessage without
// thread_ts, paced with the channel's other messages; the message's ts is
// the new thread.
func (a *Adapter) OpenThread(ctx context.Context, channel string, r bot.Reply) (bot.MessageRef, error) {
	if channel == "" {
		return bot.MessageRef{}, fmt.Errorf("slack: open thread: %w", ErrNoThread)
	}
	return a.out.send(ctx, &job{thread: bot.ThreadRef{Platform: Platform, Channel: channel}, msg: renderReply(r)})
}

// EditMessage implements bot.ThreadOpener with chat.update.
func (a *Adapter) EditMessage(ctx context.Context, ref bot.MessageRef, r bot.Reply) error {
	if ref.Channel == "" || ref.ID == "" {
		return fmt.Errorf("slack: edit message: %w", ErrNoThread)
	}
	m := renderReply(r)
	err := a.call(ctx, "chat.update", func(ctx context.Context) error {
		_, _, _, err := a.api.UpdateMessageContext(ctx, ref.Channel, ref.ID, m.options()...)
		return err
	})
	if err != nil {
		return fmt.Errorf("slack: edit message %s: %w", ref.ID, err)
	}
	return nil
}

// NotifyUser implements bot.Notifier with an ephemeral message in the
// thread.
func (a *Adapter) NotifyUser(ctx context.Context, t bot.ThreadRef, user, text string) error {
	if err := checkThread(t); err != nil {
		return err
	}
	if user == "" {
		return errors.New("slack: ephemeral message needs a user")
	}
	m := renderEphemeral(text)
	opts := append(m.options(), slack.MsgOptionTS(t.Thread))
	err := a.call(ctx, "chat.postEphemeral", func(ctx context.Context) error {
		_, err := a.api.PostEphemeralContext(ctx, t.Channel, user, opts...)
		return err
	})
	if err != nil {
		return fmt.Errorf("slack: ephemeral to %s: %w", user, err)
	}
	return nil
}

// statusMemory remembers where assistant.threads.setStatus was refused, so
// it is not asked again.
type statusMemory struct {
	mu       sync.Mutex
	off      bool            // refused for the whole workspace
	channels map[string]bool // refused in these channels
}

// workspaceRefusals mean the app or plan can't use assistant status at all.
var workspaceRefusals = map[string]bool{
	"missing_scope": true, "not_allowed_token_type": true, "unknown_method": true,
	"feature_not_enabled": true, "method_deprecated": true, "no_permission": true,
	"team_not_allowed": true, "not_authorized": true, "access_denied": true,
}

// transientErrors are Slack-side failures worth asking again after.
var transientErrors = map[string]bool{
	"internal_error": true, "fatal_error": true, "service_unavailable": true,
	"request_timeout": true, "ratelimited": true,
}

// SetStatus implements bot.StatusSetter with assistant.threads.setStatus
// where the workspace supports it. Refusals are remembered and skipped
// silently from then on; an empty status clears it.
func (a *Adapter) SetStatus(ctx context.Context, t bot.ThreadRef, status string) error {
	if err := checkThread(t); err != nil {
		return err
	}
	a.status.mu.Lock()
	skip := a.status.off || a.status.channels[t.Channel]
	a.status.mu.Unlock()
	if skip {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	err := a.api.SetAssistantThreadsStatusContext(cctx, slack.AssistantThreadsSetStatusParameters{
		ChannelID: t.Channel, ThreadTS: t.Thread, Status: status,
	})
	var apiErr slack.SlackErrorResponse
	if errors.As(err, &apiErr) && !transientErrors[apiErr.Err] {
		a.status.mu.Lock()
		if workspaceRefusals[apiErr.Err] {
			a.status.off = true
		} else {
			if a.status.channels == nil {
				a.status.channels = map[string]bool{}
			}
			a.status.channels[t.Channel] = true
		}
		a.status.mu.Unlock()
		a.log.Debug("assistant status not available; not asking again", "channel", t.Channel, "error", apiErr.Err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("slack: set status: %w", err)
	}
	return nil
}

// call runs one Web API call with a deadline, retrying after 429
// (honouring Retry-After) and after Slack-side 5xx errors.
func (a *Adapter) call(ctx context.Context, method string, fn func(ctx context.Context) error) error {
	var err error
	for attempt := 1; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		err = fn(cctx)
		cancel()
		wait, retry := retryDelay(err, attempt)
		if !retry || attempt >= maxCallAttempts {
			return err
		}
		a.log.Debug("slack call retried", "method", method, "attempt", attempt, "wait", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (while waiting to retry: %w)", err, ctx.Err())
		case <-t.C:
		}
	}
}

// retryDelay says whether err is worth retrying and after how long.
func retryDelay(err error, attempt int) (time.Duration, bool) {
	if err == nil {
		return 0, false
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return max(rl.RetryAfter, 100*time.Millisecond), true
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) && sc.Code >= http.StatusInternalServerError {
		return time.Duration(attempt) * 500 * time.Millisecond, true
	}
	return 0, false
}

// UserName implements bot.NameSource: the bot asks when a message's job
// starts, so users.info is never called while Slack waits for the ack.
func (a *Adapter) UserName(ctx context.Context, _ bot.ThreadRef, user string) string {
	return a.userName(ctx, user)
}

// userName looks up a display name, cached; "" when unknown.
func (a *Adapter) userName(ctx context.Context, user string) string {
	if user == "" {
		return ""
	}
	if n, ok := a.names.get(user); ok {
		return n
	}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	u, err := a.api.GetUserInfoContext(cctx, user)
	if err != nil {
		a.log.Debug("users.info failed", "user", user, "err", err)
		a.names.put(user, "")
		return ""
	}
	name := u.Profile.DisplayName
	if name == "" {
		name = u.Name
	}
	a.names.put(user, name)
	return name
}
