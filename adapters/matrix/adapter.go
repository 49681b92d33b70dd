// Package matrix is vigil's Matrix chat adapter, built on mautrix.
//
// It logs in with an access token or a password, syncs with a narrow filter,
// joins allowed rooms when invited, and turns room messages into
// bot.Messages (a conversation is an m.thread; @name words are resource
// mentions). Replies are HTML with plain-text bodies; approval cards are
// answered by reacting ✅/❌ or by typing !approve <id> / !deny <id> <reason>,
// and are edited in place (m.replace) once decided. Room power levels are
// offered to the bot as user facts (bot.FactSource); typing notifications
// implement bot.StatusSetter.
package matrix

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/vigilops/vigil/bot"
)

// Platform is the adapter's platform name in bot.ThreadRef.
const Platform bot.Platform = "matrix"

// Timeouts for the adapter's own requests when the caller sets none.
const (
	callTimeout  = 60 * time.Second
	eventTimeout = 30 * time.Second
	typingFor    = 30 * time.Second
	reasonTTL    = 15 * time.Minute
	cacheSize    = 4096
)

// Interface guards.
var (
	_ bot.Adapter      = (*Adapter)(nil)
	_ bot.StatusSetter = (*Adapter)(nil)
	_ bot.FactSource   = (*Adapter)(nil)
)

// cryptoEngine is what the adapter needs from mautrix's crypto helper.
type cryptoEngine interface {
	Decrypt(ctx context.Context, evt *event.Event) (*event.Event, error)
	Close() error
}

// Adapter is the Matrix chat adapter. Create it with New and run it with
// Start; Post, PostApproval, UpdateApproval, SetStatus and UserFacts are
// safe for concurrent use once Start has logged in.
type Adapter struct {
	cfg       Config
	log       *slog.Logger
	client    *mautrix.Client
	syncer    *syncer
	state     stateDir
	store     *syncStore
	threshold int
	allowed   map[id.RoomID]bool

	startOnce sync.Once
	loggedIn  chan struct{} // closed once the client is authenticated
	ready     chan struct{} // closed after the first sync was processed
	readyOnce sync.Once

	mu        sync.Mutex
	me        identity
	startedAt time.Time
	handler   bot.Handler
	crypto    cryptoEngine
	power     map[id.RoomID]*event.PowerLevelsEventContent
	powerTS   map[id.RoomID]int64                // origin_server_ts of what power holds
	members   map[id.RoomID]map[id.UserID]string // joined user → display name
	joinedAt  map[id.RoomID]time.Time
	threads   *bounded[threadKey, bool]       // thread root → bot takes part
	last      *bounded[threadKey, id.EventID] // latest event seen in a thread
	cards     *bounded[id.EventID, cardRef]   // card event → approval
	reasons   map[reasonKey]pendingReason     // ❌ waiting for a reason
}

type threadKey struct {
	Room id.RoomID
	Root id.EventID
}

// cardRef is what an event of the bot's is: an approval card (ApprovalID)
// or a rateable answer (RunID), and the thread it is in.
type cardRef struct {
	ApprovalID string
	RunID      string
	Root       id.EventID
}

type reasonKey struct {
	Room id.RoomID
	Root id.EventID
	User id.UserID
}

type pendingReason struct {
	ApprovalID string
	Expires    time.Time
}

