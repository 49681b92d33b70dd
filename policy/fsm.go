package policy

import (
	"fmt"
	"strconv"
)

// State is where a session stands in the discover → read → write → verify
// workflow (SPEC A4).
type State string

const (
	// StateResolving: nothing has been resolved yet. Resolves and reads may
	// run (reads still need resolved context, checked by ResolvedContext);
	// writes may not.
	StateResolving State = "RESOLVING"
	// StateReading: the session knows what it is looking at. Everything may
	// run.
	StateReading State = "READING"
	// StateWriting is defined for completeness and never entered by a
	// transition: a successful write goes straight to VERIFYING. A persisted
	// FSM found in WRITING (a replica stopped mid-write) is treated like
	// VERIFYING, because the write's outcome is unknown and must be checked.
	StateWriting State = "WRITING"
	// StateVerifying: a write succeeded and nobody has looked at its effect.
	// Resolves and reads may run; further writes and the final answer wait
	// for the first successful read.
	StateVerifying State = "VERIFYING"
)

// Valid reports whether s is one of the four states.
func (s State) Valid() bool {
	switch s {
	case StateResolving, StateReading, StateWriting, StateVerifying:
		return true
	}
	return false
}

// UnmarshalText rejects unknown states, so a corrupted or hand-edited run
// cannot resume in a state the gates do not understand. The empty string is
// accepted and means RESOLVING (the zero FSM).
func (s *State) UnmarshalText(b []byte) error {
	v := State(b)
	if v != "" && !v.Valid() {
		return fmt.Errorf("policy: unknown FSM state %q", v)
	}
	*s = v
	return nil
}

// maxPendingRecoveries bounds the recoveries an FSM remembers, so a run that
// keeps hitting blocks cannot grow its persisted state without limit.
const maxPendingRecoveries = 16

// PendingRecovery is a block the model may recover from, remembered so that a
// later success of the same tool can be counted as a recovery (SPEC D3
// auto-recovery metrics).
type PendingRecovery struct {
	ID   string `json:"id"`
	Code Code   `json:"code"`
	Tool string `json:"tool"`
	// Attempts counts how often this tool was blocked with this code before
	// it succeeded.
	Attempts int `json:"attempts"`
}

// FSM is one session's workflow state machine (SPEC A4). The agent asks it
// before every tool call (gate 1, CanExecute) and before every final answer
// (gate 2, CanFinalAnswer), and tells it about every successful call
// (OnToolSuccess).
//
// Fields are exported so that the FSM persists with a run and resumes on
// another replica; it must round-trip through encoding/json unchanged. An FSM
// is not safe for concurrent use: the agent drives it from the sequential
// pre-check and post-processing phases of a turn (SPEC A5).
type FSM struct {
	State State `json:"state"`
	// ReadAfterWrite records that a read succeeded after the last write.
	// Verification completes on that read, which also clears the flag, so
	// the flag never survives into the next write cycle.
	ReadAfterWrite bool `json:"read_after_write"`
	// LastWriteTool and LastWriteTarget describe the most recent successful
	// write, for the verification prompt. They stay set after verification.
	LastWriteTool   string `json:"last_write_tool"`
	LastWriteTarget string `json:"last_write_target"`
	// WroteThisEpisode is set by any successful write and cleared only by
	// Reset; the agent uses it to make the turn after a verified write
	// text-only (SPEC A3).
	WroteThisEpisode bool `json:"wrote_this_episode"`
	// PendingRecoveries is nil when empty (never an empty slice), so that the
	// JSON form round-trips exactly.
	PendingRecoveries []PendingRecovery `json:"pending_recoveries"`
	// RecoverySeq numbers recovery IDs. It survives Reset so IDs never repeat
	// within a session.
	RecoverySeq int `json:"recovery_seq"`
}

// NewFSM returns an FSM at the start of a session: RESOLVING.
func NewFSM() *FSM {
	return &FSM{State: StateResolving}
}

// current is the state the gates act on. The zero FSM is RESOLVING.
func (f *FSM) current() State {
	if f.State == "" {
		return StateResolving
	}
	return f.State
}

// awaitingVerification reports whether a write's effect is yet unchecked.
// Besides VERIFYING that is WRITING and any state set by hand that the FSM
// does not know: the gates fail closed until a read brings it to READING.
func (f *FSM) awaitingVerification() bool {
	s := f.current()
	return s != StateResolving && s != StateReading
}

// CanExecute is gate 1: it returns nil when a call of kind k may run now, or
// an FSM_BLOCKED Block saying what to do instead. A kind it does not know is
// treated as a write.
func (f *FSM) CanExecute(k Kind) *Block {
	if normalKind(k) != KindWrite {
		return nil
	}
	switch s := f.current(); s {
	case StateReading:
		return nil
	case StateResolving:
		return newGuardBlock(CodeFSMBlocked,
			"nothing has been resolved in this session yet, so there is nothing a write could safely target",
			"use query or discover to resolve the target first, then retry the write",
			true, map[string]any{"state": string(s), "kind": string(KindWrite)})
	default: // VERIFYING, WRITING, or a state written by hand
		return newGuardBlock(CodeFSMBlocked,
			"the previous write has not been verified yet",
			"use a read tool to check the result first, then retry",
			false, map[string]any{
				"state":             string(s),
				"kind":              string(KindWrite),
				"last_write_tool":   f.LastWriteTool,
				"last_write_target": f.LastWriteTarget,
			})
	}
}

