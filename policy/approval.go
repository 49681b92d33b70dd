package policy

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/policy/redact"
)

// Approval errors. Their messages are written for the person who clicked or
// typed the decision: safe to show in chat, never naming a token.
var (
	ErrApprovalNotFound  = errors.New("no such approval")
	ErrApprovalIDInvalid = errors.New("not an approval ID")
	ErrAlreadyDecided    = errors.New("approval already decided")
	ErrApprovalExpired   = errors.New("approval expired")
	ErrWrongChannel      = errors.New("this approval belongs to another channel; decide it where it was requested")
	ErrTokenMismatch     = errors.New("this approval button is not valid; use the card's own buttons or type the approval ID")
	ErrTokenMissing      = errors.New("this approval button carries no token, so it cannot be from vigil's card; use the card's own buttons or type the approval ID")
	ErrReadOnlyChannel   = errors.New("this channel is read-only: changes cannot be approved or run here")
	ErrNotApprover       = errors.New("you are not an approver in this channel")
	ErrMayNotStop        = errors.New("only the person who asked, an operator or an approver may stop this request")
	ErrSelfApproval      = errors.New("you cannot approve your own request; ask another approver")
	ErrNotApproved       = errors.New("the call has not been approved")
	ErrBindingMismatch   = errors.New("the call differs from the one approved")
	ErrInvalidApproval   = errors.New("invalid approval request")
)

// ApprovalStatus is where an approval stands. The only ways forward are
//
//	pending → approved → executing → executed | failed
//	pending → denied | expired
//
// and each arrow is a Transition (approval_state.go): Decide,
// ClaimExecution, MarkExecuted or Settle, Expire.
//
// executing marks a call claimed for execution. A record left executing by
// a store outage or a crash is settled from what vigil recorded, never run
// again: executed when the call's result is known, failed when it is not
// (the call may have happened).
type ApprovalStatus string

const (
	ApprovalPending   ApprovalStatus = "pending"
	ApprovalApproved  ApprovalStatus = "approved"
	ApprovalDenied    ApprovalStatus = "denied"
	ApprovalExpired   ApprovalStatus = "expired"
	ApprovalExecuting ApprovalStatus = "executing"
	ApprovalExecuted  ApprovalStatus = "executed"
	ApprovalFailed    ApprovalStatus = "failed"
)

const (
	// DefaultApprovalTTL is how long an approval waits for a decision
	// (SPEC P6).
	DefaultApprovalTTL = 10 * time.Minute
	// ExecutionGrace is how long after ExpiresAt an approved call may still
	// start. It covers an approval clicked in the last seconds whose
	// execution was queued behind the thread lock, and nothing more: an
	// approval is consent to act now, not whenever a replica gets round to
	// it.
	ExecutionGrace = time.Minute

	// ApprovalIDLen is the length of an approval ID: 10 base32 characters,
	// 50 random bits. Short enough to type ("approve k3xq7m2a9p"), long
	// enough that a guess never lands on a live approval; the token, not
	// the ID, is what a button must prove.
	ApprovalIDLen = 10
	tokenBytes    = 32 // 256 bits (SPEC P6)
	// maxJSONDepth bounds nesting in CanonicalJSON so hostile input cannot
	// exhaust the stack.
	maxJSONDepth = 512
)

