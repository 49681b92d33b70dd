package bot

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/tools"
)

// runtime is what every feature handler works through: the per-thread
// queue (enqueue, work), one lock helper (lockThread, keepLock), session
// load and save, the run environment (runEnv, newSink), one way to start
// a run (startRun) and to finish one (afterRun), and replies (say, tell).
// Handlers own the rest; they reach each other only through the small
// interfaces below.
type runtime struct {
	opt      Options
	log      *slog.Logger
	now      func() time.Time
	clock    Clock
	sem      chan struct{}
	adapters map[Platform]Adapter

	mu      sync.Mutex
	threads map[string]*thread
	idle    *sync.Cond
	// active counts jobs queued or running (and investigations waiting
	// for a slot); running those running.
	active  int
	running int
	load    load
	// closed is set once Run's context has ended: every job in progress
	// was cancelled then (shutdown), and jobs started later begin
	// cancelled.
	closed bool

	// approvals creates the approval a run stopped at (afterRun).
	approvals approvalRequester
	// audits chains audit records.
	audits auditWriter
}

// approvalRequester creates an approval and posts its card.
type approvalRequester interface {
	requestApproval(ctx context.Context, t ThreadRef, s *agent.Session, need *agent.ApprovalNeeded) error
}

// auditWriter chains an audit record, keeping it until the store takes it.
type auditWriter interface {
	audit(ctx context.Context, r audit.Record)
}

// pendingAbandoner ends a run waiting on an approval at a person's "stop".
type pendingAbandoner interface {
	abandonPending(ctx context.Context, t ThreadRef, s *agent.Session, user string, roles policy.RoleSet, cp policy.ChannelPolicy)
}

// runbookResumer carries out a decided runbook draft, which no run waits on.
type runbookResumer interface {
	resumeRunbook(ctx context.Context, t ThreadRef, rj *resumeJob)
}

// approvalCards is the approval machinery a draft runbook's approval and a
// settlement share with a run's approvals.
type approvalCards interface {
	rememberCard(ctx context.Context, id string, posted MessageRef)
	claimExecution(ctx context.Context, t ThreadRef, id string, p tools.Proposal, args string, cp policy.ChannelPolicy) error
	updateCard(ctx context.Context, a *policy.Approval)
}

// auditBacklog says how many audit records still wait for the store.
type auditBacklog interface {
	waiting() int
}

// executingSettler closes approvals left executing by a run that stopped.
type executingSettler interface {
	settleExecuting(ctx context.Context)
}

// The feature handlers. Each does its work on threads through the runtime.
type (
	// conversation answers people's messages (thread.go, prefetch.go).
	conversation struct {
		*runtime
		pending pendingAbandoner
	}
	// approvals asks for, decides, resumes and expires approvals
	// (approvals.go).
	approvals struct {
		*runtime
		runbooks runbookResumer
	}
	// feedbacks records ratings of answers and drafts runbooks from them
	// (feedback.go).
	feedbacks struct {
		*runtime
		cards approvalCards
	}
	// settler closes approvals whose run stopped mid-execution (settle.go).
	settler struct {
		*runtime
		cards   approvalCards
		backlog auditBacklog
	}
	// alerts turns alert notifications into threads and investigations
	// (alerts.go): sem bounds investigations in progress, scheduled holds
	// the groups whose investigation this replica has scheduled (under
	// the runtime's mu).
	alerts struct {
		*runtime
		sem       chan struct{}
		scheduled map[string]bool
	}
	// auditor chains audit records through an outbox (auditoutbox.go).
	auditor struct {
		*runtime
		outbox *auditOutbox
		settle executingSettler
	}
)