// CanFinalAnswer is gate 2: a final answer is refused while a write's effect
// is unchecked, so the model cannot report a change it never looked at.
func (f *FSM) CanFinalAnswer() *Block {
	if !f.awaitingVerification() {
		return nil
	}
	return newGuardBlock(CodeFSMBlocked,
		"a write was made and its result has not been checked",
		f.VerificationPrompt(),
		false, map[string]any{
			"state":             string(f.current()),
			"last_write_tool":   f.LastWriteTool,
			"last_write_target": f.LastWriteTarget,
		})
}

// OnToolSuccess advances the FSM after a call of kind k on target succeeded.
// Failed or blocked calls must not be reported: only an observed success
// proves a resolve happened or a write needs checking.
//
// A read that succeeds while a write awaits verification completes that
// verification here and now. Waiting for the final answer to do it would keep
// the session in VERIFYING across later reads and block the next write
// (write → read → write must work).
func (f *FSM) OnToolSuccess(k Kind, tool, target string) {
	switch normalKind(k) {
	case KindResolve:
		if f.current() == StateResolving {
			f.State = StateReading
		}
		// A resolve does not look at a write's effect: VERIFYING stays.
	case KindRead:
		if f.awaitingVerification() {
			f.ReadAfterWrite = true
			f.CompleteVerification()
			return
		}
		if f.current() == StateResolving {
			f.State = StateReading
		}
	default:
		f.State = StateVerifying
		f.ReadAfterWrite = false
		f.LastWriteTool = tool
		f.LastWriteTarget = target
		f.WroteThisEpisode = true
	}
}

// CompleteVerification moves a verified session from VERIFYING (or WRITING)
// back to READING and clears ReadAfterWrite so the next write starts a clean
// cycle. It does nothing unless a read after the write was recorded: ending
// verification without a read would defeat gate 2. OnToolSuccess already
// calls it; calling it again is harmless.
func (f *FSM) CompleteVerification() {
	if !f.ReadAfterWrite {
		return
	}
	if f.awaitingVerification() {
		f.State = StateReading
	}
	f.ReadAfterWrite = false
}

// Reset returns the FSM to the start of a session. Callers reset the
// resolved context with it (SessionState.Reset): an FSM in READING over an
// empty context would let writes through the FSM that strict resolution
// would then have to catch alone.
func (f *FSM) Reset() {
	*f = FSM{State: StateResolving, RecoverySeq: f.RecoverySeq}
}

// TrackPendingRecovery remembers that tool was blocked with code and returns
// the recovery's ID. Blocking the same tool with the same code again counts
// another attempt on the same recovery. Only the newest recoveries are kept.
func (f *FSM) TrackPendingRecovery(code Code, tool string) string {
	for i := range f.PendingRecoveries {
		pr := &f.PendingRecoveries[i]
		if pr.Code == code && pr.Tool == tool {
			pr.Attempts++
			return pr.ID
		}
	}
	f.RecoverySeq++
	id := "rcv-" + strconv.Itoa(f.RecoverySeq)
	f.PendingRecoveries = append(f.PendingRecoveries, PendingRecovery{
		ID: id, Code: code, Tool: tool, Attempts: 1,
	})
	if n := len(f.PendingRecoveries); n > maxPendingRecoveries {
		f.PendingRecoveries = append([]PendingRecovery(nil), f.PendingRecoveries[n-maxPendingRecoveries:]...)
	}
	return id
}

// CheckRecoverySuccess is called after tool succeeded. It removes every
// recovery pending for that tool (the success ends them all) and returns the
// oldest of them, or nil when the tool had none.
func (f *FSM) CheckRecoverySuccess(tool string) *PendingRecovery {
	var found *PendingRecovery
	kept := f.PendingRecoveries[:0]
	for _, pr := range f.PendingRecoveries {
		if pr.Tool != tool {
			kept = append(kept, pr)
			continue
		}
		if found == nil {
			found = &pr
		}
	}
	if len(kept) == 0 {
		kept = nil
	}
	f.PendingRecoveries = kept
	return found
}

// VerificationPrompt is the message the agent injects when gate 2 refuses a
// final answer (SPEC A4). It names the last write's target (or, lacking one,
// its tool) and is empty when no verification is pending.
func (f *FSM) VerificationPrompt() string {
	if !f.awaitingVerification() {
		return ""
	}
	what := f.LastWriteTarget
	if what == "" {
		what = f.LastWriteTool
	}
	if what == "" {
		what = "the result of the last write"
	}
	return "verification required: read or check " + what + " before answering"
}

// normalKind maps anything that is not a known kind to write, so that a
// missing or misspelt classification can only make the FSM stricter.
func normalKind(k Kind) Kind {
	switch k {
	case KindResolve, KindRead:
		return k
	}
	return KindWrite
}

// newGuardBlock builds a Block for a session guard. The hint and the
// auto-recovery flag are repeated in Details under the keys the tool envelope
// promises the model (SPEC T1: details.recovery_hint, details.auto_recoverable).
func newGuardBlock(code Code, msg, hint string, auto bool, details map[string]any) *Block {
	if details == nil {
		details = make(map[string]any, 2)
	}
	details["recovery_hint"] = hint
	details["auto_recoverable"] = auto
	return &Block{
		Code:            code,
		Message:         msg,
		RecoveryHint:    hint,
		AutoRecoverable: auto,
		Details:         details,
	}
}
