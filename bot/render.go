package bot

import (
	"strings"
	"time"
)

// ReplyKind says what a reply is, so each adapter can render it its own way.
type ReplyKind string

const (
	ReplyTrace  ReplyKind = "trace"  // one tool call and its outcome
	ReplyAnswer ReplyKind = "answer" // the model's final answer (Markdown)
	ReplyNotice ReplyKind = "notice" // a short status from vigil itself
	ReplyError  ReplyKind = "error"  // something failed; Text is safe to show
)

// Reply is the neutral form of everything the bot says in a thread.
type Reply struct {
	Kind ReplyKind
	// Text is Markdown for answers and plain text otherwise.
	Text string
	// Trace is set for ReplyTrace.
	Trace *Trace
	// ErrorID ties an error reply to the log line with the same ID.
	ErrorID string
	// RunID is set on an answer that ends a run: adapters that take
	// feedback (buttons, reactions) attach their controls for that run.
	RunID string
	// Links are shown with the text: link buttons on Slack, links on
	// Matrix (an alert's source, runbook and dashboards).
	Links []Link
	// Alert is set on an alert thread's first message: adapters render
	// the card their own way; Text and Links carry the same for the rest.
	Alert *AlertCard
}

// Link is a labelled http(s) URL.
type Link struct {
	Text string `json:"text"`
	URL  string `json:"url"`
}

// Outcome is how a tool call ended.
type Outcome string

const (
	OutcomeOK       Outcome = "ok"
	OutcomeBlocked  Outcome = "blocked"
	OutcomeFailed   Outcome = "failed"
	OutcomeApproval Outcome = "approval_required"
)

// Trace is one tool call as people see it. Output is already redacted and
// truncated to TraceOutputLimit; FullOutput (redacted) is set when it was
// truncated so adapters that can upload files may attach it whole.
type Trace struct {
	Tool     string
	Action   string
	Target   string
	Command  string
	Outcome  Outcome
	Code     string // error code when not OK
	Message  string // error message when not OK
	Duration time.Duration
	Output   string
	// Sandbox is how the command ran: "landlock (ABI 7, no network), bash",
	// "bwrap (network allowed), sh", "none (why), bash"; "" when the call
	// ran no command.
	Sandbox string
	// Truncated is true when Output is shorter than FullOutput.
	Truncated  bool
	FullOutput string
}

// TraceOutputLimit is how much output a trace shows inline.
const TraceOutputLimit = 1500

// ApprovalStatus is where an approval stands.
type ApprovalStatus string

const (
	ApprovalPending  ApprovalStatus = "pending"
	ApprovalApproved ApprovalStatus = "approved"
	ApprovalDenied   ApprovalStatus = "denied"
	ApprovalExpired  ApprovalStatus = "expired"
)

// ApprovalCard is what people see of a pending approval.
type ApprovalCard struct {
	ID string
	// Token travels in button values; never show it as text.
	Token   string
	Tool    string
	Target  string
	Command string // the exact command or change
	Summary string
	Risk    string
	Reasons []string
	// Details are the exact change line by line (matchers, duration,
	// comment; cluster, namespace, object, replicas) for writes that are
	// not a shell command. Every platform shows all of them.
	Details []CardDetail
	// Parts list a compound command's parts one per line ("a && b; c" →
	// "a", "&& b", "; c"), and the commands run inside substitutions;
	// nil for a single simple command.
	Parts []string
	// ChangeHash is the hex SHA-256 of FullChange(), as the approval
	// record holds it: a card that cannot show the whole change attaches
	// FullChange() and prints this hash, binding what the approver reads
	// to what runs.
	ChangeHash string
	// Approvers are who may approve, to be notified of a pending card:
	// platform user IDs and "usergroup:<id>" entries from the channel's
	// policy (the requester left out unless they may approve their own).
	Approvers []string
	Requester string
	ExpiresAt time.Time
	Status    ApprovalStatus
	DecidedBy string
	DecidedAt time.Time
	Reason    string
}

// FullChange is the whole change the card stands for, as the approval
// record binds it (policy.ChangeText): the command, then each detail as
// "label:" and its value on the lines after.
func (c ApprovalCard) FullChange() string {
	var b strings.Builder
	b.WriteString(c.Command)
	for _, d := range c.Details {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(d.Label + ":\n" + d.Value)
	}
	return b.String()
}

// CardDetail is one labelled line of a change on an approval card.
type CardDetail struct {
	Label string
	Value string
}
