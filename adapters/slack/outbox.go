package slack

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/vigilops/vigil/bot"
)

// Outbound pacing: Slack allows about one chat.postMessage per second per
// channel, with short bursts.
const (
	defaultInterval   = time.Second
	maxSendAttempts   = 5
	laneSweepAbove    = 256
	laneIdleForgotten = time.Minute
)

// job is one outbound message waiting for its channel's turn.
type job struct {
	thread bot.ThreadRef
	// trace is set for traces, which may share a message with other traces
	// of the same thread; msg is the rendered message otherwise, and more
	// the messages that continue it (a long answer), posted right after.
	trace *bot.Trace
	msg   message
	more  []message
	// attach is a file posted after the message(s): the whole of what
	// they could not show.
	attach *attachment
	// what names the message for a notice if Slack refuses it ("the
	// answer"); "" means the caller reports the failure itself.
	what string
	// done receives the result; nil for fire-and-forget traces.
	done     chan result
	attempts int
}

// attachment is a text file posted in the thread after a message.
type attachment struct {
	name, title, content string
	// what names it in a notice if the upload fails.
	what string
}

type result struct {
	ref bot.MessageRef
	err error
}

// lane is one channel's queue. One goroutine at a time drains it.
type lane struct {
	queue   []*job
	running bool
	next    time.Time // earliest next send: pacing and Retry-After
}

// outbox paces chat.postMessage per channel, keeps each channel's messages
// in order, retries after 429 (re-batching what queued meanwhile) and
// batches a thread's queued traces into one message.
type outbox struct {
	a           *Adapter
	interval    time.Duration
	maxAttempts int

	mu      sync.Mutex
	lanes   map[string]*lane
	pending int
	changed chan struct{}
}

func newOutbox(a *Adapter) *outbox {
	return &outbox{a: a, interval: defaultInterval, maxAttempts: maxSendAttempts,
		lanes: map[string]*lane{}, changed: make(chan struct{})}
}

// enqueue queues a job and makes sure its lane is being drained. The lane
// worker runs on a context detached from the caller's cancellation: a
// queued message is delivered even if the run that produced it ends.
func (o *outbox) enqueue(ctx context.Context, j *job) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.lanes) > laneSweepAbove {
		o.sweepLocked(time.Now())
	}
	l, ok := o.lanes[j.thread.Channel]
	if !ok {
		l = &lane{}
		o.lanes[j.thread.Channel] = l
	}
	l.queue = append(l.queue, j)
	o.pending++
	o.notifyLocked()
	if !l.running {
		l.running = true
		go o.run(context.WithoutCancel(ctx), l)
	}
}

// send queues a job and waits for its result.
func (o *outbox) send(ctx context.Context, j *job) (bot.MessageRef, error) {
	j.done = make(chan result, 1)
	o.enqueue(ctx, j)
	select {
	case r := <-j.done:
		return r.ref, r.err
	case <-ctx.Done():
		return bot.MessageRef{}, fmt.Errorf("slack: gave up waiting for the message to be posted (it stays queued): %w", ctx.Err())
	}
}

func (o *outbox) sweepLocked(now time.Time) {
	for ch, l := range o.lanes {
		if !l.running && len(l.queue) == 0 && now.Sub(l.next) > laneIdleForgotten {
			delete(o.lanes, ch)
		}
	}
}

func (o *outbox) notifyLocked() {
	close(o.changed)
	o.changed = make(chan struct{})
}

// drain waits until nothing is queued or ctx ends; it returns how many
// messages were still queued.
func (o *outbox) drain(ctx context.Context) int {
	for {
		o.mu.Lock()
		n, ch := o.pending, o.changed
		o.mu.Unlock()
		if n == 0 {
			return 0
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return n
		}
	}
}