// New validates cfg and prepares a client. It does no network I/O: Start
// logs in and syncs.
func New(cfg Config) (*Adapter, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.E2EE {
		if err := e2eeSupported(); err != nil {
			return nil, err
		}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	threshold := cfg.ApproverPowerLevel
	if threshold == 0 {
		threshold = DefaultApproverPowerLevel
	}
	client, err := mautrix.NewClient(cfg.Homeserver, id.UserID(cfg.UserID), cfg.AccessToken.Reveal())
	if err != nil {
		return nil, fmt.Errorf("matrix.homeserver %q: %w", cfg.Homeserver, err)
	}
	// Rate limits are retried by withRateLimit, which honours the server's
	// retry_after_ms; mautrix itself does not retry.
	client.DefaultHTTPRetries = 0
	client.IgnoreRateLimit = true
	client.Client = &http.Client{Timeout: 2 * time.Minute}
	client.UserAgent = "vigil (mautrix-go)"

	state := stateDir{dir: cfg.StateDir}
	a := &Adapter{
		cfg:       cfg,
		log:       log,
		client:    client,
		state:     state,
		store:     newSyncStore(state),
		threshold: threshold,
		allowed:   map[id.RoomID]bool{},
		loggedIn:  make(chan struct{}),
		ready:     make(chan struct{}),
		power:     map[id.RoomID]*event.PowerLevelsEventContent{},
		powerTS:   map[id.RoomID]int64{},
		members:   map[id.RoomID]map[id.UserID]string{},
		joinedAt:  map[id.RoomID]time.Time{},
		threads:   newBounded[threadKey, bool](cacheSize),
		last:      newBounded[threadKey, id.EventID](cacheSize),
		cards:     newBounded[id.EventID, cardRef](cacheSize),
		reasons:   map[reasonKey]pendingReason{},
		me:        identity{ID: id.UserID(cfg.UserID)},
	}
	for _, r := range cfg.Rooms {
		a.allowed[id.RoomID(r)] = true
	}
	client.Store = a.store
	a.syncer = newSyncer(a)
	client.Syncer = a.syncer
	return a, nil
}

// Platform is "matrix".
func (a *Adapter) Platform() bot.Platform { return Platform }

// Ready is closed once the adapter has logged in and processed its first
// sync: from then on, new messages are delivered (a readiness signal).
func (a *Adapter) Ready() <-chan struct{} { return a.ready }

// Start logs in, then syncs until ctx is cancelled, delivering messages and
// approval decisions to h. It returns nil when ctx ends and an error when
// login fails or the homeserver rejects the credentials. Start runs once.
func (a *Adapter) Start(ctx context.Context, h bot.Handler) error {
	if h == nil {
		return errors.New("matrix: Start needs a bot.Handler")
	}
	first := false
	a.startOnce.Do(func() { first = true })
	if !first {
		return errors.New("matrix: Start called twice")
	}
	if err := a.state.ensure(); err != nil {
		return err
	}
	a.mu.Lock()
	a.startedAt = time.Now()
	a.handler = h
	a.mu.Unlock()

	loginCtx, cancel := context.WithTimeout(ctx, callTimeout)
	err := a.login(loginCtx)
	cancel()
	if err != nil {
		return err
	}
	if a.cfg.E2EE {
		ce, err := a.setupCrypto(ctx)
		if err != nil {
			return err
		}
		a.mu.Lock()
		a.crypto = ce
		a.mu.Unlock()
		defer func() {
			if err := ce.Close(); err != nil {
				a.log.Warn("matrix: close crypto store", "err", err)
			}
		}()
	}
	a.loadJoinedPowerLevels(ctx)
	close(a.loggedIn)
	a.log.Info("matrix: logged in", "user", a.client.UserID, "device", a.client.DeviceID,
		"e2ee", a.cfg.E2EE, "rooms", len(a.allowed))
	return a.syncLoop(ctx)
}

// login authenticates with the access token (checked with whoami) or the
// password (reusing the device ID kept in the state dir).
func (a *Adapter) login(ctx context.Context) error {
	var saved session
	if err := a.state.load(sessionFile, &saved); err != nil {
		return fmt.Errorf("matrix.state_dir: %w", err)
	}
	if saved.UserID != "" && saved.UserID != id.UserID(a.cfg.UserID) {
		saved = session{} // state dir of another account: start a new device
	}
	if a.cfg.AccessToken != "" {
		var who *mautrix.RespWhoami
		err := withRateLimit(ctx, a.log, "whoami", func(ctx context.Context) (err error) {
			who, err = a.client.Whoami(ctx)
			return err
		})
		if err != nil {
			return fmt.Errorf("matrix: check matrix.access_token with %s: %w", a.cfg.Homeserver, err)
		}
		if who.UserID != id.UserID(a.cfg.UserID) {
			return fmt.Errorf("matrix: matrix.access_token belongs to %s, not matrix.user_id %s", who.UserID, a.cfg.UserID)
		}
		a.client.DeviceID = who.DeviceID
	} else {
		deviceID := id.DeviceID(a.cfg.DeviceID)
		if deviceID == "" {
			deviceID = saved.DeviceID
		}
		req := &mautrix.ReqLogin{
			Type:                     mautrix.AuthTypePassword,
			Identifier:               mautrix.UserIdentifier{Type: mautrix.IdentifierTypeUser, User: a.cfg.UserID},
			Password:                 a.cfg.Password.Reveal(),
			DeviceID:                 deviceID,
			InitialDeviceDisplayName: "vigil",
			StoreCredentials:         true,
		}
		err := withRateLimit(ctx, a.log, "login", func(ctx context.Context) error {
			_, err := a.client.Login(ctx, req)
			return err
		})
		if err != nil {
			return fmt.Errorf("matrix: password login as %s failed (check matrix.user_id and matrix.password): %w", a.cfg.UserID, err)
		}
	}
	if err := a.state.save(sessionFile, session{UserID: a.client.UserID, DeviceID: a.client.DeviceID}); err != nil {
		return fmt.Errorf("matrix.state_dir: %w", err)
	}
	name := a.client.UserID.Localpart()
	if resp, err := a.client.GetOwnDisplayName(ctx); err == nil && resp.DisplayName != "" {
		name = resp.DisplayName
	} else if err != nil {
		a.log.Warn("matrix: cannot read own display name", "err", err)
	}
	a.mu.Lock()
	a.me = identity{ID: a.client.UserID, DisplayName: name}
	a.mu.Unlock()
	return nil
}

// syncLoop runs mautrix's sync until ctx ends, backing off on errors. A
// rejected access token ends it with an error.
func (a *Adapter) syncLoop(ctx context.Context) error {
	backoff := time.Second
	for {
		err := a.client.SyncWithContext(ctx)
		if ctx.Err() != nil {
			a.client.StopSync()
			return nil
		}
		if errors.Is(err, mautrix.MUnknownToken) || errors.Is(err, mautrix.MMissingToken) {
			return fmt.Errorf("matrix: the homeserver rejected the credentials (matrix.access_token / matrix.password): %w", err)
		}
		a.log.Warn("matrix: sync stopped, restarting", "err", err, "backoff", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

// waitLoggedIn blocks until Start has logged in (or ctx ends).
func (a *Adapter) waitLoggedIn(ctx context.Context) error {
	select {
	case <-a.loggedIn:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrNotStarted, ctx.Err())
	}
}

// callCtx adds the default deadline when the caller set none.
func callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, callTimeout)
}

// send sends one room event with a fixed transaction ID, so retries after
// a rate limit are idempotent.
func (a *Adapter) send(ctx context.Context, room id.RoomID, typ event.Type, content any) (id.EventID, error) {
	txn := "vigil-" + randomID()
	var resp *mautrix.RespSendEvent
	err := withRateLimit(ctx, a.log, "send", func(ctx context.Context) (err error) {
		resp, err = a.client.SendMessageEvent(ctx, room, typ, content, mautrix.ReqSendEvent{TransactionID: txn})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("matrix: send %s to %s: %w", typ.Type, room, err)
	}
	return resp.EventID, nil
}

// Post sends a reply in the thread (m.thread with the reply fallback). A
// truncated trace with its full output also gets the output as an m.file;
// a long answer goes out as several events (renderAnswer), and past the
// cap the whole answer follows as an m.file. An event the homeserver
// refuses is reported in the thread with an error ID, never dropped
// silently.
func (a *Adapter) Post(ctx context.Context, t bot.ThreadRef, r bot.Reply) (bot.MessageRef, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	if err := a.waitLoggedIn(ctx); err != nil {
		return bot.MessageRef{}, err
	}
	room, root := id.RoomID(t.Channel), id.EventID(t.Thread)
	if r.Kind == bot.ReplyAnswer {
		return a.postAnswer(ctx, t, r)
	}
	content := renderReply(r)
	content.RelatesTo = threadRelation(root, a.lastIn(room, root))
	evtID, err := a.send(ctx, room, event.EventMessage, content)
	if err != nil {
		a.refused(ctx, room, root, "a message", err)
		return bot.MessageRef{}, err
	}
	a.noteThread(room, root, evtID)
	ref := bot.MessageRef{ThreadRef: t, ID: string(evtID)}
	if r.Kind == bot.ReplyTrace && r.Trace != nil && r.Trace.Truncated && r.Trace.FullOutput != "" {
		name := r.Trace.Tool
		if r.Trace.Action != "" {
			name += "-" + r.Trace.Action
		}
		if r.Trace.Target != "" {
			name += "-" + r.Trace.Target
		}
		a.attachOrSay(ctx, room, root, fileSafe(name)+"-output.txt", r.Trace.FullOutput, "the full output of "+name)
	}
	return ref, nil
}

// postAnswer sends an answer's events in order; the last carries the run
// ID for feedback.
func (a *Adapter) postAnswer(ctx context.Context, t bot.ThreadRef, r bot.Reply) (bot.MessageRef, error) {
	room, root := id.RoomID(t.Channel), id.EventID(t.Thread)
	ans := renderAnswer(r.Text, r.RunID, a.cfg.MaxAnswerChars)
	var first bot.MessageRef
	for i, c := range ans.events {
		c.RelatesTo = threadRelation(root, a.lastIn(room, root))
		var payload any = c
		last := i == len(ans.events)-1
		if last && r.RunID != "" {
			withRun, err := answerContent(c, r.RunID)
			if err != nil {
				return bot.MessageRef{}, err
			}
			payload = withRun
		}
		evtID, err := a.send(ctx, room, event.EventMessage, payload)
		if err != nil {
			what := "the answer"
			if len(ans.events) > 1 {
				what = fmt.Sprintf("part %d of %d of the answer (the parts after it are missing too)", i+1, len(ans.events))
			}
			a.refused(ctx, room, root, what, err)
			return first, err
		}
		a.noteThread(room, root, evtID)
		if last && r.RunID != "" {
			a.cards.put(evtID, cardRef{RunID: r.RunID, Root: root})
		}
		if i == 0 {
			first = bot.MessageRef{ThreadRef: t, ID: string(evtID)}
		}
	}
	if ans.attach != "" {
		a.attachOrSay(ctx, room, root, "answer.md", ans.attach, "the whole answer")
	}
	return first, nil
}

// refused tells the thread that the homeserver refused an event, with an
// error ID that is in the log with the cause.
func (a *Adapter) refused(ctx context.Context, room id.RoomID, root id.EventID, what string, err error) {
	if ctx.Err() != nil || root == "" {
		return // stopping, or nowhere to say it
	}
	errID := randomID()
	a.log.Error("matrix: event not posted", "error_id", errID, "room", room, "thread", root, "what", what, "err", err)
	a.reply(ctx, room, root, renderError(fmt.Sprintf("The homeserver refused %s (%s), so it is not shown here.", what, matrixReason(err)), errID))
}

// matrixReason is the short, safe form of a homeserver error for people:
// its errcode ("M_TOO_LARGE"), or the HTTP status.
func matrixReason(err error) string {
	var httpErr mautrix.HTTPError
	if errors.As(err, &httpErr) {
		if httpErr.RespError != nil && httpErr.RespError.ErrCode != "" {
			return httpErr.RespError.ErrCode
		}
		if httpErr.Response != nil {
			return fmt.Sprintf("HTTP %d", httpErr.Response.StatusCode)
		}
	}
	return "no answer from the homeserver"
}

// attachOrSay attaches content as a file in the thread; if that fails the
// thread is told, with an error ID.
func (a *Adapter) attachOrSay(ctx context.Context, room id.RoomID, root id.EventID, name, content, what string) {
	if err := a.attach(ctx, room, root, name, content); err != nil {
		errID := randomID()
		a.log.Error("matrix: file not attached", "error_id", errID, "room", room, "thread", root, "file", name, "err", err)
		a.reply(ctx, room, root, renderError(fmt.Sprintf("%s could not be attached (%d characters, %s).",
			capitalise(what), len(content), matrixReason(err)), errID))
	}
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// attach uploads content and posts it as an m.file in the thread.
func (a *Adapter) attach(ctx context.Context, room id.RoomID, root id.EventID, name, content string) error {
	data := []byte(content)
	var up *mautrix.RespMediaUpload
	err := withRateLimit(ctx, a.log, "upload", func(ctx context.Context) (err error) {
		up, err = a.client.UploadBytesWithName(ctx, data, "text/plain; charset=utf-8", name)
		return err
	})
	if err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	fc := fileContent(name, up.ContentURI.CUString(), len(data), "text/plain")
	fc.RelatesTo = threadRelation(root, a.lastIn(room, root))
	evtID, err := a.send(ctx, room, event.EventMessage, fc)
	if err != nil {
		return err
	}
	a.noteThread(room, root, evtID)
	return nil
}

// PostApproval sends an approval card in the thread. The card carries its
// approval ID in a custom field, so a reaction can be mapped back to it
// after a restart; the bot pre-reacts ✅ and ❌ so people can click them.
// The card mentions the room's approvers (the channel's listed ones and
// members at or above the approver power level), so they are notified. A
// change too long for the card follows as an m.file.
func (a *Adapter) PostApproval(ctx context.Context, t bot.ThreadRef, c bot.ApprovalCard) (bot.MessageRef, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	if err := a.waitLoggedIn(ctx); err != nil {
		return bot.MessageRef{}, err
	}
	room, root := id.RoomID(t.Channel), id.EventID(t.Thread)
	content, err := cardContent(c, a.approversToNotify(ctx, room, c), threadRelation(root, a.lastIn(room, root)))
	if err != nil {
		return bot.MessageRef{}, err
	}
	evtID, err := a.send(ctx, room, event.EventMessage, content)
	if err != nil {
		return bot.MessageRef{}, err
	}
	a.noteThread(room, root, evtID)
	a.cards.put(evtID, cardRef{ApprovalID: c.ID, Root: root})
	for _, key := range []string{reactApprove, reactDeny} {
		if _, err := a.send(ctx, room, event.EventReaction, reaction(evtID, key)); err != nil {
			a.log.Warn("matrix: pre-react on approval card", "room", room, "approval", c.ID, "err", err)
		}
	}
	if cardAttached(c) {
		a.attachOrSay(ctx, room, root, cardFileName(c), c.FullChange(), "the full change of approval "+c.ID)
	}
	return bot.MessageRef{ThreadRef: t, ID: string(evtID)}, nil
}

// maxNotified bounds how many approvers one card mentions.
const maxNotified = 20

// approversToNotify are the people a pending card mentions: the channel's
// listed approvers that are Matrix users, and room members whose power
// level reaches the approver threshold; never the bot, never the
// requester.
func (a *Adapter) approversToNotify(ctx context.Context, room id.RoomID, c bot.ApprovalCard) []id.UserID {
	me := a.self().ID
	seen := map[id.UserID]bool{me: true, id.UserID(c.Requester): true}
	var out []id.UserID
	add := func(u id.UserID) {
		if !seen[u] && len(out) < maxNotified {
			seen[u] = true
			out = append(out, u)
		}
	}
	for _, u := range c.Approvers {
		if _, _, err := id.UserID(u).Parse(); err == nil && strings.HasPrefix(u, "@") {
			add(id.UserID(u))
		}
	}
	pl, err := a.powerLevels(ctx, room)
	if err != nil {
		a.log.Warn("matrix: approvers to notify", "room", room, "err", err)
		return out
	}
	members := a.roomMembers(ctx, room)
	var users []id.UserID
	for u := range pl.Users {
		users = append(users, u)
	}
	slices.Sort(users)
	for _, u := range users {
		if _, joined := members[u]; joined && pl.GetUserLevel(u) >= a.threshold {
			add(u)
		}
	}
	return out
}

func reaction(target id.EventID, key string) *event.ReactionEventContent {
	return &event.ReactionEventContent{RelatesTo: event.RelatesTo{Type: event.RelAnnotation, EventID: target, Key: key}}
}

var _ bot.ThreadOpener = (*Adapter)(nil)

// OpenThread implements bot.ThreadOpener: a room message with no
// relation, whose event ID is the root of the new m.thread.
func (a *Adapter) OpenThread(ctx context.Context, channel string, r bot.Reply) (bot.MessageRef, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	if err := a.waitLoggedIn(ctx); err != nil {
		return bot.MessageRef{}, err
	}
	room := id.RoomID(channel)
	if room == "" {
		return bot.MessageRef{}, errors.New("matrix: OpenThread needs a room ID")
	}
	evtID, err := a.send(ctx, room, event.EventMessage, renderWithLinks(r))
	if err != nil {
		return bot.MessageRef{}, err
	}
	a.noteThread(room, evtID, evtID)
	t := bot.ThreadRef{Platform: Platform, Channel: channel, Thread: string(evtID)}
	return bot.MessageRef{ThreadRef: t, ID: string(evtID)}, nil
}

// EditMessage implements bot.ThreadOpener with an m.replace edit.
func (a *Adapter) EditMessage(ctx context.Context, ref bot.MessageRef, r bot.Reply) error {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	if err := a.waitLoggedIn(ctx); err != nil {
		return err
	}
	if ref.ID == "" || ref.Channel == "" {
		return errors.New("matrix: EditMessage needs the message's room and event ID")
	}
	newContent := renderWithLinks(r)
	edit := renderWithLinks(r)
	edit.Body = "* " + edit.Body
	edit.FormattedBody = "* " + edit.FormattedBody
	edit.NewContent = newContent
	edit.RelatesTo = &event.RelatesTo{Type: event.RelReplace, EventID: id.EventID(ref.ID)}
	_, err := a.send(ctx, id.RoomID(ref.Channel), event.EventMessage, edit)
	return err
}

// UpdateApproval edits the card in place (m.replace) to show its status.
func (a *Adapter) UpdateApproval(ctx context.Context, ref bot.MessageRef, c bot.ApprovalCard) error {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	if err := a.waitLoggedIn(ctx); err != nil {
		return err
	}
	if ref.ID == "" {
		return errors.New("matrix: UpdateApproval needs the card's event ID")
	}
	content, err := editContent(id.EventID(ref.ID), c)
	if err != nil {
		return err
	}
	if _, err := a.send(ctx, id.RoomID(ref.Channel), event.EventMessage, content); err != nil {
		return err
	}
	if c.Status != "" && c.Status != bot.ApprovalPending {
		a.forgetReasons(c.ID)
	}
	return nil
}

// SetStatus shows the bot as typing in the room while status is non-empty
// (Matrix typing is per room, not per thread).
func (a *Adapter) SetStatus(ctx context.Context, t bot.ThreadRef, status string) error {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	if err := a.waitLoggedIn(ctx); err != nil {
		return err
	}
	typing := status != ""
	return withRateLimit(ctx, a.log, "typing", func(ctx context.Context) error {
		_, err := a.client.UserTyping(ctx, id.RoomID(t.Channel), typing, typingFor)
		if err != nil {
			return fmt.Errorf("matrix: typing in %s: %w", t.Channel, err)
		}
		return nil
	})
}

// UserFacts reports the user's power level in the room and whether it
// reaches the approver threshold (Config.ApproverPowerLevel).
func (a *Adapter) UserFacts(ctx context.Context, t bot.ThreadRef, user string) (bot.UserFacts, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	if err := a.waitLoggedIn(ctx); err != nil {
		return bot.UserFacts{}, err
	}
	pl, err := a.powerLevels(ctx, id.RoomID(t.Channel))
	if err != nil {
		return bot.UserFacts{}, err
	}
	level := pl.GetUserLevel(id.UserID(user))
	return bot.UserFacts{PowerLevel: &level, IsApprover: level >= a.threshold,
		ApproverSource: fmt.Sprintf("room members with power level %d or more", a.threshold)}, nil
}

// powerLevels returns the room's power levels, kept current from sync and
// fetched from room state when not yet known.
func (a *Adapter) powerLevels(ctx context.Context, room id.RoomID) (*event.PowerLevelsEventContent, error) {
	a.mu.Lock()
	pl := a.power[room]
	a.mu.Unlock()
	if pl != nil {
		return pl, nil
	}
	if err := a.loadPowerLevels(ctx, room); err != nil {
		return nil, err
	}
	a.mu.Lock()
	pl = a.power[room]
	a.mu.Unlock()
	return pl, nil
}

// noteThread records that the bot takes part in a thread and its latest
// event.
func (a *Adapter) noteThread(room id.RoomID, root, latest id.EventID) {
	if root == "" {
		return
	}
	k := threadKey{room, root}
	a.threads.put(k, true)
	if latest != "" {
		a.last.put(k, latest)
	}
}

func (a *Adapter) lastIn(room id.RoomID, root id.EventID) id.EventID {
	if root == "" {
		return ""
	}
	v, _ := a.last.get(threadKey{room, root})
	return v
}

func (a *Adapter) forgetReasons(approvalID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, p := range a.reasons {
		if p.ApprovalID == approvalID {
			delete(a.reasons, k)
		}
	}
}

// safely runs one inbound handler, recovering a panic into a log line with
// an error ID so one bad event cannot stop the sync loop.
func (a *Adapter) safely(what string, evt *event.Event, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			a.log.Error("matrix: handler panic", "error_id", randomID(), "handler", what,
				"room", evt.RoomID, "event", evt.ID, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	fn()
}

func randomID() string {
	b := make([]byte, 8)
	if _, err := io.ReadFull(rand.Reader, b); err != nil {
		return fmt.Sprintf("%x", time.Now().UnixNano())
	}
	return hex.EncodeToString(b)
}

func fileSafe(s string) string {
	out := []rune{}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			out = append(out, r)
		default:
			out = append(out, '_')
		}
	}
	if len(out) > 80 {
		out = out[:80]
	}
	return string(out)
}
