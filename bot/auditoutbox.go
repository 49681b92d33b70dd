package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/policy/redact"
)

// Audit records are never lost to a store outage (SPEC P8). Each record
// goes to the audit file first, which does not depend on the store, then
// to the store's chain. A record the store cannot take waits in the
// outbox (an audit.Spool: in memory, and in a file when one is configured)
// and is retried until the store takes it. While records wait, new ones
// queue behind them, so the store receives them in the order they were
// made; the store chains each as it arrives, so the chain stays whole.
// Once the outbox is empty, approvals left "executing" by the outage are
// settled (settle.go).

const (
	// auditAppendTimeout bounds one append to the store.
	auditAppendTimeout = 5 * time.Second
	// auditBatch is how many waiting records one delivery round sends.
	auditBatch = 64
	// auditDedupWindow is how many of the chain's newest records a
	// delivery round compares against: a record whose append timed out
	// may have landed anyway, and must not be appended twice.
	auditDedupWindow = 512
	// defaultAuditRetry and maxAuditRetry bound the wait between delivery
	// attempts while the store is away; it doubles after each failed
	// retry.
	defaultAuditRetry = time.Second
	maxAuditRetry     = 30 * time.Second
)

// auditOutbox is the bot's queue of records waiting for the store.
type auditOutbox struct {
	spool *audit.Spool
	// wake nudges the delivery loop (buffered: a nudge is never lost and
	// never blocks).
	wake chan struct{}
	// done is closed when the delivery loop has returned.
	done chan struct{}
}

func newAuditOutbox(spool *audit.Spool) *auditOutbox {
	if spool == nil {
		spool = audit.NewSpool()
	}
	return &auditOutbox{spool: spool, wake: make(chan struct{}, 1)}
}

func (o *auditOutbox) poke() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// audit records r: in the audit file, then in the store's chain, or in the
// outbox until the store takes it. Failures are logged loudly; they never
// let an action through that policy refused, and they do not undo one that
// already ran.
func (b *auditor) audit(ctx context.Context, r audit.Record) {
	r.Time = b.now()
	r.Command = redact.String(r.Command)
	r.Reason = redact.String(r.Reason)
	r = audit.Prepare(r)
	if b.opt.AuditFile != nil {
		if err := b.opt.AuditFile.Write(r); err != nil {
			b.log.Error("audit file write failed", "action", r.Action, "approval", r.ApprovalID, "err", err)
		}
	}
	o := b.outbox
	if o.spool.Len() == 0 {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditAppendTimeout)
		_, err := b.opt.Stores.Audit.AppendAudit(actx, r)
		cancel()
		if err == nil {
			return
		}
		b.log.Warn("audit store unavailable; the record waits in the outbox until it returns",
			"action", r.Action, "tool", r.Tool, "approval", r.ApprovalID, "outbox", o.where(), "err", err)
	}
	if err := o.spool.Push(r); err != nil {
		b.log.Error("audit outbox: the record is kept in memory only", "action", r.Action, "approval", r.ApprovalID, "err", err)
	}
	o.poke()
}

// where names the outbox for logs.
func (o *auditOutbox) where() string {
	if p := o.spool.Path(); p != "" {
		return p
	}
	return "memory"
}

// deliverAudit sends waiting records to the store until ctx ends, retrying
// with backoff while the store is away. When ctx ends it makes one last
// attempt, then reports what still waits.
func (b *auditor) deliverAudit(ctx context.Context) {
	o := b.outbox
	defer close(o.done)
	retry := b.opt.AuditRetry
	timer := time.NewTimer(0) // records left by a previous run go at once
	defer timer.Stop()
	for {
		timed := false
		select {
		case <-ctx.Done():
			b.lastAuditDelivery(context.WithoutCancel(ctx))
			return
		case <-o.wake:
		case <-timer.C:
			timed = true
		}
		if o.spool.Len() == 0 {
			continue
		}
		n, err := b.flushAudit(ctx)
		if err != nil {
			b.log.Debug("audit store still unavailable", "waiting", o.spool.Len(), "err", err)
			// Back off on the timer's own attempts; a new record's nudge
			// tries once more without lengthening the wait.
			if timed {
				retry = min(retry*2, maxAuditRetry)
			}
			timer.Reset(retry)
			continue
		}
		retry = b.opt.AuditRetry
		if o.spool.Len() > 0 {
			timer.Reset(0)
			continue
		}
		if n > 0 {
			b.log.Info("audit store back; delivered the records that waited", "records", n)
		}
		b.settle.settleExecuting(ctx)
	}
}

// flushAudit sends waiting records, oldest first, until the outbox is
// empty or one fails. Records the chain already holds (an append that
// answered too late) are dropped instead of appended again. It returns how
// many records left the outbox.
func (b *auditor) flushAudit(ctx context.Context) (int, error) {
	o := b.outbox
	sent := 0
	for {
		batch := o.spool.Peek(auditBatch)
		if len(batch) == 0 {
			return sent, nil
		}
		rctx, cancel := context.WithTimeout(ctx, auditAppendTimeout)
		recent, err := b.opt.Stores.Audit.RecentAudit(rctx, auditDedupWindow)
		cancel()
		if err != nil {
			return sent, fmt.Errorf("read the chain: %w", err)
		}
		done := 0
		var failed error
		for _, r := range batch {
			if !inChain(recent, r) {
				actx, cancel := context.WithTimeout(ctx, auditAppendTimeout)
				_, err := b.opt.Stores.Audit.AppendAudit(actx, r)
				cancel()
				if err != nil {
					failed = err
					break
				}
			}
			done++
		}
		if err := o.spool.Drop(done); err != nil {
			b.log.Error("audit outbox: could not rewrite the file; delivered records may be sent again", "err", err)
		}
		sent += done
		if failed != nil {
			return sent, failed
		}
	}
}

func inChain(recent []audit.Record, r audit.Record) bool {
	for i := len(recent) - 1; i >= 0; i-- {
		if audit.SameRecord(recent[i], r) {
			return true
		}
	}
	return false
}

// waiting is how many records wait in the outbox.
func (b *auditor) waiting() int { return b.outbox.spool.Len() }

// lastAuditDelivery is the shutdown's final attempt, bounded by its own
// timeout under ctx (which no longer ends: the delivery loop's did); what
// still waits is reported, with where it is kept.
func (b *auditor) lastAuditDelivery(ctx context.Context) {
	o := b.outbox
	if o.spool.Len() == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 2*auditAppendTimeout)
	defer cancel()
	_, _ = b.flushAudit(ctx)
	n := o.spool.Len()
	switch {
	case n == 0:
	case o.spool.Path() != "":
		b.log.Warn("audit records still wait for the store; they are sent when vigil starts again", "records", n, "outbox", o.spool.Path())
	default:
		b.log.Error("audit records never reached the store and are lost from its chain (set audit.file or state_dir to keep them across a restart)",
			"records", n)
	}
}