// run drains one lane: wait for the lane's turn, take the next message (a
// batch of traces where possible), post it, repeat.
func (o *outbox) run(ctx context.Context, l *lane) {
	defer func() {
		if p := recover(); p != nil {
			id := newErrorID()
			o.a.log.Error("slack: panic in the outbound queue", "error_id", id, "panic", p, "stack", string(debug.Stack()))
			o.mu.Lock()
			l.running = len(l.queue) > 0
			o.mu.Unlock()
			if l.running {
				go o.run(ctx, l)
			}
		}
	}()
	for {
		o.mu.Lock()
		if len(l.queue) == 0 {
			l.running = false
			o.mu.Unlock()
			return
		}
		wait := time.Until(l.next)
		o.mu.Unlock()
		if wait > 0 {
			time.Sleep(wait)
		}

		o.mu.Lock()
		batch, rest := takeBatch(l.queue)
		l.queue = rest
		o.mu.Unlock()

		ref, err := o.deliver(ctx, batch)
		attempts := 0
		for _, j := range batch {
			j.attempts++
			attempts = max(attempts, j.attempts)
		}
		if delay, retry := retryDelay(err, attempts); retry && attempts < o.maxAttempts {
			o.a.log.Debug("slack post retried", "channel", batch[0].thread.Channel, "wait", delay, "attempt", attempts, "err", err)
			o.mu.Lock()
			l.queue = append(append([]*job(nil), batch...), l.queue...)
			l.next = time.Now().Add(max(delay, o.interval))
			o.mu.Unlock()
			continue
		}
		o.finish(ctx, batch, ref, err)
		o.mu.Lock()
		l.next = time.Now().Add(o.interval)
		o.pending -= len(batch)
		o.notifyLocked()
		o.mu.Unlock()
	}
}

// takeBatch takes the head of a lane's queue. A trace at the head takes
// along the traces queued after it for the same thread, up to the first
// other message of that thread and within Block Kit's limits; messages of
// other threads keep their places.
func takeBatch(q []*job) (batch, rest []*job) {
	head := q[0]
	batch = []*job{head}
	if head.trace == nil {
		return batch, q[1:]
	}
	blocks, chars := traceCost(*head.trace)
	closed := false
	for _, j := range q[1:] {
		if closed || j.thread != head.thread {
			rest = append(rest, j)
			continue
		}
		if j.trace == nil {
			closed = true
			rest = append(rest, j)
			continue
		}
		b, c := traceCost(*j.trace)
		if len(batch) >= maxBatchTraces || blocks+1+b > maxBlocks || chars+c > maxBatchChars {
			closed = true
			rest = append(rest, j)
			continue
		}
		batch = append(batch, j)
		blocks += 1 + b
		chars += c
	}
	return batch, rest
}