// idEncoding is lowercase RFC 4648 base32: no 0/1/8/9, so IDs survive being
// read aloud and retyped.
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// Approval is a pending write bound to one exact tool call (SPEC P6). It is
// plain data: the store persists it and any replica may decide or execute
// it. Only Status and the decision fields change after creation.
type Approval struct {
	// ID is public and typable; it names the approval in chat and commands.
	ID string `json:"id"`
	// Token is the 256-bit secret carried by the card's buttons. It proves
	// a click came from the card; never log it or show it as text.
	Token string `json:"token"`
	Tool  string `json:"tool"`
	// Args is the call's arguments in canonical JSON (see CanonicalJSON).
	Args json.RawMessage `json:"args"`
	// Hash is BindingHash(Tool, Args), hex.
	Hash string `json:"hash"`
	// Target, Command, Summary and Reasons are for people, redacted at
	// creation; the binding is on Tool and Args alone.
	Target  string       `json:"target,omitempty"`
	Command string       `json:"command,omitempty"`
	Summary string       `json:"summary,omitempty"`
	Risk    command.Risk `json:"risk,omitempty"`
	Reasons []string     `json:"reasons,omitempty"`
	// Details are the exact change line by line (see ChangeDetail),
	// redacted at creation like the other display fields.
	Details []ChangeDetail `json:"details,omitempty"`
	// ChangeHash is the hex SHA-256 of ChangeText(Command, Details): the
	// exact text the card shows, or attaches in full when it is too long
	// to show. The card prints it, so the approver can tell that what they
	// read is what this record holds.
	ChangeHash string `json:"change_hash,omitempty"`
	// Basis is the state of the target the change was shown against, in
	// the words of the tool that read it ("the file as read at …, sha256
	// …"); "" when the card shows the change against nothing. It is the
	// last of Details (labelled BasisLabel), so ChangeHash binds it, and
	// Binds checks that the two agree. The call runs with it (see
	// tools.Proposal.Basis) and is refused when the target no longer
	// matches: what runs is the change the approver read.
	Basis     string `json:"basis,omitempty"`
	Requester string `json:"requester"`
	// Channel is the policy key of the channel the request came from.
	Channel string `json:"channel"`
	// Thread is the thread key of the conversation, SessionKey its session.
	Thread     string `json:"thread,omitempty"`
	SessionKey string `json:"session_key,omitempty"`
	// CallID is the model's tool call ID this approval stands for.
	CallID string `json:"call_id,omitempty"`
	// CardRef is the bot's reference to the card it posted; opaque here.
	CardRef   json.RawMessage `json:"card_ref,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	ExpiresAt time.Time       `json:"expires_at"`
	Status    ApprovalStatus  `json:"status"`
	// DecidedBy and DecidedAt record the approval, denial or expiry;
	// Reason is the denier's reason (redacted).
	DecidedBy  string    `json:"decided_by,omitempty"`
	DecidedAt  time.Time `json:"decided_at,omitzero"`
	Reason     string    `json:"reason,omitempty"`
	ExecutedAt time.Time `json:"executed_at,omitzero"`
}

// ApprovalRequest is what the agent knows when a write needs approval.
type ApprovalRequest struct {
	Tool string
	// Args is the model's JSON for the call, exactly as it will be run.
	Args    json.RawMessage
	Target  string
	Command string
	Summary string
	Risk    command.Risk
	Reasons []string
	Details []ChangeDetail
	// Basis is the state of the target Details were computed against
	// (Approval.Basis); "" for none.
	Basis     string
	Requester string
	// Channel is the policy key, Thread the thread key.
	Channel    string
	Thread     string
	SessionKey string
	CallID     string
	// TTL is how long the approval waits; 0 means DefaultApprovalTTL.
	TTL time.Duration
}

// NewApproval creates a pending approval for req, with a fresh ID and token
// from crypto/rand. Display fields are redacted here so no later consumer
// (card, log, audit) can leak a secret that was in the command.
func NewApproval(req ApprovalRequest, now time.Time) (*Approval, error) {
	return newApproval(req, now, rand.Reader)
}

func newApproval(req ApprovalRequest, now time.Time, rnd io.Reader) (*Approval, error) {
	switch {
	case req.Tool == "":
		return nil, fmt.Errorf("%w: no tool", ErrInvalidApproval)
	case req.Requester == "":
		return nil, fmt.Errorf("%w: no requester", ErrInvalidApproval)
	case req.Channel == "":
		return nil, fmt.Errorf("%w: no channel", ErrInvalidApproval)
	case req.TTL < 0:
		return nil, fmt.Errorf("%w: negative TTL %s", ErrInvalidApproval, req.TTL)
	}
	args, err := canonicalArgs(req.Args)
	if err != nil {
		return nil, fmt.Errorf("%w: arguments: %w", ErrInvalidApproval, err)
	}
	ttl := req.TTL
	if ttl == 0 {
		ttl = DefaultApprovalTTL
	}
	buf := make([]byte, tokenBytes+8)
	if _, err := io.ReadFull(rnd, buf); err != nil {
		return nil, fmt.Errorf("approval randomness: %w", err)
	}
	id := idEncoding.EncodeToString(buf[tokenBytes:])[:ApprovalIDLen]
	reasons := make([]string, len(req.Reasons))
	for i, r := range req.Reasons {
		reasons[i] = redact.String(r)
	}
	if len(reasons) == 0 {
		reasons = nil
	}
	var details []ChangeDetail
	for _, d := range req.Details {
		if d.Label == BasisLabel {
			return nil, fmt.Errorf("%w: a change line is labelled %q, which only the basis may be", ErrInvalidApproval, BasisLabel)
		}
		details = append(details, ChangeDetail{Label: redact.String(d.Label), Value: redact.String(d.Value)})
	}
	if req.Basis != "" {
		// The basis goes back to the tool as written, so it must be shown
		// as written: one the redactor would change is not a basis.
		if redact.String(req.Basis) != req.Basis || strings.Contains(req.Basis, "\n") {
			return nil, fmt.Errorf("%w: the basis is not one plain line", ErrInvalidApproval)
		}
		details = append(details, ChangeDetail{Label: BasisLabel, Value: req.Basis})
	}
	// A command is redacted as a command: only literal secret values are
	// masked, never what runs (a $(…) inside a secret's value).
	shown := redact.Command(req.Command)
	return &Approval{
		ID:         id,
		Token:      base64.RawURLEncoding.EncodeToString(buf[:tokenBytes]),
		Tool:       req.Tool,
		Args:       args,
		Hash:       BindingHash(req.Tool, args),
		Target:     redact.String(req.Target),
		Command:    shown,
		Summary:    redact.String(req.Summary),
		Risk:       req.Risk,
		Reasons:    reasons,
		Details:    details,
		ChangeHash: ChangeHash(shown, details),
		Basis:      req.Basis,
		Requester:  req.Requester,
		Channel:    req.Channel,
		Thread:     req.Thread,
		SessionKey: req.SessionKey,
		CallID:     req.CallID,
		CreatedAt:  now,
		ExpiresAt:  now.Add(ttl),
		Status:     ApprovalPending,
	}, nil
}

// BasisLabel labels the change line that shows an approval's Basis.
const BasisLabel = "diff against"

// ChangeText is the whole change as an approval card shows it, and as it
// is attached when the card cannot show all of it: the command, then each
// detail as "label:" on its own line followed by the value.
func ChangeText(command string, details []ChangeDetail) string {
	var b strings.Builder
	b.WriteString(command)
	for _, d := range details {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(d.Label + ":\n" + d.Value)
	}
	return b.String()
}

// ChangeHash is the hex SHA-256 of ChangeText(command, details).
func ChangeHash(command string, details []ChangeDetail) string {
	sum := sha256.Sum256([]byte(ChangeText(command, details)))
	return hex.EncodeToString(sum[:])
}

// ParseApprovalID normalises an ID a person typed ("K3XQ7M2A9P " →
// "k3xq7m2a9p") and rejects anything that cannot be one, so junk never
// reaches a store key.
func ParseApprovalID(s string) (string, error) {
	id := strings.ToLower(strings.TrimSpace(s))
	if len(id) != ApprovalIDLen {
		return "", ErrApprovalIDInvalid
	}
	for _, c := range id {
		if !('a' <= c && c <= 'z' || '2' <= c && c <= '7') {
			return "", ErrApprovalIDInvalid
		}
	}
	return id, nil
}

// canonicalArgs is CanonicalJSON with empty arguments read as {}: models
// send "" for a call without parameters.
func canonicalArgs(raw json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("{}"), nil
	}
	return CanonicalJSON(raw)
}

// BindingHash is the hex SHA-256 of tool name, a NUL byte, and the canonical
// arguments. The NUL keeps ("ab", "c…") and ("a", "bc…") apart.
func BindingHash(tool string, canonicalArgs []byte) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(canonicalArgs)
	return hex.EncodeToString(h.Sum(nil))
}

// Binds returns nil when tool and args are exactly the approved call:
// same tool, same canonical arguments (key order and whitespace do not
// matter; values, types and fields do). Otherwise it returns an error
// wrapping ErrBindingMismatch. The stored hash is checked too, so a record
// whose Args were altered in the store does not bind anything.
func (a *Approval) Binds(tool string, args json.RawMessage) error {
	if tool != a.Tool {
		return fmt.Errorf("%w: tool %q, approved %q", ErrBindingMismatch, tool, a.Tool)
	}
	c, err := canonicalArgs(args)
	if err != nil {
		return fmt.Errorf("%w: arguments are not valid JSON", ErrBindingMismatch)
	}
	// Stores may re-encode the arguments (encoding/json escapes <, > and &
	// in a RawMessage), so the stored form is canonicalised again before it
	// is compared.
	stored, err := canonicalArgs(a.Args)
	if err != nil || a.Hash != BindingHash(a.Tool, stored) {
		return fmt.Errorf("%w: the approval record is damaged", ErrBindingMismatch)
	}
	// The text the approver was shown is bound too: a record whose
	// displayed change was altered after the card went out binds nothing.
	if a.ChangeHash != "" && a.ChangeHash != ChangeHash(a.Command, a.Details) {
		return fmt.Errorf("%w: the change shown for approval differs from the record", ErrBindingMismatch)
	}
	if !basisShown(a) {
		return fmt.Errorf("%w: the state the change was shown against differs from the record", ErrBindingMismatch)
	}
	if !bytes.Equal(c, stored) || BindingHash(tool, c) != a.Hash {
		return fmt.Errorf("%w: arguments changed", ErrBindingMismatch)
	}
	return nil
}

// basisShown reports whether a's Basis is exactly what its card showed:
// the last change line when there is one, and no line labelled as one
// otherwise.
func basisShown(a *Approval) bool {
	n := 0
	for _, d := range a.Details {
		if d.Label == BasisLabel {
			n++
		}
	}
	if a.Basis == "" {
		return n == 0
	}
	return n == 1 && a.ChangeHash != "" && a.Details[len(a.Details)-1] == ChangeDetail{Label: BasisLabel, Value: a.Basis}
}

// TokenMatches reports whether tok is this approval's token, in constant
// time. An empty token never matches.
func (a *Approval) TokenMatches(tok string) bool {
	if tok == "" || a.Token == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(tok), []byte(a.Token)) == 1
}

// Expired reports whether the approval's decision window has closed.
func (a *Approval) Expired(now time.Time) bool { return !now.Before(a.ExpiresAt) }

// LogValue keeps the token out of logs: an approval logs as its ID, tool
// and status.
func (a *Approval) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("id", a.ID),
		slog.String("tool", a.Tool),
		slog.String("status", string(a.Status)),
	)
}

// DecidedError says an approval is no longer pending, and how it ended.
// It matches ErrAlreadyDecided with errors.Is, and ErrApprovalExpired too
// when it expired.
type DecidedError struct {
	Status ApprovalStatus
	By     string
	At     time.Time
}

func (e *DecidedError) Error() string {
	at := formatDecisionTime(e.At)
	switch e.Status {
	case ApprovalApproved, ApprovalExecuting:
		return fmt.Sprintf("already approved by %s at %s", e.By, at)
	case ApprovalExecuted:
		return fmt.Sprintf("already approved by %s and executed at %s", e.By, at)
	case ApprovalFailed:
		return fmt.Sprintf("already approved by %s; its execution was interrupted, and it will not run again", e.By)
	case ApprovalDenied:
		return fmt.Sprintf("already denied by %s at %s", e.By, at)
	case ApprovalExpired:
		return fmt.Sprintf("expired at %s", at)
	default:
		return fmt.Sprintf("approval is %s", e.Status)
	}
}

func (e *DecidedError) Unwrap() []error {
	if e.Status == ApprovalExpired {
		return []error{ErrAlreadyDecided, ErrApprovalExpired}
	}
	return []error{ErrAlreadyDecided}
}

// StatusError says why a is no longer open to decisions: nil while it is
// pending, else the *DecidedError a person should see ("already approved by
// X at T"). It is the message for a lost compare-and-set.
func (a *Approval) StatusError() error {
	if a.Status == ApprovalPending {
		return nil
	}
	return newDecidedError(a)
}

func newDecidedError(a *Approval) *DecidedError {
	switch a.Status {
	case ApprovalExpired:
		return &DecidedError{Status: a.Status, At: a.ExpiresAt}
	case ApprovalExecuted:
		return &DecidedError{Status: a.Status, By: a.DecidedBy, At: a.ExecutedAt}
	default:
		return &DecidedError{Status: a.Status, By: a.DecidedBy, At: a.DecidedAt}
	}
}

// formatDecisionTime is how times appear in messages people read.
func formatDecisionTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// DecisionRequest is one person's approve or deny, with the facts needed to
// judge it. The bot fills Roles, Level and AllowSelfApproval from the
// channel's current policy, not from anything stored with the approval.
type DecisionRequest struct {
	User string
	// Token is the secret a button carried; "" for typed commands.
	Token string
	// FromButton marks a click, which must carry the token: a click
	// without one is forged (ErrTokenMissing).
	FromButton bool
	Approve    bool
	// Stop marks a denial by "stop": the run is being stopped, and its
	// pending approval withdrawn. The requester, an operator or an approver
	// may do that (MayStop); a read-only level does not prevent it, since
	// nothing runs.
	Stop bool
	// Reason explains a denial.
	Reason string
	Roles  RoleSet
	// Channel is the policy key of the channel the decision came from.
	Channel string
	// Level is the channel's control level now.
	Level ControlLevel
	// AllowSelfApproval is the channel's ChannelPolicy.AllowSelfApproval
	// (SelfApproval() gives the same answer, console included).
	AllowSelfApproval bool
}

// CheckDecision decides whether d may decide a. The order is deliberate:
// where the decision comes from, the token, the channel's level and the
// person's role are checked before anything about the approval's state is
// revealed, so a stranger learns nothing about an approval they could not
// decide. Then: still pending, not expired, and no self-approval.
//
// A click must carry the approval's token (a missing one is
// ErrTokenMissing, a wrong one ErrTokenMismatch); a typed command carries
// none, the platform's signed sender being the proof of who typed it.
//
// Passing CheckDecision is not enough to act: the caller must then move the
// record from pending with a compare-and-set, so that of two concurrent
// decisions exactly one lands.
func CheckDecision(a *Approval, d DecisionRequest, now time.Time) error {
	if a == nil {
		return ErrApprovalNotFound
	}
	if d.Channel != a.Channel {
		return ErrWrongChannel
	}
	if d.FromButton && d.Token == "" {
		return ErrTokenMissing
	}
	if (d.FromButton || d.Token != "") && !a.TokenMatches(d.Token) {
		return ErrTokenMismatch
	}
	if d.Stop {
		if d.Approve {
			return fmt.Errorf("%w: a stop cannot approve", ErrInvalidApproval)
		}
		if !MayStop(d.User, a.Requester, d.Roles) {
			return ErrMayNotStop
		}
	} else {
		if !d.Level.AllowsWrites() {
			return ErrReadOnlyChannel
		}
		if !d.Roles.Approver {
			return ErrNotApprover
		}
	}
	if a.Status != ApprovalPending {
		return newDecidedError(a)
	}
	if a.Expired(now) {
		return fmt.Errorf("%w at %s", ErrApprovalExpired, formatDecisionTime(a.ExpiresAt))
	}
	// The console has one local user and nobody else to ask: four eyes
	// cannot apply there, whatever the flag says.
	if d.Approve && d.User == a.Requester && !d.AllowSelfApproval && d.Channel != ConsoleChannel {
		return ErrSelfApproval
	}
	return nil
}

// CheckExecution is the last check immediately before an approved call
// runs: the approval is approved (or claimed for execution), the call is
// exactly the bound one, the channel still allows writes, and the approval
// is no older than ExpiresAt plus ExecutionGrace. Run nothing unless it
// returns nil.
func CheckExecution(a *Approval, tool string, args json.RawMessage, level ControlLevel, now time.Time) error {
	if a == nil {
		return ErrApprovalNotFound
	}
	switch a.Status {
	case ApprovalApproved, ApprovalExecuting:
	case ApprovalExecuted:
		return newDecidedError(a)
	default:
		return fmt.Errorf("%w (it is %s)", ErrNotApproved, a.Status)
	}
	if err := a.Binds(tool, args); err != nil {
		return err
	}
	if !level.AllowsWrites() {
		return ErrReadOnlyChannel
	}
	if deadline := a.ExpiresAt.Add(ExecutionGrace); now.After(deadline) {
		return fmt.Errorf("%w: approved but not run before %s; ask again", ErrApprovalExpired, formatDecisionTime(deadline))
	}
	return nil
}

// CanonicalJSON rewrites a JSON value in one fixed form: object keys sorted
// (by their UTF-8 bytes), no insignificant whitespace, numbers exactly as
// written, strings re-escaped the same way every time. Two documents that
// mean the same to a JSON decoder have the same canonical form, except that
// numbers are compared as written (1 and 1.0 differ): a tool may decode them
// differently, so they are different calls. Duplicate keys are an error: a
// decoder keeps one of them, and which one must not be ambiguous.
func CanonicalJSON(raw json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeCanonical(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("canonical json: trailing data after value")
	}
	var buf bytes.Buffer
	if err := writeCanonical(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// canonicalObject keeps an object's members; writeCanonical sorts them.
type canonicalObject map[string]any

func decodeCanonical(dec *json.Decoder, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, errors.New("canonical json: nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("canonical json: no value")
		}
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := canonicalObject{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("canonical json: %w", err)
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errors.New("canonical json: object key is not a string")
				}
				if _, dup := obj[k]; dup {
					return nil, fmt.Errorf("canonical json: duplicate key %q", k)
				}
				v, err := decodeCanonical(dec, depth+1)
				if err != nil {
					return nil, err
				}
				obj[k] = v
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, fmt.Errorf("canonical json: %w", err)
			}
			return obj, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeCanonical(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, fmt.Errorf("canonical json: %w", err)
			}
			return arr, nil
		default:
			return nil, fmt.Errorf("canonical json: unexpected %q", t)
		}
	default: // string, json.Number, bool, nil
		return t, nil
	}
}

func writeCanonical(buf *bytes.Buffer, v any) error {
	switch t := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if t {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case json.Number:
		buf.WriteString(string(t))
	case string:
		writeCanonicalString(buf, t)
	case []any:
		buf.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case canonicalObject:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		// Byte order of the UTF-8 keys: stable, and independent of locale.
		slices.Sort(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeCanonicalString(buf, k)
			buf.WriteByte(':')
			if err := writeCanonical(buf, t[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	default:
		return fmt.Errorf("canonical json: unexpected %T", v)
	}
	return nil
}

// writeCanonicalString writes s as a JSON string without HTML escaping, so <, > and
// & in commands stay readable.
func writeCanonicalString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	buf.Truncate(buf.Len() - 1) // Encode's newline
}

// AuditRecord builds the record of something that happened to a: actor did
// action. The caller sets Outcome where there is one.
func (a *Approval) AuditRecord(action audit.Action, actor string, at time.Time) audit.Record {
	return audit.Record{
		Time:       at,
		Actor:      actor,
		Action:     action,
		Tool:       a.Tool,
		Target:     a.Target,
		Command:    a.Command,
		Channel:    a.Channel,
		Thread:     a.Thread,
		ApprovalID: a.ID,
		Reason:     a.Reason,
	}
}
