package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// SessionState is the per-session policy state that persists with a run: the
// workflow FSM and the resolved context. The two are one unit because each
// assumes the other — READING means something was resolved — so they are
// saved, restored and reset together.
type SessionState struct {
	FSM     *FSM             `json:"fsm"`
	Context *ResolvedContext `json:"context"`
}

// NewSessionState returns the state of a session that has done nothing yet.
func NewSessionState() *SessionState {
	return &SessionState{FSM: NewFSM(), Context: NewResolvedContext()}
}

// Reset returns the session to its start: the FSM to RESOLVING and the
// context emptied, in one step. Resetting only the FSM would leave resources
// a fresh session never discovered; resetting only the context would leave an
// FSM in READING that lets writes past gate 1 with nothing resolved.
func (s *SessionState) Reset() {
	s.ensure()
	s.FSM.Reset()
	s.Context.Reset()
}

// UnmarshalJSON restores a saved state. A part missing from the saved form
// (null, or absent in a run saved before it existed) comes back fresh rather
// than nil: a fresh FSM and an empty context are the strictest state there
// is, so a damaged record fails closed instead of crashing a gate.
func (s *SessionState) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	type plain SessionState // drops this method, avoiding recursion
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("policy: session state: %w", err)
	}
	*s = SessionState(p)
	s.ensure()
	return nil
}

// ensure replaces missing parts with fresh ones.
func (s *SessionState) ensure() {
	if s.FSM == nil {
		s.FSM = NewFSM()
	}
	if s.Context == nil {
		s.Context = NewResolvedContext()
	}
}