// deliver posts one message (or batch of traces) in its thread, then
// attaches the full output of truncated traces.
func (o *outbox) deliver(ctx context.Context, batch []*job) (ref bot.MessageRef, err error) {
	defer func() {
		if p := recover(); p != nil {
			id := newErrorID()
			o.a.log.Error("slack: panic while posting", "error_id", id, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("slack: internal error (error ID %s)", id)
		}
	}()
	t := batch[0].thread
	m := batch[0].msg
	var traces []bot.Trace
	if batch[0].trace != nil {
		for _, j := range batch {
			traces = append(traces, *j.trace)
		}
		m = renderTraces(traces)
	}
	opts := m.options()
	if t.Thread != "" {
		opts = append(opts, slack.MsgOptionTS(t.Thread))
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	_, ts, err := o.a.api.PostMessageContext(cctx, t.Channel, opts...)
	cancel()
	if err != nil {
		return bot.MessageRef{}, err
	}
	if t.Thread == "" {
		// A new top-level message (OpenThread): its ts is the thread.
		t.Thread = ts
	}
	o.a.rememberThread(t)
	ref = bot.MessageRef{ThreadRef: t, ID: ts}
	// The rest of a long answer follows at once, in order; a refusal
	// stops it with a notice saying how much is missing.
	head := batch[0]
	for k, more := range head.more {
		time.Sleep(o.interval)
		mopts := append(more.options(), slack.MsgOptionTS(t.Thread))
		err := o.a.call(ctx, "chat.postMessage", func(ctx context.Context) error {
			_, _, err := o.a.api.PostMessageContext(ctx, t.Channel, mopts...)
			return err
		})
		if err != nil {
			id := newErrorID()
			o.a.log.Error("slack: part of a long message not posted", "error_id", id, "thread", t.Key(),
				"part", k+2, "parts", len(head.more)+1, "err", err)
			time.Sleep(o.interval)
			o.postDirect(ctx, t, renderError(fmt.Sprintf("Slack refused part %d of %d of %s (%s); the parts after it are missing.",
				k+2, len(head.more)+1, orText(head.what, "this message"), slackReason(err)), id), id)
			break
		}
	}
	if head.attach != nil {
		time.Sleep(o.interval)
		o.upload(ctx, t, *head.attach)
	}
	for _, tr := range traces {
		if tr.Truncated && tr.FullOutput != "" {
			time.Sleep(o.interval)
			o.upload(ctx, t, traceAttachment(tr))
		}
	}
	return ref, nil
}

// traceAttachment is a truncated trace's full output as a file.
func traceAttachment(tr bot.Trace) attachment {
	title := "Full output of " + traceTitle(tr)
	if tr.Target != "" {
		title += " on " + tr.Target
	}
	return attachment{
		name:    strings.NewReplacer("/", "-", " ", "-", ":", "-").Replace(traceTitle(tr)) + "-output.txt",
		title:   title,
		content: tr.FullOutput,
		what:    "the full output of " + traceTitle(tr),
	}
}

// upload attaches a text file in the thread (files.uploadV2). If that
// fails the thread is told, with an error ID that is in the log too.
func (o *outbox) upload(ctx context.Context, t bot.ThreadRef, f attachment) {
	err := o.a.call(ctx, "files.upload", func(ctx context.Context) error {
		_, err := o.a.api.UploadFileContext(ctx, slack.UploadFileParameters{
			Content:         f.content,
			FileSize:        len(f.content),
			Filename:        f.name,
			Title:           f.title,
			SnippetType:     "text",
			Channel:         t.Channel,
			ThreadTimestamp: t.Thread,
		})
		return err
	})
	if err == nil {
		return
	}
	id := newErrorID()
	o.a.log.Error("slack: file not attached", "error_id", id, "thread", t.Key(), "file", f.name, "err", err)
	time.Sleep(o.interval)
	notice := renderError(fmt.Sprintf("%s could not be attached (%d characters, %s).",
		capitalise(f.what), len(f.content), slackReason(err)), id)
	o.postDirect(ctx, t, notice, id)
}

// slackReason is the short, safe form of a Slack error for people: the
// API's error code ("invalid_blocks", "msg_too_long"), or "no answer".
func slackReason(err error) string {
	var apiErr slack.SlackErrorResponse
	if errors.As(err, &apiErr) && apiErr.Err != "" {
		return "Slack said " + apiErr.Err
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		return fmt.Sprintf("HTTP %d", sc.Code)
	}
	return "Slack did not answer"
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// finish hands results to waiting callers. A trace that could not be
// posted is never dropped silently: it is logged with an error ID and the
// thread gets a short notice.
func (o *outbox) finish(ctx context.Context, batch []*job, ref bot.MessageRef, err error) {
	for _, j := range batch {
		if j.done != nil {
			j.done <- result{ref: ref, err: err}
		}
	}
	if err == nil {
		return
	}
	if batch[0].trace == nil {
		// A message Slack refused: never silent. The thread hears it with
		// an error ID, unless the caller reports it itself.
		if batch[0].what == "" || batch[0].thread.Thread == "" {
			return
		}
		id := newErrorID()
		o.a.log.Error("slack: message not posted", "error_id", id, "thread", batch[0].thread.Key(),
			"what", batch[0].what, "attempts", batch[0].attempts, "err", err)
		time.Sleep(o.interval)
		o.postDirect(ctx, batch[0].thread, renderError(fmt.Sprintf("Slack refused %s (%s), so it is not shown here.",
			batch[0].what, slackReason(err)), id), id)
		return
	}
	id := newErrorID()
	var tools []string
	for _, j := range batch {
		tools = append(tools, traceTitle(*j.trace))
	}
	o.a.log.Error("slack: tool trace not posted", "error_id", id, "thread", batch[0].thread.Key(),
		"tools", strings.Join(tools, ","), "attempts", batch[0].attempts, "err", err)
	time.Sleep(o.interval)
	notice := renderError(fmt.Sprintf("%d tool trace(s) could not be posted to Slack (%s).", len(batch), strings.Join(tools, ", ")), id)
	o.postDirect(ctx, batch[0].thread, notice, id)
}

// postDirect makes one best-effort post from inside a lane worker.
func (o *outbox) postDirect(ctx context.Context, t bot.ThreadRef, m message, errorID string) {
	opts := append(m.options(), slack.MsgOptionTS(t.Thread))
	err := o.a.call(ctx, "chat.postMessage", func(ctx context.Context) error {
		_, _, err := o.a.api.PostMessageContext(ctx, t.Channel, opts...)
		return err
	})
	if err != nil {
		o.a.log.Error("slack: could not post the failure notice either", "error_id", errorID, "thread", t.Key(), "err", err)
	}
}
